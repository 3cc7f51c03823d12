// TierStats and TierCounters: per-tier statistics.
//
// TierStats is report::TierStats (strata/report/node_tiers.h), the plain value the node
// reports: a snapshot of one tier's capacity, occupancy and event counts; a tier fills all
// of it but `pages` (the engine's).
//
// TierCounters holds the event counts. A tier owns one and exposes it through
// Tier::counters(); the node engine bumps it when it hits, misses, evicts, promotes or
// demotes (the tier itself cannot tell a hit from a miss: it never sees keys).
// Thread-safe: every method may be called concurrently; counts use relaxed atomics, so
// a Snapshot() is a set of individually exact counts, not one atomic cut across them.
#pragma once

#include <atomic>
#include <cstdint>

#include "strata/report/node_tiers.h"

namespace strata::tiering {

// The stats of one tier are the reported type itself (strata/report/node_tiers.h).
using report::TierStats;

class TierCounters {
 public:
  TierCounters() = default;
  TierCounters(const TierCounters&) = delete;
  TierCounters& operator=(const TierCounters&) = delete;

  void RecordHit(uint64_t n = 1) { hits_.fetch_add(n, std::memory_order_relaxed); }
  void RecordMiss(uint64_t n = 1) { misses_.fetch_add(n, std::memory_order_relaxed); }
  void RecordEviction(uint64_t n = 1) { evictions_.fetch_add(n, std::memory_order_relaxed); }
  void RecordPromotion(uint64_t n = 1) { promotions_.fetch_add(n, std::memory_order_relaxed); }
  void RecordDemotion(uint64_t n = 1) { demotions_.fetch_add(n, std::memory_order_relaxed); }

  // Returns the event counts; the capacity/occupancy fields are left 0 for the tier to
  // fill in.
  TierStats Snapshot() const {
    TierStats s;
    s.hits = hits_.load(std::memory_order_relaxed);
    s.misses = misses_.load(std::memory_order_relaxed);
    s.evictions = evictions_.load(std::memory_order_relaxed);
    s.promotions = promotions_.load(std::memory_order_relaxed);
    s.demotions = demotions_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> promotions_{0};
  std::atomic<uint64_t> demotions_{0};
};

}  // namespace strata::tiering
