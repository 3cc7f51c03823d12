#include "strata/tiering/sim/agentic_trace.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::tiering::sim {
namespace {

AgenticTraceOptions Small() {
  AgenticTraceOptions options;
  options.sessions = 200;
  return options;
}

bool IsPrefix(const std::vector<BlobId>& prefix, const std::vector<BlobId>& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

TEST(AgenticTraceTest, SameSeedSameTraceAndItIsAPrefixTrace) {
  ASSERT_OK_AND_ASSIGN(ReplayTrace a, GenerateAgenticTrace(Small()));
  ASSERT_OK_AND_ASSIGN(ReplayTrace b, GenerateAgenticTrace(Small()));
  AgenticTraceOptions other = Small();
  other.seed = 2;
  ASSERT_OK_AND_ASSIGN(ReplayTrace c, GenerateAgenticTrace(other));
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t r = 0; r < a.requests.size(); ++r) {
    ASSERT_EQ(a.requests[r].blocks, b.requests[r].blocks);
    ASSERT_EQ(a.requests[r].session, b.requests[r].session);
  }
  EXPECT_NE(Summarize(a).block_reads, Summarize(c).block_reads);
  EXPECT_OK(ValidateTrace(a));
  EXPECT_EQ(a.name, "agentic");
  const TraceSummary summary = Summarize(a);
  EXPECT_EQ(summary.sessions, 200u);
  EXPECT_GT(summary.requests, 200u);
  // Prefix reuse is what the generator is for: most blocks read are re-reads.
  EXPECT_GT(summary.unbounded_block_hit_rate, 0.5);
  EXPECT_LT(summary.unbounded_block_hit_rate, 1.0);
  for (const ReplayRequest& request : a.requests) {
    EXPECT_EQ(request.last_block_tokens, a.block_tokens);
  }
  for (size_t r = 1; r < a.requests.size(); ++r) {
    ASSERT_LE(a.requests[r - 1].timestamp_ms, a.requests[r].timestamp_ms);
  }
}

TEST(AgenticTraceTest, WithoutBranchesOrCompactionEachTurnExtendsTheLast) {
  AgenticTraceOptions options = Small();
  options.branch_probability = 0;
  options.compact_blocks = 1000000;
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace, GenerateAgenticTrace(options));
  absl::flat_hash_map<uint64_t, const ReplayRequest*> last;
  for (const ReplayRequest& request : trace.requests) {
    const ReplayRequest*& previous = last[request.session];
    if (previous != nullptr) {
      ASSERT_TRUE(IsPrefix(previous->blocks, request.blocks));
      ASSERT_GT(request.blocks.size(), previous->blocks.size());
    }
    previous = &request;
  }
}

TEST(AgenticTraceTest, CompactionBoundsTheContextAndStartsAFreshChain) {
  AgenticTraceOptions options = Small();
  options.branch_probability = 0;
  options.compact_blocks = 48;
  options.turns_median = 40;
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace, GenerateAgenticTrace(options));
  absl::flat_hash_map<uint64_t, const ReplayRequest*> last;
  int compactions = 0;
  for (const ReplayRequest& request : trace.requests) {
    const ReplayRequest*& previous = last[request.session];
    if (previous != nullptr && !IsPrefix(previous->blocks, request.blocks)) {
      ++compactions;
      // The old context was past the threshold; the new one is prompt + summary + turn.
      EXPECT_GT(previous->blocks.size(), options.compact_blocks);
      EXPECT_LT(request.blocks.size(), previous->blocks.size());
      EXPECT_EQ(request.blocks.front(), previous->blocks.front());  // same system prompt
    }
    previous = &request;
  }
  EXPECT_GT(compactions, 10);
}

TEST(AgenticTraceTest, BranchesCutBackToAnEarlierTurn) {
  AgenticTraceOptions options = Small();
  options.branch_probability = 1;
  options.compact_blocks = 1000000;
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace, GenerateAgenticTrace(options));
  absl::flat_hash_map<uint64_t, const ReplayRequest*> last;
  int forks = 0;
  for (const ReplayRequest& request : trace.requests) {
    const ReplayRequest*& previous = last[request.session];
    if (previous != nullptr) {
      // Every later turn forks: it shares a proper prefix with the previous one and then
      // differs.
      ASSERT_FALSE(IsPrefix(previous->blocks, request.blocks));
      EXPECT_EQ(request.blocks.front(), previous->blocks.front());
      ++forks;
    }
    previous = &request;
  }
  EXPECT_GT(forks, 100);
}

TEST(AgenticTraceTest, RejectsOptionsOutOfRange) {
  const auto with = [](auto change) {
    AgenticTraceOptions options = Small();
    change(options);
    return GenerateAgenticTrace(options).status();
  };
  using O = AgenticTraceOptions;
  EXPECT_CODE(with([](O& o) { o.sessions = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.system_prompts = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.system_prompt_blocks_min = 40; }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.think_s = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.turns_median = -1; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.idle_probability = 1.5; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.compact_blocks = 40; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(with([](O& o) { o.block_tokens = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_OK(with([](O& o) { o.turns_sigma = 0; }));
}

}  // namespace
}  // namespace strata::tiering::sim
