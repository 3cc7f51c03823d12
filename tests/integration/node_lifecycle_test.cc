// strata-node as a process: signals, exit codes, the printed listen lines, config file
// and flag precedence, one node per data directory, --help and bad flags.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/status_convert.h"
#include "strata/testing/node_process.h"
#include "strata/testing/temp_dir.h"
#include "strata/testing/wire_requests.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_lifecycle_test {

using strata::testing::BeginPutFor;
using strata::testing::Call;
using strata::testing::ContextWithDeadline;
using strata::testing::NodeProcess;
using strata::testing::ProgramResult;
using strata::testing::ScopedTempDir;
using strata::testing::TinyNamespace;
using strata::testing::TokenRun;

namespace {

// Lines of `text` that start with "strata-node: ".
std::vector<std::string> NodeLines(const std::string& text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "strata-node: ")) lines.emplace_back(line);
  }
  return lines;
}

uint64_t DramCapacity(const NodeProcess& node) {
  v1::TiersResponse tiers;
  const absl::Status s =
      Call(node.AdminStub()->Tiers(ContextWithDeadline().get(), v1::TiersRequest(), &tiers));
  return s.ok() && tiers.tiers_size() > 0 ? tiers.tiers(0).capacity_bytes() : 0;
}

// expires_in_ms of a fresh put: shows the node's put_ttl.
uint64_t PutExpiresInMs(const NodeProcess& node) {
  v1::BeginPutResponse put;
  const absl::Status s = Call(node.StoreStub()->BeginPut(
      ContextWithDeadline().get(), BeginPutFor(TinyNamespace("ttl"), TokenRun(0, 4)), &put));
  return s.ok() ? put.expires_in_ms() : 0;
}

void ExpectCleanStop(NodeProcess& node, int signal, const std::string& name) {
  const absl::Time start = absl::Now();
  node.Signal(signal);
  absl::StatusOr<int> code = node.WaitExit(absl::Seconds(20));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  const std::vector<std::string> lines = NodeLines(node.StdoutText());
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(lines[lines.size() - 2], "strata-node: draining (" + name + ")");
  EXPECT_EQ(lines.back(), "strata-node: stopped");
}

TEST(NodeLifecycleTest, PrintsListenLinesAndStopsCleanlyOnSigterm) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, NodeProcess::Start());
  const std::vector<std::string> lines = NodeLines(node->StdoutText());
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "strata-node: grpc listening on " + node->grpc_address());
  EXPECT_TRUE(absl::StartsWith(node->grpc_address(), "127.0.0.1:"));
  EXPECT_NE(node->grpc_address(), "127.0.0.1:0");  // the bound port, not the asked one
  EXPECT_TRUE(absl::StartsWith(lines[1], "strata-node: dataplane ")) << lines[1];
  EXPECT_TRUE(absl::StrContains(lines[1], " " + node->data_plane_address())) << lines[1];
  EXPECT_EQ(node->ReadyField("pid"), std::to_string(node->pid()));
  EXPECT_EQ(node->ReadyField("data_dir"), node->data_dir());
  EXPECT_EQ(node->ReadyField("dram_bytes"), std::to_string(64 << 20));
  std::ifstream pid_file(node->data_dir() + "/strata-node.pid");
  pid_t pid = 0;
  pid_file >> pid;
  EXPECT_EQ(pid, node->pid());
  ExpectCleanStop(*node, SIGTERM, "SIGTERM");
}

TEST(NodeLifecycleTest, StopsCleanlyOnSigint) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, NodeProcess::Start());
  ExpectCleanStop(*node, SIGINT, "SIGINT");
}

TEST(NodeLifecycleTest, SigtermWithAPendingPutWaitsDrainTimeoutThenExitsZero) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                       NodeProcess::Start({.args = {"--drain_timeout=1s"}}));
  ASSERT_GT(PutExpiresInMs(*node), 0u);  // a put stays pending
  const absl::Time start = absl::Now();
  node->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(int code, node->WaitExit(absl::Seconds(20)));
  EXPECT_EQ(code, 0);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(900));  // it did wait for the put
  EXPECT_TRUE(absl::StrContains(node->StderrText(), "still in flight")) << node->StderrText();
}

TEST(NodeLifecycleTest, SecondSignalDuringTheDrainExitsOneAtOnce) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                       NodeProcess::Start({.args = {"--drain_timeout=60s"}}));
  ASSERT_GT(PutExpiresInMs(*node), 0u);  // the drain will wait for this put
  node->Signal(SIGTERM);
  ASSERT_OK(node->WaitForStdout("strata-node: draining (SIGTERM)", absl::Seconds(20)));
  const absl::Time start = absl::Now();
  node->Signal(SIGINT);
  ASSERT_OK_AND_ASSIGN(int code, node->WaitExit(absl::Seconds(20)));
  EXPECT_EQ(code, 1);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_TRUE(absl::StrContains(node->StderrText(), "second signal (SIGINT): exiting now"));
}

TEST(NodeLifecycleTest, SigkillLeavesNoStaleLock) {
  const ScopedTempDir temp_dir("strata-node-sigkill");
  const std::string dir = temp_dir.path();
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<NodeProcess> node,
      NodeProcess::Start({.args = {"--data_dir=" + dir}, .default_data_dir = false}));
  node->Signal(SIGKILL);
  ASSERT_OK_AND_ASSIGN(int code, node->WaitExit(absl::Seconds(20)));
  EXPECT_EQ(code, 128 + SIGKILL);
  // The kernel dropped the dead node's lock: a new node takes the directory.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<NodeProcess> next,
      NodeProcess::Start({.args = {"--data_dir=" + dir}, .default_data_dir = false}));
  EXPECT_OK(next->WaitHealthy(absl::Seconds(5)));
  next.reset();
}

TEST(NodeLifecycleTest, TwoNodesCannotShareADataDir) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> first, NodeProcess::Start());
  const ProgramResult second = NodeProcess::RunToExit(
      {"--grpc_listen=127.0.0.1:0", "--dataplane_listen=127.0.0.1:0", "--http_listen=127.0.0.1:0",
       "--dram_bytes=64MiB", "--data_dir=" + first->data_dir()});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(
      second.err, "strata-node: cannot start: FAILED_PRECONDITION: data dir " + first->data_dir() +
                      " is in use by another strata-node (pid " + std::to_string(first->pid()) +
                      ")"))
      << second.err;
  EXPECT_EQ(NodeLines(second.out).size(), 0u);      // never said it listens
  EXPECT_OK(first->WaitHealthy(absl::Seconds(5)));  // the first is unharmed
}

// A DRAM tier larger than the machine's memory is refused at start (exit 1, the sizes named),
// before the SSD tier or the metadata store are made.
TEST(NodeLifecycleTest, ADramTierLargerThanTheMachineRefusesToStart) {
  const ScopedTempDir temp_dir("strata-node-dram-test");
  const ProgramResult run = NodeProcess::RunToExit(
      {"--grpc_listen=127.0.0.1:0", "--dataplane_listen=127.0.0.1:0",
       "--http_listen=", "--dram_bytes=1000TiB", "--data_dir=" + temp_dir.path()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err,
                                "cannot start: FAILED_PRECONDITION: dram_bytes: 1000 TiB "
                                "exceeds this machine's memory ("))
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(temp_dir.path() + "/ssd.tier"));
  EXPECT_FALSE(std::filesystem::exists(temp_dir.path() + "/meta"));
}

TEST(NodeLifecycleTest, TwoNodesCannotShareAPort) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> first, NodeProcess::Start());
  const ProgramResult second = NodeProcess::RunToExit({"--grpc_listen=" + first->grpc_address(),
                                                       "--dataplane_listen=127.0.0.1:0",
                                                       "--dram_bytes=64MiB", "--data_dir=other"});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(second.err, "cannot start: UNAVAILABLE: cannot listen"))
      << second.err;
  EXPECT_OK(first->WaitHealthy(absl::Seconds(5)));
}

TEST(NodeLifecycleTest, ConfigFileOverridesDefaultsAndFlagsOverrideConfig) {
  const ScopedTempDir temp_dir("strata-node-config-test");
  const std::string dir = temp_dir.path();
  const std::string config = dir + "/node.conf";
  std::ofstream(config) << "# test config\n"
                           "grpc_listen = 127.0.0.1:0\n"
                           "dram_bytes = 96MiB\n"
                           "put_ttl = 7s\n"
                           "data_dir = "
                        << dir
                        << "/from-config\n"
                           "dataplane_listen = 127.0.0.1:0\n"
                           "http_listen = 127.0.0.1:0\n";
  {
    // Config file alone; STRATA_DATA loses to the file's data_dir.
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                         NodeProcess::Start({.args = {"--config", config},
                                             .default_listen_and_dram = false,
                                             .default_data_dir = false,
                                             .env = {{"STRATA_DATA", dir + "/from-env"}}}));
    EXPECT_EQ(DramCapacity(*node), uint64_t{96} << 20);
    const uint64_t ttl = PutExpiresInMs(*node);
    EXPECT_GT(ttl, 6000u);
    EXPECT_LE(ttl, 7000u);
    EXPECT_EQ(node->ReadyField("data_dir"), dir + "/from-config");
    v1::HealthResponse health;
    ASSERT_OK(
        Call(node->StoreStub()->Health(ContextWithDeadline().get(), v1::HealthRequest(), &health)));
    EXPECT_EQ(health.data_plane().ucx_address(), node->data_plane_address());
    EXPECT_NE(health.data_plane().ucx_address(), "127.0.0.1:7401");  // the file's, not default
  }
  {
    // Flags beat the file.
    ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<NodeProcess> node,
        NodeProcess::Start({.args = {"--config=" + config, "--dram_bytes=64MiB", "--put_ttl", "9s",
                                     "--data_dir=" + dir + "/from-flag"},
                            .default_listen_and_dram = false,
                            .default_data_dir = false}));
    EXPECT_EQ(DramCapacity(*node), uint64_t{64} << 20);
    const uint64_t ttl = PutExpiresInMs(*node);
    EXPECT_GT(ttl, 8000u);
    EXPECT_LE(ttl, 9000u);
    EXPECT_EQ(node->ReadyField("data_dir"), dir + "/from-flag");
  }
  {
    // STRATA_DATA beats the default.
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                         NodeProcess::Start({.default_data_dir = false,
                                             .env = {{"STRATA_DATA", dir + "/from-env"}}}));
    EXPECT_EQ(node->ReadyField("data_dir"), dir + "/from-env");
    EXPECT_TRUE(std::filesystem::exists(dir + "/from-env/strata-node.pid"));
  }
}

TEST(NodeLifecycleTest, BadFlagsAndConfigExitTwoWithOneLine) {
  const auto expect_usage_error = [](const ProgramResult& r, const std::string& message) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "strata-node: " + message + "\n");
    EXPECT_TRUE(r.out.empty());
  };
  expect_usage_error(NodeProcess::RunToExit({"--nope=1"}), "unknown flag --nope (see --help)");
  expect_usage_error(NodeProcess::RunToExit({"serve"}),
                     "unexpected argument \"serve\" (see --help)");
  expect_usage_error(NodeProcess::RunToExit({"--lease_ttl=soon"}),
                     "--lease_ttl: \"soon\" is not a duration (e.g. 30s, 500ms, 10m, 1h30m)");
  expect_usage_error(NodeProcess::RunToExit({"--config=/nonexistent/strata.conf"}),
                     "/nonexistent/strata.conf: No such file or directory (errno 2)");

  const std::string config = ::testing::TempDir() + "/strata-node-bad.conf";
  std::ofstream(config) << "grpc_listen = 127.0.0.1:0\nbogus = 1\n";
  expect_usage_error(NodeProcess::RunToExit({"--config", config}),
                     config + ":2: unknown key \"bogus\"");
  std::filesystem::remove(config);
}

TEST(NodeLifecycleTest, HelpAndVersion) {
  const ProgramResult help = NodeProcess::RunToExit({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(help.out, "usage: strata-node"));
  for (const char* key : {"--grpc_listen=", "--dram_bytes=", "--lease_ttl=", "--put_ttl=",
                          "--data_dir=", "--config=", "--drain_timeout="}) {
    EXPECT_TRUE(absl::StrContains(help.out, key)) << key;
  }
  const ProgramResult version = NodeProcess::RunToExit({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, std::string("strata-node ") + STRATA_VERSION + "\n");
}

// Whether a TCP listener could bind 127.0.0.1:port right now.
bool PortIsFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

// With no arguments at all: loopback 7400 (7401 for the data plane, 7402 for HTTP), ./var
// in the working directory, DRAM sized from free memory. The ports may be taken on a
// shared machine; then this is skipped.
TEST(NodeLifecycleTest, NoArgumentsRunsOnEmbeddedDefaults) {
  if (!PortIsFree(7400) || !PortIsFree(7401) || !PortIsFree(7402)) {
    GTEST_SKIP() << "127.0.0.1:7400, :7401 or :7402 is in use on this machine";
  }
  const ScopedTempDir temp_dir("strata-node-noargs");
  const std::string cwd = temp_dir.path();
  absl::StatusOr<std::unique_ptr<NodeProcess>> node = NodeProcess::Start(
      {.default_listen_and_dram = false, .default_data_dir = false, .env = {}, .cwd = cwd});
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ((*node)->data_plane_address(), "127.0.0.1:7401");
  EXPECT_EQ((*node)->grpc_address(), "127.0.0.1:7400");
  EXPECT_EQ((*node)->http_address(), "127.0.0.1:7402");
  EXPECT_EQ((*node)->ReadyField("data_dir"), cwd + "/var");
  const uint64_t dram = std::stoull((*node)->ReadyField("dram_bytes"));
  EXPECT_GE(dram, uint64_t{64} << 20);
  EXPECT_LE(dram, uint64_t{8} << 30);
  EXPECT_EQ(DramCapacity(**node), dram);
  ExpectCleanStop(**node, SIGTERM, "SIGTERM");
}

}  // namespace
}  // namespace strata::integration::node_lifecycle_test
