#include "strata/tiering/sim/replay_sweep.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/sim/agentic_trace.h"

namespace strata::tiering::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ReplayTrace SmallAgentic() {
  AgenticTraceOptions options;
  options.sessions = 60;
  return GenerateAgenticTrace(options).value();
}

TEST(ReplaySweepTest, AddsLruAndBeladyAndReplaysEveryCapacity) {
  const ReplayTrace trace = SmallAgentic();
  SweepOptions options;
  options.policies = {"branch-lru", "gdsf", "branch-lru"};
  options.capacities = {0.05, 0.5, 1.0};
  ASSERT_OK_AND_ASSIGN(SweepTable table, RunSweep(trace, options));
  EXPECT_THAT(table.policies, ElementsAre("lru", "branch-lru", "gdsf", "belady"));
  ASSERT_EQ(table.rows.size(), 3u);
  const uint64_t working_set = table.summary.distinct_blocks;
  EXPECT_EQ(table.rows[2].capacity_blocks, working_set);
  for (const SweepRow& row : table.rows) {
    ASSERT_EQ(row.results.size(), 4u);
    for (const ReplayResult& result : row.results) {
      EXPECT_EQ(result.block_reads, table.summary.block_reads);
      EXPECT_LE(result.block_hits, row.results.back().block_hits);  // belady bounds all
    }
  }
  // A tier as large as the working set never evicts: every policy is the unbounded cache.
  for (const ReplayResult& result : table.rows[2].results) {
    EXPECT_EQ(result.evictions, 0u);
    EXPECT_DOUBLE_EQ(result.block_hit_rate(), table.summary.unbounded_block_hit_rate);
  }
}

TEST(ReplaySweepTest, FormatsOneRowPerCapacityWithTheGapClosed) {
  const ReplayTrace trace = SmallAgentic();
  SweepOptions options;
  options.policies = {"lru", "branch-lru"};
  options.capacities = {0.1, 1.0};
  ASSERT_OK_AND_ASSIGN(SweepTable table, RunSweep(trace, options));
  const std::string text = FormatSweep(table, /*tokens=*/false);
  EXPECT_THAT(text, HasSubstr("trace agentic: "));
  EXPECT_THAT(text, HasSubstr("block hit rate (%)"));
  EXPECT_THAT(text, HasSubstr("gap closed (branch-lru)"));
  EXPECT_THAT(text, HasSubstr("      10%"));
  EXPECT_THAT(text, HasSubstr("     100%"));
  // At 100% LRU equals Belady: the gap is shown as "-".
  const std::string last_line = text.substr(text.rfind("100%"));
  EXPECT_THAT(last_line, HasSubstr(" -"));
  EXPECT_THAT(FormatSweep(table, /*tokens=*/true), HasSubstr("token-weighted hit rate (%)"));
}

TEST(ReplaySweepTest, RejectsBadPoliciesAndCapacities) {
  const ReplayTrace trace = SmallAgentic();
  SweepOptions options;
  options.policies = {"lru", "fifo"};
  EXPECT_CODE(RunSweep(trace, options), absl::StatusCode::kInvalidArgument);
  options.policies = {""};
  EXPECT_CODE(RunSweep(trace, options), absl::StatusCode::kInvalidArgument);
  options.policies = {"lru"};
  options.capacities = {0.5, 1.5};
  EXPECT_CODE(RunSweep(trace, options), absl::StatusCode::kInvalidArgument);
  options.capacities = {0};
  EXPECT_CODE(RunSweep(trace, options), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::tiering::sim
