// LookupStats: what the node knows of its lookups. Counts each Match's pages by lookup
// phase and by the tier that answered them, and feeds the query's pages to the live
// miss-ratio curve (tiering::mrc::ShardsMrc), from which Fill plans each tier's hit ratio
// at other capacities (tiering::mrc::PlanTiers).
//
// Ownership: a NodeEngine owns one. It holds only counters and the curve estimator; it
// knows nothing of the index or the blob table (Record is given the Match's answer).
//
// Thread safety: every method may be called from any thread at once, with no lock held:
// the counters are relaxed atomics and the estimator has its own lock. NodeEngine calls
// Record after it has dropped the index lock (a sampled lookup hashes every page of the
// query) and Fill outside it too (the curve is computed from the estimator's state). A
// Fill during Records sees each counter exactly, not one cut across them.
//
// Errors: none.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/types/span.h"

#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/tiering/mrc/shards_mrc.h"
#include "strata/tiering/mrc/tier_plan.h"

namespace strata::store::core {

class LookupStats {
 public:
  // mrc_sampled_keys: keys the curve estimator tracks; 0: no curve (Record skips the page
  // hashing). curve_points: points per tier curve in Fill. REQUIRES: curve_points > 0.
  LookupStats(uint32_t mrc_sampled_keys, uint32_t curve_points);
  LookupStats(const LookupStats&) = delete;
  LookupStats& operator=(const LookupStats&) = delete;

  // One Match of `tokens` in `ns` (namespace hash h0) answered by `reply`: counts its
  // whole pages under `phase` (inferred from the answer when kUnspecified: no readable
  // page hit is prefill, all but at most the last is decode, else midfill) and samples
  // its pages into the curve.
  void Record(const radix::PrefixHash& h0, const radix::Namespace& ns,
              absl::Span<const radix::TokenId> tokens, LookupPhase phase, const MatchResult& reply);

  // Fills tiers->engine.matches, matched_pages, queried_pages, lookups and, once a page was
  // sampled, mrc, curves and token_bytes_per_kv_byte. The tier capacities the plans use
  // are read from tiers->dram, ssd and text, which the caller fills first.
  void Fill(NodeTiers* tiers) const;

 private:
  struct AtomicLookupCounts {
    std::atomic<uint64_t> lookups{0};
    std::atomic<uint64_t> queried_pages{0};
    std::atomic<uint64_t> dram_hit_pages{0};
    std::atomic<uint64_t> ssd_hit_pages{0};
    std::atomic<uint64_t> text_hit_pages{0};
    std::atomic<uint64_t> miss_pages{0};
  };

  void Count(LookupPhase phase, uint32_t queried_pages, const MatchResult& reply);
  // Feeds the query's pages to mrc_ (page prefix keys, KV bytes per page).
  void Sample(const radix::PrefixHash& h0, const radix::Namespace& ns,
              absl::Span<const radix::TokenId> tokens);

  const uint32_t mrc_sampled_keys_;
  const uint32_t curve_points_;
  std::atomic<uint64_t> matches_{0};
  std::atomic<uint64_t> matched_pages_{0};
  std::atomic<uint64_t> queried_pages_{0};
  std::array<AtomicLookupCounts, kLookupPhases> lookups_;
  tiering::mrc::ShardsMrc mrc_;               // thread-safe itself
  std::atomic<uint64_t> mrc_kv_bytes_{0};     // KV bytes of pages fed to mrc_
  std::atomic<uint64_t> mrc_token_bytes_{0};  // their token bytes
};

}  // namespace strata::store::core
