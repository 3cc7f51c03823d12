// strata-replay end to end: a real strata-node, the real strata-replay binary replaying the
// first 300 requests of the Mooncake conversation trace as fast as it can (--speedup 0),
// its --json report checked: prefix hits (the trace shares prefixes), bytes written, no
// failed call, both PNGs written, and the node's live miss-ratio curve within 0.05 of the
// exact curve of the same page stream. Skipped, with the reason printed, when the trace
// file is absent.
#include <cstdio>
#include <string>

#include <sys/stat.h>

#include "gtest/gtest.h"

#include "strata/testing/file.h"
#include "strata/testing/json.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::replay_test {

using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;
using strata::testing::ProgramOptions;
using strata::testing::ProgramResult;
using strata::testing::ReadFileToString;
using strata::testing::RunProgram;
using strata::testing::ScopedTempDir;

namespace {

// The number `key` of the flat JSON report; NaN when absent or not a number.
double JsonNumber(const nlohmann::json& report, const std::string& key) {
  const auto it = report.find(key);
  return it != report.end() && it->is_number() ? it->get<double>() : std::nan("");
}

TEST(ReplayTest, MooncakeHeadAgainstARealNode) {
  const std::string trace = STRATA_MOONCAKE_TRACE;
  struct stat st;
  if (stat(trace.c_str(), &st) != 0) {
    GTEST_SKIP() << "trace " << trace << " is absent";
  }
  NodeProcessOptions node_options;
  node_options.args = {"--dram_bytes=512MiB", "--http_listen="};
  absl::StatusOr<std::unique_ptr<NodeProcess>> node = NodeProcess::Start(node_options);
  ASSERT_TRUE(node.ok()) << node.status();

  const ScopedTempDir dir("strata-replay-test");
  const std::string plots = dir.path() + "/plots";
  const std::vector<std::string> args = {"--node",
                                         (*node)->grpc_address(),
                                         "--speedup",
                                         "0",
                                         "--max-requests",
                                         "300",
                                         "--concurrency",
                                         "2",
                                         "--decode-lookups",
                                         "1",
                                         "--layers",
                                         "1",
                                         "--kv-heads",
                                         "1",
                                         "--head-dim",
                                         "8",
                                         "--json",
                                         "--plot-dir",
                                         plots,
                                         trace};
  ProgramOptions replay_options;
  replay_options.timeout = absl::Seconds(240);
  const absl::StatusOr<ProgramResult> replay =
      RunProgram(STRATA_REPLAY_BINARY, args, replay_options);
  ASSERT_TRUE(replay.ok()) << replay.status();  // DEADLINE_EXCEEDED: not finished in 240 s
  const std::string& json = replay->out;
  ASSERT_EQ(replay->exit_code, 0) << replay->err << json;
  absl::StatusOr<nlohmann::json> parsed = strata::testing::ParseJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << json;
  const nlohmann::json& report = *parsed;
  EXPECT_TRUE(report.at("requests").is_number_unsigned()) << json;  // integers stay integers

  EXPECT_EQ(JsonNumber(report, "requests"), 300) << json;
  EXPECT_EQ(JsonNumber(report, "failed_requests"), 0) << json;
  EXPECT_EQ(JsonNumber(report, "errors"), 0) << json;
  EXPECT_GT(JsonNumber(report, "page_hit_rate"), 0) << json;
  EXPECT_GT(JsonNumber(report, "token_hit_rate"), 0) << json;
  EXPECT_GT(JsonNumber(report, "bytes_written"), 0) << json;
  EXPECT_GT(JsonNumber(report, "bytes_read"), 0) << json;
  // One decode lookup per request, and it finds the whole context the request just put.
  EXPECT_EQ(JsonNumber(report, "decode_lookups"), 300) << json;
  EXPECT_EQ(JsonNumber(report, "decode_page_hit_rate"), 1) << json;
  // The live curve came back and is close to the exact one.
  EXPECT_EQ(report.value("live_curve", false), true) << json;
  const double mae = JsonNumber(report, "mae");
  ASSERT_FALSE(std::isnan(mae)) << json;
  EXPECT_LE(mae, 0.05) << json;
  std::printf("strata-replay on 300 requests: page hit rate %.4f, MAE live vs exact %.4f\n",
              JsonNumber(report, "page_hit_rate"), mae);
  for (const char* name : {"/hit_rate.png", "/mrc.png"}) {
    const std::string png = ReadFileToString(plots + name);
    ASSERT_GE(png.size(), 8u) << name;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << name;
  }
}

}  // namespace
}  // namespace strata::integration::replay_test
