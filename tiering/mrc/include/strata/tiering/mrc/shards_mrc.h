// ShardsMrc: an online estimate of the byte-weighted miss-ratio curve at a small, bounded
// cost — SHARDS (Waldspurger et al., "Efficient MRC Construction with SHARDS", FAST '15).
//
// Spatially hashed sampling: an access is sampled iff its key (a well-mixed 64-bit hash)
// is below a threshold T; the sampling rate is R = T / 2^64, so every access of a sampled
// key is seen and its reuse distance among the sampled keys, divided by R, estimates the
// true one. The stack distance of a sampled access is estimated as its own bytes plus the
// bytes of the distinct sampled keys accessed since its previous access, divided by R.
//
// Fixed-size SHARDS: at most `max_sampled_keys` keys are tracked. When one more is
// admitted, the key with the largest hash is evicted and T drops to that hash, so the set
// always holds exactly the keys below T and the memory stays bounded while R adapts to the
// working set. Each sampled access adds weight 1/R (R at the time of the access) to a
// histogram of distances (log-spaced buckets, 2^histogram_precision_bits sub-buckets per
// power of two: <= 0.8% relative width at the default 7); weights stay comparable across
// rate changes. SHARDS_adj: the difference between the accesses counted and the weight
// the sample accounts for is added to the smallest-distance bucket (the error comes mostly
// from hot keys sampled too often or too rarely), then hit ratios are clamped to [0, 1] and
// made non-decreasing.
//
// Cost per access: an unsampled access is a relaxed atomic load and compare, plus bumping
// the calling thread's own stripe of the access counter (the count SHARDS_adj needs) with
// a relaxed load and store — no locked instruction for the first 63 threads of the
// process; a sampled access takes the mutex and costs O(log max_sampled_keys).
// Memory: O(max_sampled_keys) plus the histogram (64 << histogram_precision_bits doubles).
//
// Thread-safe: Access from many request threads, Curve / accesses / Reset from any thread.
// Errors: none.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <queue>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/tiering/mrc/internal/byte_lru_stack.h"
#include "strata/tiering/mrc/miss_ratio_curve.h"

namespace strata::tiering::mrc {

struct ShardsOptions {
  // Fixed-size SHARDS: s_max, the most keys tracked; the threshold lowers as needed.
  // REQUIRES: > 0.
  uint32_t max_sampled_keys = 8192;
  // Start by sampling everything. REQUIRES: in (0, 1].
  double initial_rate = 1.0;
  // Histogram resolution: 2^bits log-spaced buckets per power of two of bytes (distances
  // below 2^bits bytes are exact). REQUIRES: in [1, 10].
  uint32_t histogram_precision_bits = 7;
  // Apply the SHARDS_adj correction.
  bool adjust = true;
};

class ShardsMrc {
 public:
  explicit ShardsMrc(const ShardsOptions& options = {});
  ShardsMrc(const ShardsMrc&) = delete;
  ShardsMrc& operator=(const ShardsMrc&) = delete;

  // One access of `key` (a well-mixed 64-bit hash) occupying `bytes`. Cheap reject (no
  // lock) when the key is not sampled.
  void Access(uint64_t key, uint64_t bytes);
  // Access(key, bytes) for each of `keys` in order, taking the lock at most once (none
  // when no key is sampled): what a lookup of many pages calls.
  void AccessMany(absl::Span<const uint64_t> keys, uint64_t bytes);

  // The estimated curve at `capacities` (sorted and deduplicated here). Empty
  // `capacities`: 64 evenly spaced points up to the estimated working set.
  MissRatioCurve Curve(absl::Span<const uint64_t> capacities) const;

  // Accesses since construction or the last Reset.
  uint64_t accesses() const;
  // The sampling rate in effect and the keys tracked now.
  double sample_rate() const;
  uint64_t sampled_keys() const;

  // Forgets everything: the next access starts a new curve at initial_rate.
  void Reset();

  const ShardsOptions& options() const { return options_; }

 private:
  // The access counter, striped: each of the first kOwnedStripes threads of the process
  // owns one stripe and bumps it with a plain relaxed load and store (one writer, no
  // read-modify-write); later threads share the last stripe and use fetch_add.
  static constexpr int kOwnedStripes = 63;
  struct alignas(64) Stripe {
    std::atomic<uint64_t> count{0};
  };

  void AddAccesses(uint64_t n);
  // Samples one access if `key` is below the threshold now.
  void SampleLocked(uint64_t key, uint64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t BucketOf(double distance) const;
  double BucketLow(size_t bucket) const;  // smallest distance of a bucket
  uint64_t CountAccesses() const;
  void ResetLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ShardsOptions options_;
  const uint64_t initial_threshold_;
  // Sampled iff key < threshold_; only lowered (under mu_) between Resets.
  std::atomic<uint64_t> threshold_;
  std::array<Stripe, kOwnedStripes + 1> accesses_;

  mutable absl::Mutex mu_;
  internal::ByteLruStack stack_ ABSL_GUARDED_BY(mu_);
  std::priority_queue<uint64_t> sampled_keys_ ABSL_GUARDED_BY(mu_);  // max-heap of keys
  std::vector<double> histogram_ ABSL_GUARDED_BY(mu_);               // weight by distance bucket
  double cold_weight_ ABSL_GUARDED_BY(mu_) = 0;  // first accesses (infinite distance)
  uint64_t sampled_accesses_ ABSL_GUARDED_BY(mu_) = 0;
  // The stripes' sum at the last Reset (stripes are never zeroed: an owner's store would
  // race with it).
  uint64_t accesses_at_reset_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace strata::tiering::mrc
