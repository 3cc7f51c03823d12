#include "strata/base/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace strata::base {
namespace {

// The finite bounds in nanoseconds, for an integer search on the hot path.
constexpr std::array<int64_t, kLatencyBucketBoundsSeconds.size()> BoundsNanos() {
  std::array<int64_t, kLatencyBucketBoundsSeconds.size()> nanos{};
  for (size_t i = 0; i < nanos.size(); ++i) {
    // Every bound is a whole number of microseconds; round to absorb binary fractions.
    nanos[i] = static_cast<int64_t>(kLatencyBucketBoundsSeconds[i] * 1e6 + 0.5) * 1000;
  }
  return nanos;
}
constexpr std::array<int64_t, kLatencyBucketBoundsSeconds.size()> kBoundsNanos = BoundsNanos();

}  // namespace

void LatencyHistogram::Record(absl::Duration duration) {
  int64_t nanos = absl::ToInt64Nanoseconds(duration);
  if (nanos < 0) nanos = 0;
  // The first bound >= nanos: a duration equal to a bound falls in that bound's bucket
  // (Prometheus' `le`).
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(kBoundsNanos.begin(), kBoundsNanos.end(), nanos) - kBoundsNanos.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(nanos), std::memory_order_relaxed);
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  HistogramSnapshot out;
  out.upper_bounds_seconds.assign(kLatencyBucketBoundsSeconds.begin(),
                                  kLatencyBucketBoundsSeconds.end());
  out.counts.resize(kBuckets);
  for (size_t i = 0; i < kBuckets; ++i) {
    out.counts[i] = buckets_[i].load(std::memory_order_relaxed);
    out.count += out.counts[i];
  }
  out.sum_seconds = static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
  return out;
}

double EstimateQuantile(const HistogramSnapshot& snapshot, double q) {
  if (snapshot.count == 0 || snapshot.counts.empty()) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(snapshot.count);
  uint64_t below = 0;  // durations in the buckets before i
  for (size_t i = 0; i < snapshot.counts.size(); ++i) {
    const uint64_t in_bucket = snapshot.counts[i];
    if (in_bucket > 0 && static_cast<double>(below + in_bucket) >= rank) {
      if (i >= snapshot.upper_bounds_seconds.size()) {
        return snapshot.upper_bounds_seconds.empty() ? 0.0 : snapshot.upper_bounds_seconds.back();
      }
      const double lower = i == 0 ? 0.0 : snapshot.upper_bounds_seconds[i - 1];
      const double upper = snapshot.upper_bounds_seconds[i];
      const double fraction = (rank - static_cast<double>(below)) / static_cast<double>(in_bucket);
      return lower + (upper - lower) * std::clamp(fraction, 0.0, 1.0);
    }
    below += in_bucket;
  }
  return snapshot.upper_bounds_seconds.empty() ? 0.0 : snapshot.upper_bounds_seconds.back();
}

void MergeInto(const HistogramSnapshot& other, HistogramSnapshot* into) {
  if (into->counts.empty()) {
    *into = other;
    return;
  }
  for (size_t i = 0; i < into->counts.size() && i < other.counts.size(); ++i) {
    into->counts[i] += other.counts[i];
  }
  into->count += other.count;
  into->sum_seconds += other.sum_seconds;
}

}  // namespace strata::base
