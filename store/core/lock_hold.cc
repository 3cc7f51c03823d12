#include "strata/store/core/lock_hold.h"

#include <algorithm>
#include <bit>

namespace strata::store::core {
namespace {

uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

// Bucket i holds [2^(i-1), 2^i) ns; bucket 0 holds 0.
int BucketOf(uint64_t nanos) {
  return std::min<int>(std::bit_width(nanos), LockHoldHistogram::kBuckets - 1);
}

}  // namespace

void LockHoldHistogram::Record(int64_t nanos) {
  const uint64_t n = nanos < 0 ? 0 : static_cast<uint64_t>(nanos);
  buckets_[BucketOf(n)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(n, std::memory_order_relaxed);
  uint64_t max = max_nanos_.load(std::memory_order_relaxed);
  while (n > max && !max_nanos_.compare_exchange_weak(max, n, std::memory_order_relaxed)) {
  }
}

double LockHoldHistogram::QuantileUs(double q) const {
  std::array<uint64_t, kBuckets> counts;
  uint64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) total += counts[i] = Load(buckets_[i]);
  if (total == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(total);
  double below = 0;
  for (int i = 0; i < kBuckets; ++i) {
    if (counts[i] == 0) continue;
    if (below + counts[i] >= rank) {
      const double lo = i == 0 ? 0.0 : static_cast<double>(uint64_t{1} << (i - 1));
      const double hi = static_cast<double>(uint64_t{1} << i);
      const double nanos = lo + (hi - lo) * ((rank - below) / counts[i]);
      // Never past the largest hold seen.
      return std::min(nanos, static_cast<double>(Load(max_nanos_))) / 1e3;
    }
    below += counts[i];
  }
  return static_cast<double>(Load(max_nanos_)) / 1e3;
}

LockHoldStats LockHoldHistogram::Snapshot() const {
  LockHoldStats stats;
  stats.count = Load(count_);
  if (stats.count == 0) return stats;
  stats.mean_us = static_cast<double>(Load(sum_nanos_)) / stats.count / 1e3;
  stats.p50_us = QuantileUs(0.5);
  stats.p99_us = QuantileUs(0.99);
  stats.max_us = static_cast<double>(Load(max_nanos_)) / 1e3;
  return stats;
}

}  // namespace strata::store::core
