// LatencyHistogram: a fixed-bucket histogram of durations, cheap enough for every request.
//
// What: counts durations into 18 fixed buckets whose upper bounds run from 25 us to 10 s in
// 1-2.5-5 steps (kLatencyBucketBoundsSeconds), plus a last +Inf bucket, and keeps their
// count and sum: the shape Prometheus histograms have, so store/http writes them as
// `_bucket{le=...}` / `_sum` / `_count` without conversion.
//
// Thread safety: Record and Snapshot may be called from any thread at once. Each field is a
// relaxed atomic: Record costs a bucket search over 18 constants and three relaxed
// fetch_adds; a Snapshot taken during Records is a set of individually exact counts, not one
// atomic cut (count may differ from the bucket sum by the Records in flight; Snapshot makes
// `count` equal the sum of its bucket counts so that a scrape is always self-consistent).
// Ownership: a plain value holder; not copyable (atomics). No errors.
//
// HistogramSnapshot is a plain struct (stats are plain structs owned by their module; only
// store/http turns them into Prometheus text or JSON). EstimateQuantile reads a quantile
// from one the way Prometheus' histogram_quantile does (linear within a bucket).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace strata::base {

// Upper bounds of the finite buckets, in seconds, ascending.
inline constexpr std::array<double, 18> kLatencyBucketBoundsSeconds = {
    25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3,
    25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1.0,  2.5,    5.0,  10.0};

struct HistogramSnapshot {
  // The finite buckets' upper bounds (seconds, ascending); the +Inf bucket is implied.
  std::vector<double> upper_bounds_seconds;
  // Per bucket, NOT cumulative: counts[i] durations fell in (upper_bounds[i-1],
  // upper_bounds[i]]; counts.back() (index upper_bounds.size()) is the +Inf bucket.
  // counts.size() == upper_bounds_seconds.size() + 1.
  std::vector<uint64_t> counts;
  uint64_t count = 0;        // the sum of counts
  double sum_seconds = 0.0;  // the recorded durations' sum
};

class LatencyHistogram {
 public:
  LatencyHistogram() = default;
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  // Counts one duration; a negative one counts as zero.
  void Record(absl::Duration duration);

  HistogramSnapshot Snapshot() const;

 private:
  static constexpr size_t kBuckets = kLatencyBucketBoundsSeconds.size() + 1;
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> sum_nanos_{0};
};

// The q-quantile (0 <= q <= 1, clamped) of the durations in `snapshot`, in seconds:
// linear interpolation inside the bucket holding the rank (the first bucket starts at 0).
// A rank in the +Inf bucket gives the largest finite bound. 0 when the snapshot is empty.
double EstimateQuantile(const HistogramSnapshot& snapshot, double q);

// Adds `other`'s counts and sum into *into (e.g. one histogram over several methods).
// REQUIRES: both have the same bounds, or *into is empty (then it takes other's bounds).
void MergeInto(const HistogramSnapshot& other, HistogramSnapshot* into);

}  // namespace strata::base
