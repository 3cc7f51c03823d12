// deploy/cluster.sh as a user runs it: `up 3` starts etcd and three strata-nodes that
// register, `status` lists their records, `down` stops every process (the nodes leave etcd
// first). The script is given the built strata-node (STRATA_CLUSTER_BIN) so the test does
// not rebuild.
#include <string>
#include <vector>

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

#include "nlohmann/json.hpp"
#include "strata/base/status_test_macros.h"
#include "strata/testing/file.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

namespace strata::integration::cluster_script_test {
namespace {

using strata::testing::ProgramResult;
using strata::testing::RunProgram;

// The pids in <dir>/*.pid that still run.
int Running(const std::string& dir, const std::vector<std::string>& names) {
  int running = 0;
  for (const std::string& name : names) {
    const std::string pid = strata::testing::ReadFileToString(dir + "/" + name + ".pid");
    if (!pid.empty() && ::kill(std::stoi(pid), 0) == 0) ++running;
  }
  return running;
}

TEST(ClusterScriptTest, UpStatusDown) {
  strata::testing::ScopedTempDir temp;
  const std::string dir = temp.path() + "/cluster";
  const std::map<std::string, std::string> env = {{"STRATA_CLUSTER_DIR", dir},
                                                  {"STRATA_CLUSTER_BIN", STRATA_NODE_DIR},
                                                  {"STRATA_CLUSTER_DRAM", "64MiB"},
                                                  {"STRATA_CLUSTER_SSD", "0"}};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), STRATA_CLUSTER_SCRIPT);
    absl::StatusOr<ProgramResult> result =
        RunProgram("/bin/bash", args, {.env = env, .timeout = absl::Seconds(120)});
    EXPECT_OK(result.status());
    return result.value_or(ProgramResult{});
  };
  const std::vector<std::string> processes = {"etcd", "node1", "node2", "node3"};

  const ProgramResult up = run({"up", "3"});
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  EXPECT_NE(up.out.find("node3  "), std::string::npos) << up.out;
  EXPECT_EQ(Running(dir, processes), 4);
  const std::string env_file = strata::testing::ReadFileToString(dir + "/cluster.env");
  EXPECT_NE(env_file.find("ETCD_ENDPOINT=127.0.0.1:"), std::string::npos) << env_file;
  EXPECT_NE(env_file.find("NODE3_GRPC=127.0.0.1:"), std::string::npos) << env_file;
  // Prometheus's targets: one entry per node, its HTTP endpoint labelled with its id.
  const nlohmann::json targets = nlohmann::json::parse(
      strata::testing::ReadFileToString(dir + "/prometheus/strata-targets.json"));
  ASSERT_EQ(targets.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const std::string http =
        absl::StrCat("NODE", i + 1, "_HTTP=", targets[i]["targets"][0].get<std::string>());
    EXPECT_NE(env_file.find(http), std::string::npos) << http;
    const std::string id =
        absl::StrCat("NODE", i + 1, "_ID=", targets[i]["labels"]["node"].get<std::string>());
    EXPECT_NE(env_file.find(id), std::string::npos) << id;
    EXPECT_EQ(targets[i]["labels"]["cluster"], "local");
  }

  // A second `up` refuses: the cluster is running.
  EXPECT_EQ(run({"up", "1"}).exit_code, 1);

  const ProgramResult status = run({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  int records = 0;
  for (absl::string_view line : absl::StrSplit(status.out, '\n')) {
    if (absl::StartsWith(line, "{") && line.find("\"state\":\"serving\"") != line.npos) ++records;
  }
  EXPECT_EQ(records, 3) << status.out;

  const ProgramResult down = run({"down", "--purge"});
  ASSERT_EQ(down.exit_code, 0) << down.out << down.err;
  EXPECT_NE(down.out.find("stopped 3 node(s) and etcd"), std::string::npos) << down.out;
  EXPECT_EQ(strata::testing::ReadFileToString(dir + "/cluster.env"), "");  // purged
  EXPECT_EQ(run({"status"}).exit_code, 1);
}

TEST(ClusterScriptTest, BadArgumentsPrintUsage) {
  const absl::StatusOr<ProgramResult> bad =
      RunProgram("/bin/bash", {STRATA_CLUSTER_SCRIPT, "up", "zero"});
  ASSERT_OK(bad.status());
  EXPECT_EQ(bad->exit_code, 2);
  EXPECT_NE(bad->out.find("deploy/cluster.sh up N"), std::string::npos) << bad->out;
}

}  // namespace
}  // namespace strata::integration::cluster_script_test
