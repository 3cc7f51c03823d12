#include "strata/tiering/mrc/shards_mrc.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace strata::tiering::mrc {
namespace {

constexpr double kTwoTo64 = 18446744073709551616.0;

uint64_t ThresholdFor(double rate) {
  if (!(rate < 1.0)) return std::numeric_limits<uint64_t>::max();
  const double threshold = std::max(rate, 0.0) * kTwoTo64;
  return std::max<uint64_t>(1, static_cast<uint64_t>(threshold));
}

double RateOf(uint64_t threshold) {
  // T = 2^64 - 1 is "everything" (one key in 2^64 is never sampled).
  if (threshold == std::numeric_limits<uint64_t>::max()) return 1.0;
  return static_cast<double>(threshold) / kTwoTo64;
}

// The calling thread's slot, 0, 1, 2, ... in the order threads first access any ShardsMrc.
int ThreadSlot() {
  static std::atomic<int> next_slot{0};
  thread_local const int slot = next_slot.fetch_add(1, std::memory_order_relaxed);
  return slot;
}

}  // namespace

ShardsMrc::ShardsMrc(const ShardsOptions& options)
    : options_([&] {
        ShardsOptions o = options;
        o.max_sampled_keys = std::max<uint32_t>(1, o.max_sampled_keys);
        o.histogram_precision_bits = std::clamp<uint32_t>(o.histogram_precision_bits, 1, 10);
        return o;
      }()),
      initial_threshold_(ThresholdFor(options_.initial_rate)),
      threshold_(initial_threshold_) {
  absl::MutexLock lock(&mu_);
  histogram_.assign(
      size_t{65 - options_.histogram_precision_bits} << options_.histogram_precision_bits, 0.0);
}

void ShardsMrc::AddAccesses(uint64_t n) {
  const int slot = ThreadSlot();
  if (slot < kOwnedStripes) {
    std::atomic<uint64_t>& own = accesses_[slot].count;  // this thread is its only writer
    own.store(own.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  } else {
    accesses_[kOwnedStripes].count.fetch_add(n, std::memory_order_relaxed);
  }
}

void ShardsMrc::Access(uint64_t key, uint64_t bytes) {
  AddAccesses(1);
  if (key >= threshold_.load(std::memory_order_relaxed)) return;
  absl::MutexLock lock(&mu_);
  SampleLocked(key, bytes);
}

void ShardsMrc::AccessMany(absl::Span<const uint64_t> keys, uint64_t bytes) {
  if (keys.empty()) return;
  AddAccesses(keys.size());
  const uint64_t threshold = threshold_.load(std::memory_order_relaxed);
  size_t i = 0;
  while (i < keys.size() && keys[i] >= threshold) ++i;
  if (i == keys.size()) return;  // none sampled: no lock
  absl::MutexLock lock(&mu_);
  for (; i < keys.size(); ++i) SampleLocked(keys[i], bytes);
}

void ShardsMrc::SampleLocked(uint64_t key, uint64_t bytes) {
  const uint64_t threshold = threshold_.load(std::memory_order_relaxed);
  if (key >= threshold) return;  // not sampled (or the threshold dropped meanwhile)
  ++sampled_accesses_;
  const double rate = RateOf(threshold);
  const double weight = 1.0 / rate;
  const std::optional<uint64_t> between = stack_.Access(key, bytes);
  if (!between.has_value()) {
    cold_weight_ += weight;
    sampled_keys_.push(key);
  } else {
    const double distance = static_cast<double>(bytes) + static_cast<double>(*between) / rate;
    histogram_[BucketOf(distance)] += weight;
  }
  // Fixed-size SHARDS: evict the largest hashes and lower the threshold to the last one
  // evicted, so the sample is exactly the keys below the threshold.
  while (stack_.size() > options_.max_sampled_keys) {
    const uint64_t largest = sampled_keys_.top();
    sampled_keys_.pop();
    stack_.Remove(largest);
    threshold_.store(largest, std::memory_order_relaxed);
  }
}

size_t ShardsMrc::BucketOf(double distance) const {
  const uint32_t bits = options_.histogram_precision_bits;
  const uint64_t v =
      distance >= 0x1p63 ? uint64_t{1} << 63 : static_cast<uint64_t>(std::max(distance, 0.0));
  if (v < (uint64_t{1} << bits)) return v;
  const int exponent = std::bit_width(v) - 1;  // >= bits
  const uint64_t mantissa = (v >> (exponent - bits)) & ((uint64_t{1} << bits) - 1);
  return (static_cast<size_t>(exponent - bits + 1) << bits) | mantissa;
}

double ShardsMrc::BucketLow(size_t bucket) const {
  const uint32_t bits = options_.histogram_precision_bits;
  if (bucket < (size_t{1} << bits)) return static_cast<double>(bucket);
  const int exponent = static_cast<int>(bucket >> bits) + static_cast<int>(bits) - 1;
  const uint64_t mantissa = bucket & ((uint64_t{1} << bits) - 1);
  return std::ldexp(static_cast<double>((uint64_t{1} << bits) + mantissa),
                    exponent - static_cast<int>(bits));
}

MissRatioCurve ShardsMrc::Curve(absl::Span<const uint64_t> capacities) const {
  absl::MutexLock lock(&mu_);
  const double rate = RateOf(threshold_.load(std::memory_order_relaxed));
  MissRatioCurve curve;
  curve.accesses = CountAccesses() - accesses_at_reset_;
  curve.sampled_accesses = sampled_accesses_;
  curve.sample_rate = rate;
  curve.working_set_bytes = static_cast<uint64_t>(static_cast<double>(stack_.live_bytes()) / rate);

  std::vector<uint64_t> grid(capacities.begin(), capacities.end());
  if (grid.empty()) grid = CapacityGrid(std::max<uint64_t>(1, curve.working_set_bytes), 64);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());

  // The weight the sample accounts for, against the accesses counted: SHARDS_adj puts the
  // difference into the smallest distances.
  double sampled_weight = cold_weight_;
  for (double w : histogram_) sampled_weight += w;
  double total = sampled_weight;
  double hits = 0;
  if (options_.adjust && curve.accesses > 0) {
    total = static_cast<double>(curve.accesses);
    hits = total - sampled_weight;
  }

  curve.points.reserve(grid.size());
  double best = 0;
  size_t bucket = 0;  // buckets below `bucket` are counted in `hits`
  for (uint64_t capacity : grid) {
    const double c = static_cast<double>(capacity);
    while (bucket + 1 < histogram_.size() && BucketLow(bucket + 1) <= c + 1) {
      hits += histogram_[bucket++];
    }
    // Distances in the bucket holding `c` are taken as spread evenly over [low, high).
    const double low = BucketLow(bucket);
    const double width = bucket + 1 < histogram_.size() ? BucketLow(bucket + 1) - low : 1.0;
    const double part = std::clamp((c + 1 - low) / width, 0.0, 1.0) * histogram_[bucket];
    const double ratio = total > 0 ? std::clamp((hits + part) / total, 0.0, 1.0) : 0.0;
    best = std::max(best, ratio);
    curve.points.push_back({.capacity_bytes = capacity, .hit_ratio = best});
  }
  return curve;
}

uint64_t ShardsMrc::CountAccesses() const {
  uint64_t sum = 0;
  for (const Stripe& stripe : accesses_) sum += stripe.count.load(std::memory_order_relaxed);
  return sum;
}

uint64_t ShardsMrc::accesses() const {
  absl::MutexLock lock(&mu_);
  return CountAccesses() - accesses_at_reset_;
}

double ShardsMrc::sample_rate() const { return RateOf(threshold_.load(std::memory_order_relaxed)); }

uint64_t ShardsMrc::sampled_keys() const {
  absl::MutexLock lock(&mu_);
  return stack_.size();
}

void ShardsMrc::Reset() {
  absl::MutexLock lock(&mu_);
  ResetLocked();
}

void ShardsMrc::ResetLocked() {
  stack_.Clear();
  sampled_keys_ = {};
  std::fill(histogram_.begin(), histogram_.end(), 0.0);
  cold_weight_ = 0;
  sampled_accesses_ = 0;
  accesses_at_reset_ = CountAccesses();
  threshold_.store(initial_threshold_, std::memory_order_relaxed);
}

}  // namespace strata::tiering::mrc
