#include "strata/store/rpc/rpc_metrics.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "grpcpp/support/server_interceptor.h"

namespace strata::store::rpc {
namespace {

TEST(RpcMetricsTest, CountsByMethodAndCodeSortedByName) {
  RpcMetrics metrics;
  metrics.Record("strata.v1.Store/Match", 0, absl::Microseconds(40));
  metrics.Record("strata.v1.Store/Match", 0, absl::Microseconds(60));
  metrics.Record("strata.v1.Store/Match", 5, absl::Milliseconds(2));
  metrics.Record("strata.v1.Admin/Tiers", 14, absl::Milliseconds(1));
  metrics.Record("strata.v1.Admin/Tiers", 99, absl::Milliseconds(1));  // out of range: UNKNOWN
  const RpcMetricsSnapshot s = metrics.Snapshot();
  ASSERT_EQ(s.methods.size(), 2u);
  EXPECT_EQ(s.methods[0].method, "strata.v1.Admin/Tiers");
  EXPECT_EQ(s.methods[1].method, "strata.v1.Store/Match");
  EXPECT_EQ(s.methods[1].calls_by_code[0], 2u);
  EXPECT_EQ(s.methods[1].calls_by_code[5], 1u);
  EXPECT_EQ(s.methods[1].calls(), 3u);
  EXPECT_EQ(s.methods[1].latency.count, 3u);
  EXPECT_EQ(s.methods[1].latency.counts[1], 1u);  // 40 us: (25 us, 50 us]
  EXPECT_EQ(s.methods[1].latency.counts[2], 1u);  // 60 us: (50 us, 100 us]
  EXPECT_EQ(s.methods[0].calls_by_code[14], 1u);
  EXPECT_EQ(s.methods[0].calls_by_code[2], 1u);  // UNKNOWN
}

TEST(RpcMetricsTest, MethodEntriesAreStableAndConcurrentRecordsCount) {
  RpcMetrics metrics;
  RpcMetrics::Method* match = metrics.FindOrAdd("strata.v1.Store/Match");
  constexpr int kThreads = 4, kEach = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < kEach; ++i) {
        // New methods appear while others record: earlier entries must not move.
        metrics.Record("m" + std::to_string((t * kEach + i) % 50), 0, absl::Microseconds(1));
        metrics.FindOrAdd("strata.v1.Store/Match")->Record(0, absl::Microseconds(1));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(metrics.FindOrAdd("strata.v1.Store/Match"), match);
  const RpcMetricsSnapshot s = metrics.Snapshot();
  ASSERT_EQ(s.methods.size(), 51u);
  uint64_t total = 0;
  for (const RpcMethodStats& m : s.methods) total += m.calls();
  EXPECT_EQ(total, uint64_t{2} * kThreads * kEach);
  EXPECT_EQ(s.methods.back().method, "strata.v1.Store/Match");
  EXPECT_EQ(s.methods.back().calls(), uint64_t{kThreads} * kEach);
}

TEST(RpcMetricsTest, FactoryMakesAnInterceptorFactory) {
  RpcMetrics metrics;
  EXPECT_NE(metrics.MakeInterceptorFactory(), nullptr);
}

}  // namespace
}  // namespace strata::store::rpc
