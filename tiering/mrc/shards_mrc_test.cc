#include "strata/tiering/mrc/shards_mrc.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/mrc/exact_mrc.h"
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

constexpr uint32_t kGridPoints = 50;
constexpr double kMaxMeanAbsoluteError = 0.02;

struct Accuracy {
  double mae = 0;
  double max_error = 0;
  MissRatioCurve exact;
  MissRatioCurve estimate;
};

Accuracy Compare(const std::vector<Access>& stream, const ShardsOptions& options) {
  ExactMrc exact;
  ShardsMrc shards(options);
  for (const Access& a : stream) {
    exact.Access(a.key, a.bytes);
    shards.Access(a.key, a.bytes);
  }
  const std::vector<uint64_t> grid = CapacityGrid(exact.working_set_bytes(), kGridPoints);
  Accuracy result;
  result.exact = exact.Curve(grid);
  result.estimate = shards.Curve(grid);
  result.mae = MeanAbsoluteError(result.exact, result.estimate, grid);
  result.max_error = MaxAbsoluteError(result.exact, result.estimate, grid);
  std::printf(
      "accesses %llu, sampled %llu at rate %.4f, working set %.3g GB (estimated %.3g GB), "
      "hit ratio at the working set %.4f (estimated %.4f): MAE %.4f, max error %.4f\n",
      static_cast<unsigned long long>(result.estimate.accesses),
      static_cast<unsigned long long>(result.estimate.sampled_accesses),
      result.estimate.sample_rate, result.exact.working_set_bytes / 1e9,
      result.estimate.working_set_bytes / 1e9, result.exact.points.back().hit_ratio,
      result.estimate.points.back().hit_ratio, result.mae, result.max_error);
  return result;
}

void ExpectWellFormed(const MissRatioCurve& curve) {
  for (size_t i = 0; i < curve.points.size(); ++i) {
    EXPECT_GE(curve.points[i].hit_ratio, 0.0);
    EXPECT_LE(curve.points[i].hit_ratio, 1.0);
    if (i == 0) continue;
    EXPECT_GT(curve.points[i].capacity_bytes, curve.points[i - 1].capacity_bytes);
    EXPECT_GE(curve.points[i].hit_ratio, curve.points[i - 1].hit_ratio);
  }
}

TEST(ShardsMrcTest, SamplingEverythingReproducesTheExactCurve) {
  // Fewer keys than s_max: rate 1, every access sampled; only bucketing differs.
  const std::vector<Access> stream = ZipfStream(7, 2000, 50000, 0.8);
  const Accuracy a = Compare(stream, {.max_sampled_keys = 4096});
  EXPECT_EQ(a.estimate.sample_rate, 1.0);
  EXPECT_EQ(a.estimate.sampled_accesses, stream.size());
  EXPECT_EQ(a.estimate.accesses, stream.size());
  EXPECT_EQ(a.estimate.working_set_bytes, a.exact.working_set_bytes);
  EXPECT_LT(a.mae, 0.002);
  EXPECT_LT(a.max_error, 0.01);
}

TEST(ShardsMrcTest, FixedSizeSampleStaysBoundedAndTheRateDrops) {
  ShardsMrc shards({.max_sampled_keys = 256});
  std::mt19937_64 rng(3);
  double previous_rate = 1.0;
  for (int i = 0; i < 100000; ++i) {
    shards.Access(rng(), 4096);
    if (i % 1000 == 999) {
      EXPECT_LE(shards.sampled_keys(), 256u);
      EXPECT_LE(shards.sample_rate(), previous_rate);
      previous_rate = shards.sample_rate();
    }
  }
  EXPECT_EQ(shards.sampled_keys(), 256u);
  // 256 of 100000 uniformly random keys: the rate is ~256 / 100000.
  EXPECT_NEAR(shards.sample_rate(), 256.0 / 100000, 0.0008);
  const MissRatioCurve curve = shards.Curve({});
  EXPECT_EQ(curve.accesses, 100000u);
  EXPECT_LT(curve.sampled_accesses, 5000u);
  EXPECT_NEAR(static_cast<double>(curve.working_set_bytes), 100000.0 * 4096, 0.15 * 100000 * 4096);
  EXPECT_EQ(curve.points.size(), 64u);
  // All first accesses: only SHARDS_adj's correction (the sampling noise in the weight the
  // sample accounts for, put at the smallest distances) makes hits.
  EXPECT_LT(curve.points.back().hit_ratio, 0.05);
  EXPECT_EQ(curve.points.front().hit_ratio, curve.points.back().hit_ratio);

  ShardsMrc unadjusted({.max_sampled_keys = 256, .adjust = false});
  for (int i = 0; i < 1000; ++i) unadjusted.Access(rng(), 4096);
  EXPECT_EQ(unadjusted.Curve({}).points.back().hit_ratio, 0.0);
}

TEST(ShardsMrcTest, AnInitialRateBelowOneSamplesThatFraction) {
  ShardsMrc shards({.max_sampled_keys = 1 << 20, .initial_rate = 0.25});
  std::mt19937_64 rng(5);
  for (int i = 0; i < 40000; ++i) shards.Access(rng(), 1);
  EXPECT_DOUBLE_EQ(shards.sample_rate(), 0.25);
  EXPECT_NEAR(static_cast<double>(shards.sampled_keys()), 10000, 400);
}

TEST(ShardsMrcTest, ZipfStreamWithVariableSizes) {
  const std::vector<Access> stream = ZipfStream(11, 200000, 1000000, 0.9);
  const Accuracy a = Compare(stream, {});
  ExpectWellFormed(a.estimate);
  EXPECT_LT(a.estimate.sample_rate, 0.1);  // the sample is really a sample
  EXPECT_LE(a.mae, kMaxMeanAbsoluteError);
  EXPECT_GT(a.exact.points.back().hit_ratio, 0.5);
}

TEST(ShardsMrcTest, MooncakeTraceBlockStream) {
  const std::string path = testing::MooncakePath(STRATA_MOONCAKE_TRACE);
  if (path.empty() || !std::ifstream(path).good()) {
    GTEST_SKIP() << "Mooncake trace not found at '" << path
                 << "' (set STRATA_MOONCAKE_TRACE to the conversation trace's JSONL file)";
  }
  ASSERT_OK_AND_ASSIGN(sim::ReplayTrace trace, sim::LoadMooncakeTrace(path));
  const std::vector<Access> stream = BlockStream(trace);
  ASSERT_GT(stream.size(), 100000u);
  const Accuracy a = Compare(stream, {});
  ExpectWellFormed(a.estimate);
  EXPECT_LT(a.estimate.sample_rate, 0.2);
  EXPECT_LE(a.mae, kMaxMeanAbsoluteError);
}

TEST(ShardsMrcTest, SeededAgenticTrace) {
  ASSERT_OK_AND_ASSIGN(sim::ReplayTrace trace,
                       sim::GenerateAgenticTrace({.seed = 3, .sessions = 600}));
  const std::vector<Access> stream = BlockStream(trace);
  const Accuracy a = Compare(stream, {});
  ExpectWellFormed(a.estimate);
  EXPECT_LT(a.estimate.sample_rate, 0.5);
  EXPECT_LE(a.mae, kMaxMeanAbsoluteError);
}

TEST(ShardsMrcTest, ResetStartsANewCurve) {
  ShardsMrc shards({.max_sampled_keys = 64});
  for (uint64_t i = 0; i < 10000; ++i) shards.Access(Mix(i % 500), 10);
  EXPECT_LT(shards.sample_rate(), 1.0);
  EXPECT_GT(shards.Curve({}).points.back().hit_ratio, 0.5);
  shards.Reset();
  EXPECT_EQ(shards.accesses(), 0u);
  EXPECT_EQ(shards.sample_rate(), 1.0);
  EXPECT_EQ(shards.sampled_keys(), 0u);
  const std::vector<uint64_t> caps = {10, 1000};
  const MissRatioCurve empty = shards.Curve(caps);
  EXPECT_EQ(empty.accesses, 0u);
  EXPECT_EQ(empty.points[1].hit_ratio, 0.0);
  shards.Access(Mix(1), 10);
  shards.Access(Mix(1), 10);
  EXPECT_DOUBLE_EQ(shards.Curve(caps).points[0].hit_ratio, 0.5);
}

TEST(ShardsMrcTest, ConcurrentAccessAndCurve) {
  ShardsMrc shards({.max_sampled_keys = 512});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50000;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    const std::vector<uint64_t> caps = CapacityGrid(4000 * 100, 20);
    while (!done.load()) {
      const MissRatioCurve curve = shards.Curve(caps);
      ExpectWellFormed(curve);
      EXPECT_LE(curve.sampled_accesses, curve.accesses + kThreads);  // counted first
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < kPerThread; ++i) shards.Access(Mix(rng() % 4000), 100);
    });
  }
  for (std::thread& w : writers) w.join();
  done = true;
  reader.join();
  EXPECT_EQ(shards.accesses(), uint64_t{kThreads} * kPerThread);
  EXPECT_LE(shards.sampled_keys(), 512u);
  // 4000 keys of 100 bytes, uniform: an LRU of the whole set hits all but the first
  // accesses (1.5x the set: estimated distances near the set's size scatter both ways).
  const std::vector<uint64_t> caps = {6000 * 100};
  EXPECT_NEAR(shards.Curve(caps).points[0].hit_ratio, 1.0 - 4000.0 / (kThreads * kPerThread), 0.03);
}

}  // namespace
}  // namespace strata::tiering::mrc
