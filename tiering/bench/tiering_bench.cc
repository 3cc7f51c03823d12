// tiering_bench: the DRAM tier's allocator and copy path, each next to what a user would
// otherwise have (a std::map/std::set best-fit allocator; a plain memcpy).
//
//   BM_AllocFreeRate/<mix>/<fill%>   alloc+free pairs per second at a steady fill,
//                                    ExtentAllocator vs naive best-fit, same trace.
//   BM_Fragmentation/<mix>           fragmentation measures over a long trace held at 90%
//                                    fill, for both allocators.
//   BM_DramArenaWrite/<MiB>          DramArena Allocate+Write+Free of 1-16 MiB blobs vs
//                                    memcpy into a malloc'd buffer (the physical limit)
//                                    and into the arena's own pages.
// Mixes: 0 = KV-cache-like, 1 = log-uniform 64 KiB - 1 GiB (see SizeTrace).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

#include "strata/base/byte_size.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/extent_allocator.h"

namespace strata::tiering {
namespace {

using ::strata::base::kGiB;
using ::strata::base::kKiB;
using ::strata::base::kMiB;
constexpr uint64_t kGranule = 64 * kKiB;
constexpr uint64_t kCapacity = 256 * kGiB;  // virtual: the allocators need no memory behind it

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------
// The baseline: the best-fit allocator one writes with the standard library. Free extents
// indexed by (length, offset) for best fit and by offset for coalescing.
class BestFitAllocator {
 public:
  explicit BestFitAllocator(uint64_t capacity) { AddFree(0, capacity); }

  std::optional<Extent> Allocate(uint64_t bytes) {
    const uint64_t length = (bytes + kGranule - 1) / kGranule * kGranule;
    auto it = by_size_.lower_bound({length, 0});
    if (it == by_size_.end()) return std::nullopt;
    const auto [free_length, offset] = *it;
    RemoveFree(offset, free_length);
    if (free_length > length) AddFree(offset + length, free_length - length);
    return Extent{offset, length};
  }

  void Free(const Extent& extent) {
    uint64_t offset = extent.offset, length = extent.length;
    auto next = by_offset_.find(offset + length);
    if (next != by_offset_.end()) {
      length += next->second;
      RemoveFree(next->first, next->second);
    }
    auto prev = by_offset_.lower_bound(offset);
    if (prev != by_offset_.begin() && (--prev)->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      RemoveFree(prev->first, prev->second);
    }
    AddFree(offset, length);
  }

  uint64_t free_bytes() const { return free_; }
  uint64_t LargestFreeExtent() const { return by_size_.empty() ? 0 : by_size_.rbegin()->first; }
  double ExternalFragmentation() const {
    return free_ == 0 ? 0.0 : 1.0 - static_cast<double>(LargestFreeExtent()) / free_;
  }
  double UnusableFreeFraction(uint64_t request) const {
    uint64_t unusable = 0;
    for (auto it = by_size_.begin(); it != by_size_.end() && it->first < request; ++it) {
      unusable += it->first;
    }
    return free_ == 0 ? 0.0 : static_cast<double>(unusable) / free_;
  }

 private:
  void AddFree(uint64_t offset, uint64_t length) {
    by_offset_.emplace(offset, length);
    by_size_.emplace(length, offset);
    free_ += length;
  }
  void RemoveFree(uint64_t offset, uint64_t length) {
    by_offset_.erase(offset);
    by_size_.erase({length, offset});
    free_ -= length;
  }

  std::map<uint64_t, uint64_t> by_offset_;
  std::set<std::pair<uint64_t, uint64_t>> by_size_;
  uint64_t free_ = 0;
};

// strata's allocator behind the same small interface.
class TlsfAllocator {
 public:
  explicit TlsfAllocator(uint64_t capacity) : allocator_(Options(capacity)) {}
  std::optional<Extent> Allocate(uint64_t bytes) {
    absl::StatusOr<Extent> extent = allocator_.Allocate(bytes);
    return extent.ok() ? std::optional<Extent>(*extent) : std::nullopt;
  }
  void Free(const Extent& extent) { allocator_.Free(extent); }
  uint64_t free_bytes() const { return allocator_.free_bytes(); }
  double ExternalFragmentation() const { return allocator_.ExternalFragmentation(); }
  double UnusableFreeFraction(uint64_t request) const {
    return allocator_.UnusableFreeFraction(request);
  }

 private:
  static ExtentAllocatorOptions Options(uint64_t capacity) {
    ExtentAllocatorOptions options;
    options.capacity_bytes = capacity;
    return options;
  }
  ExtentAllocator allocator_;
};

// ---------------------------------------------------------------------------------------
// Size traces.
//  mix 0, KV-cache-like: a 7B GQA model (32 layers, 8 KV heads, head dim 128, fp16) holds
//    128 KiB of KV per token, 32 KiB per rank at tensor-parallel 4; a 16-token page is then
//    512 KiB per rank. 97% of blobs are 1-64 pages (log-uniform: 512 KiB - 32 MiB), 3% are
//    large (a whole long prompt prefilled at once: log-uniform 64 MiB - 1 GiB).
//  mix 1, log-uniform over the whole range, 64 KiB - 1 GiB.
class SizeTrace {
 public:
  SizeTrace(int mix, uint64_t seed) : mix_(mix), rng_(seed) {}

  uint64_t Next() {
    if (mix_ == 0) {
      if (unit_(rng_) < 0.03) return LogUniform(64 * kMiB, kGiB);
      const uint64_t pages = std::min<uint64_t>(64, static_cast<uint64_t>(LogUniform(1, 65)));
      return pages * 512 * kKiB;
    }
    return LogUniform(64 * kKiB, kGiB);
  }
  uint64_t Random() { return rng_(); }
  static const char* Name(int mix) { return mix == 0 ? "kv_mix" : "log_uniform"; }

 private:
  uint64_t LogUniform(double lo, double hi) {
    return static_cast<uint64_t>(
        std::exp(std::log(lo) + unit_(rng_) * (std::log(hi) - std::log(lo))));
  }
  int mix_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

// Live extents of one allocator plus the trace that drives it at a target fill.
template <typename Allocator>
struct Workload {
  Workload(int mix, uint64_t seed, double fill)
      : allocator(kCapacity), trace(mix, seed), target_used(fill * kCapacity) {
    Refill();
  }

  uint64_t used() const { return kCapacity - allocator.free_bytes(); }

  // Allocates new blobs until the target fill is reached. A failed request is skipped.
  void Refill() {
    while (used() < target_used) {
      const uint64_t bytes = trace.Next();
      ++attempts;
      if (std::optional<Extent> e = allocator.Allocate(bytes)) {
        live.push_back(*e);
      } else {
        ++failures;
        if (allocator.free_bytes() >= bytes) ++fragmentation_failures;
      }
      ++ops;
    }
  }

  // One step: free a random live blob, then refill.
  void Step() {
    const size_t victim = trace.Random() % live.size();
    allocator.Free(live[victim]);
    live[victim] = live.back();
    live.pop_back();
    ++ops;
    Refill();
  }

  Allocator allocator;
  SizeTrace trace;
  const uint64_t target_used;
  std::vector<Extent> live;
  uint64_t ops = 0, attempts = 0, failures = 0, fragmentation_failures = 0;
};

// ---------------------------------------------------------------------------------------
void BM_AllocFreeRate(benchmark::State& state) {
  const int mix = static_cast<int>(state.range(0));
  const double fill = state.range(1) / 100.0;
  constexpr int kStepsPerBatch = 20000;
  Workload<TlsfAllocator> tlsf(mix, 42, fill);
  Workload<BestFitAllocator> best_fit(mix, 42, fill);
  tlsf.ops = best_fit.ops = 0;
  double tlsf_seconds = 0, best_fit_seconds = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    for (int i = 0; i < kStepsPerBatch; ++i) tlsf.Step();
    tlsf_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    start = Clock::now();
    for (int i = 0; i < kStepsPerBatch; ++i) best_fit.Step();
    best_fit_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }
  const double tlsf_rate = tlsf.ops / 2.0 / tlsf_seconds;
  const double best_fit_rate = best_fit.ops / 2.0 / best_fit_seconds;
  state.counters["strata_Mpairs/s"] = tlsf_rate / 1e6;
  state.counters["bestfit_Mpairs/s"] = best_fit_rate / 1e6;
  state.counters["speedup"] = tlsf_rate / best_fit_rate;
  state.counters["live_blobs"] = tlsf.live.size();
  state.SetLabel(std::string(SizeTrace::Name(mix)) + " fill " + std::to_string(state.range(1)) +
                 "%");
}
BENCHMARK(BM_AllocFreeRate)
    ->ArgsProduct({{0, 1}, {10, 90}})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

// Holds a trace at 90% fill and samples the fragmentation measures every kSampleEvery
// steps after a warm-up. Reports the means over the samples.
template <typename Allocator>
void RunFragmentation(benchmark::State& state, const char* prefix, int mix, int steps) {
  constexpr int kWarmup = 20000;
  constexpr int kSampleEvery = 500;
  Workload<Allocator> w(mix, 7, 0.90);
  for (int i = 0; i < kWarmup; ++i) w.Step();
  w.attempts = w.failures = w.fragmentation_failures = 0;
  double external = 0, unusable_4m = 0, unusable_64m = 0, unusable_1g = 0, fill = 0;
  int samples = 0;
  for (int i = 1; i <= steps; ++i) {
    w.Step();
    if (i % kSampleEvery == 0) {
      external += w.allocator.ExternalFragmentation();
      unusable_4m += w.allocator.UnusableFreeFraction(4 * kMiB);
      unusable_64m += w.allocator.UnusableFreeFraction(64 * kMiB);
      unusable_1g += w.allocator.UnusableFreeFraction(kGiB);
      fill += static_cast<double>(w.used()) / kCapacity;
      ++samples;
    }
  }
  const std::string p = prefix;
  state.counters[p + "ext_frag_%"] = 100 * external / samples;
  state.counters[p + "unusable@4M_%"] = 100 * unusable_4m / samples;
  state.counters[p + "unusable@64M_%"] = 100 * unusable_64m / samples;
  state.counters[p + "unusable@1G_%"] = 100 * unusable_1g / samples;
  state.counters[p + "frag_fail_%"] = 100.0 * w.fragmentation_failures / w.attempts;
  state.counters[p + "fill_%"] = 100 * fill / samples;
}

void BM_Fragmentation(benchmark::State& state) {
  const int mix = static_cast<int>(state.range(0));
  const int steps = static_cast<int>(state.range(1));
  for (auto _ : state) {
    RunFragmentation<TlsfAllocator>(state, "strata_", mix, steps);
    RunFragmentation<BestFitAllocator>(state, "bestfit_", mix, steps);
  }
  state.SetLabel(std::string(SizeTrace::Name(mix)) + " at 90% fill, " + std::to_string(steps) +
                 " steps");
}
BENCHMARK(BM_Fragmentation)
    ->Args({0, 200000})
    ->Args({1, 200000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------------------------------
// Blob writes through the arena (Allocate + Write + Free) vs memcpy into a malloc'd buffer
// (the physical limit) and vs memcpy straight into the arena's own mapping (the same
// physical pages without strata's code: separates the arena's overhead from page
// placement, which in trials moved equal buffers of one process by up to 20%). All
// destinations are a 256 MiB window (past the caches), prefaulted; one source buffer.
void BM_DramArenaWrite(benchmark::State& state) {
  const uint64_t blob = static_cast<uint64_t>(state.range(0)) * kMiB;
  constexpr uint64_t kWindow = 256 * kMiB;
  DramArenaOptions options;
  options.capacity_bytes = kWindow;
  options.name = "tiering-bench";
  options.populate = true;
  absl::StatusOr<std::unique_ptr<DramArena>> arena = DramArena::Create(options);
  if (!arena.ok()) {
    state.SkipWithError(arena.status().ToString().c_str());
    return;
  }
  std::unique_ptr<std::byte[]> plain(new std::byte[kWindow]);
  std::memset(plain.get(), 1, kWindow);
  std::vector<std::byte> source(blob, std::byte{7});
  const uint64_t slots = kWindow / blob;
  std::vector<Extent> held;
  uint64_t next_slot = 0;
  double seconds[3] = {0, 0, 0};  // arena, memcpy to malloc, memcpy to the arena's pages
  uint64_t bytes = 0;
  constexpr int kBlobsPerBatch = 32;
  bool failed = false;
  auto timed = [&](int side, auto&& body) {
    const auto start = Clock::now();
    body();
    seconds[side] += std::chrono::duration<double>(Clock::now() - start).count();
  };
  auto arena_batch = [&] {
    for (int i = 0; i < kBlobsPerBatch; ++i) {
      if (held.size() + 1 >= slots) {  // keep the arena from filling: free the oldest
        (*arena)->Free(held.front());
        held.erase(held.begin());
      }
      absl::StatusOr<Extent> extent = (*arena)->Allocate(blob);
      if (!extent.ok() || !(*arena)->Write(*extent, 0, source).ok()) {
        failed = true;
        return;
      }
      held.push_back(*extent);
    }
  };
  auto memcpy_batch = [&](std::byte* base) {
    for (int i = 0; i < kBlobsPerBatch; ++i) {
      std::memcpy(base + (next_slot + i) % slots * blob, source.data(), blob);
      benchmark::ClobberMemory();
    }
  };
  int round = 0;
  for (auto _ : state) {
    // Rotate which side goes first so none always finds another's cache state.
    for (int k = 0; k < 3; ++k) {
      switch ((round + k) % 3) {
        case 0:
          timed(0, arena_batch);
          break;
        case 1:
          timed(1, [&] { memcpy_batch(plain.get()); });
          break;
        case 2:
          timed(2, [&] { memcpy_batch((*arena)->base()); });
          break;
      }
    }
    if (failed) {
      state.SkipWithError("arena Allocate/Write failed");
      return;
    }
    ++round;
    next_slot += kBlobsPerBatch;
    bytes += kBlobsPerBatch * blob;
  }
  state.counters["arena_GB/s"] = bytes / seconds[0] / 1e9;
  state.counters["memcpy_GB/s"] = bytes / seconds[1] / 1e9;
  state.counters["same_pages_memcpy_GB/s"] = bytes / seconds[2] / 1e9;
  state.counters["arena/memcpy"] = seconds[1] / seconds[0];
  state.counters["arena/same_pages"] = seconds[2] / seconds[0];
  state.SetLabel(std::to_string(state.range(0)) + " MiB blobs, hugepages: " +
                 std::string(HugePageModeName((*arena)->huge_page_mode())));
}
BENCHMARK(BM_DramArenaWrite)->Arg(1)->Arg(4)->Arg(16)->MinTime(1.0)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata::tiering
