#include "strata/tiering/sim/mooncake_trace.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/lru_policy.h"
#include "strata/tiering/sim/belady_policy.h"
#include "strata/tiering/sim/prefix_cache_replay.h"

#ifndef STRATA_MOONCAKE_TRACE
#define STRATA_MOONCAKE_TRACE ""
#endif

namespace strata::tiering::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MooncakeTraceTest, ParsesRequestsAndSkipsWhatItDoesNotNeed) {
  const std::string text =
      "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 5, "
      "\"hash_ids\": [0, 1, 2]}\n"
      "\n"
      "  {\"hash_ids\":[0,1,7],\"extra\":{\"a\":[1,{\"b\":\"x\\\"y\\u00e9\"}],\"c\":null},"
      "\"timestamp\":12.5,\"flag\":true,\"input_length\":1536}\r\n"
      "{\"hash_ids\": [], \"timestamp\": 20}";
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace, ParseMooncakeTrace(text));
  EXPECT_EQ(trace.name, "mooncake");
  EXPECT_EQ(trace.block_tokens, 512u);
  ASSERT_EQ(trace.requests.size(), 3u);
  EXPECT_THAT(trace.requests[0].blocks, ElementsAre(1, 2, 3));  // ids + 1
  EXPECT_EQ(trace.requests[0].last_block_tokens, 1100u - 1024u);
  EXPECT_EQ(trace.requests[0].session, 0u);
  EXPECT_THAT(trace.requests[1].blocks, ElementsAre(1, 2, 8));
  EXPECT_EQ(trace.requests[1].last_block_tokens, 512u);  // 1536 = 3 full blocks
  EXPECT_EQ(trace.requests[1].timestamp_ms, 12.5);
  EXPECT_TRUE(trace.requests[2].blocks.empty());
  EXPECT_EQ(trace.requests[2].last_block_tokens, 0u);
  EXPECT_OK(ValidateTrace(trace));
}

TEST(MooncakeTraceTest, LastBlockTokensAreClampedAndDefaultToFull) {
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace,
                       ParseMooncakeTrace("{\"hash_ids\": [4, 5]}\n"
                                          "{\"hash_ids\": [4, 6], \"input_length\": 9999}\n"
                                          "{\"hash_ids\": [4, 9], \"input_length\": 3}\n",
                                          MooncakeTraceOptions{.block_tokens = 100}));
  EXPECT_EQ(trace.block_tokens, 100u);
  EXPECT_EQ(trace.requests[0].last_block_tokens, 100u);
  EXPECT_EQ(trace.requests[1].last_block_tokens, 100u);
  EXPECT_EQ(trace.requests[2].last_block_tokens, 1u);
}

TEST(MooncakeTraceTest, APartialLastBlockCanBeLeftOut) {
  const MooncakeTraceOptions options{.block_tokens = 100, .drop_partial_last_block = true};
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace,
                       ParseMooncakeTrace("{\"hash_ids\": [4, 5], \"input_length\": 150}\n"
                                          "{\"hash_ids\": [4, 6], \"input_length\": 200}\n"
                                          "{\"hash_ids\": [7], \"input_length\": 50}\n",
                                          options));
  ASSERT_EQ(trace.requests.size(), 3u);
  EXPECT_THAT(trace.requests[0].blocks, ElementsAre(5));
  EXPECT_EQ(trace.requests[0].last_block_tokens, 100u);
  EXPECT_THAT(trace.requests[1].blocks, ElementsAre(5, 7));  // 200 tokens: both full
  EXPECT_TRUE(trace.requests[2].blocks.empty());
  EXPECT_EQ(trace.requests[2].last_block_tokens, 0u);
}

absl::Status ParseError(const std::string& text) { return ParseMooncakeTrace(text).status(); }

TEST(MooncakeTraceTest, ErrorsNameTheLine) {
  const std::string good = "{\"hash_ids\": [0, 1]}\n";
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{good + "{\"hash_ids\": [0, 1]\n", "line 2, column 20: expected ',' or '}'"},
           Case{good + "\n[1, 2]\n", "line 3, column 1: expected '{'"},
           Case{good + "{\"timestamp\": 3}\n", "line 2: no hash_ids"},
           Case{good + "{\"hash_ids\": 5}\n", "line 2, column 14: hash_ids is not an array"},
           Case{good + "{\"hash_ids\": [0, 1.5]}\n", "line 2, column 18: a hash id is not"},
           Case{good + "{\"hash_ids\": [-1]}\n", "line 2, column 15: a hash id is not"},
           Case{good + "{\"hash_ids\": [0, x]}\n", "line 2, column 18: expected a number"},
           Case{good + "{\"hash_ids\": [0], \"timestamp\": \"now\"}\n",
                "line 2, column 32: expected a number for timestamp"},
           Case{good + "{\"hash_ids\": [0]} trailing\n", "line 2, column 19: unexpected text"},
           Case{good + "{\"hash_ids\": [0], \"s\": \"open\n", "line 2, column 29: unterminated"},
           Case{good + "{hash_ids: [0]}\n", "line 2, column 2: expected a string"},
           Case{good + "{\"hash_ids\": [7, 1]}\n",
                "line 2: hash id 1 follows hash id 7 here but hash id 0 earlier"},
           Case{"{\"hash_ids\": [3, 3]}\n", "line 1: hash id 3 follows hash id 3 here"},
       }) {
    const absl::Status status = ParseError(c.text);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message)) << c.text;
  }
  EXPECT_CODE(ParseMooncakeTrace(good, MooncakeTraceOptions{.block_tokens = 0}),
              absl::StatusCode::kInvalidArgument);
}

TEST(MooncakeTraceTest, LoadReportsAMissingFile) {
  const absl::StatusOr<ReplayTrace> trace = LoadMooncakeTrace("/nonexistent/strata/trace.jsonl");
  EXPECT_CODE(trace, absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(trace.status().message()), HasSubstr("/nonexistent/strata"));
}

// The public trace, when the checkout has it beside it: the counts the README quotes, and a
// quick replay in which Belady is at least LRU.
TEST(MooncakeTraceTest, TheRealTraceIfPresent) {
  const std::string path = STRATA_MOONCAKE_TRACE;
  if (path.empty() || !std::ifstream(path).good()) {
    GTEST_SKIP() << "no Mooncake trace at \"" << path << "\"";
  }
  ASSERT_OK_AND_ASSIGN(ReplayTrace trace, LoadMooncakeTrace(path));
  const TraceSummary summary = Summarize(trace);
  EXPECT_EQ(summary.requests, 12031u);
  EXPECT_EQ(summary.block_reads, 288500u);
  EXPECT_EQ(summary.distinct_blocks, 182790u);
  EXPECT_NEAR(summary.unbounded_block_hit_rate, 0.3664, 0.0001);

  const NextUses next_uses = ComputeNextUses(trace);
  ReplayOptions options;
  options.capacity_bytes = summary.distinct_blocks / 20;
  LruPolicy lru;
  BeladyPolicy belady;
  ASSERT_OK_AND_ASSIGN(ReplayResult lru_result, ReplayPrefixCache(trace, options, &lru));
  ASSERT_OK_AND_ASSIGN(ReplayResult belady_result,
                       ReplayPrefixCache(trace, options, &belady, &next_uses));
  EXPECT_EQ(lru_result.block_reads, 288500u);
  EXPECT_GT(lru_result.block_hits, 0u);
  EXPECT_GE(belady_result.block_hits, lru_result.block_hits);
  EXPECT_LE(belady_result.block_hit_rate(), summary.unbounded_block_hit_rate);
}

}  // namespace
}  // namespace strata::tiering::sim
