// tiering_mrc_bench: what the live miss-ratio curve costs on the request path, and how
// close its SHARDS estimate comes to the exact curve.
//
//   BM_ShardsAccess/<s_max>    ns per ShardsMrc::Access over the Mooncake block stream
//                              (a synthetic Zipf stream without the trace), at steady
//                              state (the rate already adapted); `sampled` is the share
//                              of accesses that took the sampled (locked) path. Also run
//                              with 2 threads sharing one ShardsMrc.
//   BM_ShardsUnsampled         the same, every access rejected (the path most accesses take).
//   BM_ChainPageHash           the prefix hash of one 512-token page (radix::ChainPageHash),
//                              which the node computes anyway for every page it looks up:
//                              the yardstick for the overhead above.
//   BM_ExactAccess             ns per ExactMrc::Access over the same stream (offline only).
//   BM_Accuracy/<s_max>/<trace> MAE and max absolute error of the SHARDS curve against the
//                              exact one on a 50-point grid up to the working set;
//                              trace 0 = Mooncake conversation trace, 1 = seeded agentic,
//                              2 = Zipf(0.9) over 200k keys with sizes of 1-64 KiB.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

#include "strata/radix/prefix_hash.h"
#include "strata/tiering/mrc/exact_mrc.h"
#include "strata/tiering/mrc/shards_mrc.h"
#include "strata/tiering/sim/agentic_trace.h"
#include "strata/tiering/sim/mooncake_trace.h"
#include "tiering/mrc/test_streams.h"

#ifndef STRATA_MOONCAKE_TRACE
#define STRATA_MOONCAKE_TRACE ""
#endif

namespace strata::tiering::mrc {
namespace {

using testing::Access;
using testing::BlockStream;
using testing::Mix;
using testing::ZipfStream;

constexpr uint32_t kPageTokens = 512;

// 0: Mooncake (Zipf if the file is missing), 1: agentic, 2: Zipf.
const std::vector<Access>& Stream(int which) {
  static const std::vector<Access>* streams[3] = {};
  if (streams[which] != nullptr) return *streams[which];
  std::vector<Access> stream;
  if (which == 0 && std::ifstream(testing::MooncakePath(STRATA_MOONCAKE_TRACE)).good()) {
    auto trace = sim::LoadMooncakeTrace(testing::MooncakePath(STRATA_MOONCAKE_TRACE));
    if (trace.ok()) stream = BlockStream(*trace);
  } else if (which == 1) {
    auto trace = sim::GenerateAgenticTrace({.seed = 3, .sessions = 3000});
    if (trace.ok()) stream = BlockStream(*trace);
  }
  if (stream.empty()) stream = ZipfStream(11, 200000, 1000000, 0.9);
  streams[which] = new std::vector<Access>(std::move(stream));
  return *streams[which];
}

// One ShardsMrc per s_max, warmed by a whole pass over the stream (so its rate has
// adapted) and shared by the benchmark's threads and repetitions.
ShardsMrc& WarmShards(uint32_t max_sampled_keys, const std::vector<Access>** stream) {
  static std::mutex mu;
  static std::map<uint32_t, std::unique_ptr<ShardsMrc>> warmed;
  std::lock_guard<std::mutex> lock(mu);
  *stream = &Stream(0);
  std::unique_ptr<ShardsMrc>& shards = warmed[max_sampled_keys];
  if (shards == nullptr) {
    shards = std::make_unique<ShardsMrc>(ShardsOptions{.max_sampled_keys = max_sampled_keys});
    for (const Access& a : **stream) shards->Access(a.key, a.bytes);
  }
  return *shards;
}

void BM_ShardsAccess(benchmark::State& state) {
  const std::vector<Access>* stream_pointer = nullptr;
  ShardsMrc& shards = WarmShards(static_cast<uint32_t>(state.range(0)), &stream_pointer);
  const std::vector<Access>& stream = *stream_pointer;
  size_t i = stream.size() * state.thread_index() / std::max(1, state.threads());
  const uint64_t sampled_before = shards.Curve({1}).sampled_accesses;
  for (auto _ : state) {
    const Access& a = stream[i];
    shards.Access(a.key, a.bytes);
    if (++i == stream.size()) i = 0;
  }
  if (state.thread_index() == 0) {
    // With threads, the others may still be finishing: the share is approximate.
    const MissRatioCurve curve = shards.Curve({1});
    state.counters["sampled"] =
        benchmark::Counter(static_cast<double>(curve.sampled_accesses - sampled_before) /
                           static_cast<double>(state.iterations() * state.threads()));
    state.counters["rate"] = curve.sample_rate;
  }
}
BENCHMARK(BM_ShardsAccess)->Arg(2048)->Arg(8192)->Arg(32768);
BENCHMARK(BM_ShardsAccess)->Arg(8192)->Threads(2)->UseRealTime();

// The reject path alone: the same stream with every key's top bit set, so no key is below
// the warmed threshold (rate < 1/2).
void BM_ShardsUnsampled(benchmark::State& state) {
  const std::vector<Access>* stream_pointer = nullptr;
  ShardsMrc& shards = WarmShards(8192, &stream_pointer);
  const std::vector<Access>& stream = *stream_pointer;
  size_t i = 0;
  for (auto _ : state) {
    const Access& a = stream[i];
    shards.Access(a.key | (uint64_t{1} << 63), a.bytes);
    if (++i == stream.size()) i = 0;
  }
}
BENCHMARK(BM_ShardsUnsampled);

void BM_ChainPageHash(benchmark::State& state) {
  std::vector<radix::TokenId> page(kPageTokens);
  std::mt19937 rng(1);
  for (auto& t : page) t = static_cast<radix::TokenId>(rng() % 128000);
  radix::PrefixHash hash{1, 2};
  for (auto _ : state) {
    hash = radix::ChainPageHash(hash, page);
    benchmark::DoNotOptimize(hash);
  }
}
BENCHMARK(BM_ChainPageHash);

void BM_ExactAccess(benchmark::State& state) {
  const std::vector<Access>& stream = Stream(0);
  auto exact = std::make_unique<ExactMrc>();
  size_t i = 0;
  for (auto _ : state) {
    const Access& a = stream[i];
    exact->Access(a.key, a.bytes);
    if (++i == stream.size()) i = 0;
  }
  state.counters["keys"] = static_cast<double>(exact->distinct_keys());
}
BENCHMARK(BM_ExactAccess);

void BM_Accuracy(benchmark::State& state) {
  const std::vector<Access>& stream = Stream(static_cast<int>(state.range(1)));
  ExactMrc exact;
  for (const Access& a : stream) exact.Access(a.key, a.bytes);
  const std::vector<uint64_t> grid = CapacityGrid(exact.working_set_bytes(), 50);
  const MissRatioCurve truth = exact.Curve(grid);
  MissRatioCurve estimate;
  for (auto _ : state) {
    ShardsMrc shards({.max_sampled_keys = static_cast<uint32_t>(state.range(0))});
    for (const Access& a : stream) shards.Access(a.key, a.bytes);
    estimate = shards.Curve(grid);
  }
  state.counters["accesses"] = static_cast<double>(stream.size());
  state.counters["keys"] = static_cast<double>(exact.distinct_keys());
  state.counters["rate"] = estimate.sample_rate;
  state.counters["hit@ws"] = truth.points.back().hit_ratio;
  state.counters["MAE"] = MeanAbsoluteError(truth, estimate, grid);
  state.counters["max_err"] = MaxAbsoluteError(truth, estimate, grid);
}
BENCHMARK(BM_Accuracy)
    ->ArgsProduct({{2048, 8192, 32768}, {0, 1, 2}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata::tiering::mrc
