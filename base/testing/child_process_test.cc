#include "strata/testing/child_process.h"

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::testing {
namespace {

std::unique_ptr<ChildProcess> StartShell(const std::string& script,
                                         const ChildProcessOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start("/bin/sh", {"-c", script}, options);
  CHECK(child.ok()) << child.status();
  return *std::move(child);
}

bool HasLine(std::string_view text, std::string_view line) {
  return text.find(std::string(line) + "\n") != std::string_view::npos;
}

TEST(TestingChildProcessTest, WaitsForALineThenStopsOnASignal) {
  std::unique_ptr<ChildProcess> child = StartShell("echo ready; exec sleep 30");
  ASSERT_OK(child->WaitForStdout([](std::string_view out) { return HasLine(out, "ready"); },
                                 absl::Seconds(30)));
  EXPECT_FALSE(child->reaped());
  EXPECT_EQ(child->PollExit(), std::nullopt);
  child->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(const int code, child->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 128 + SIGTERM);
  EXPECT_TRUE(child->reaped());
}

TEST(TestingChildProcessTest, AChildThatExitsFirstIsAFailedPrecondition) {
  std::unique_ptr<ChildProcess> child = StartShell("echo starting; echo broken >&2; exit 3");
  const absl::Status status = child->WaitForStdout(
      [](std::string_view out) { return HasLine(out, "ready"); }, absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "exited with 3")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "broken")) << status;
  ASSERT_OK_AND_ASSIGN(const int code, child->WaitExit(absl::ZeroDuration()));
  EXPECT_EQ(code, 3);
  EXPECT_EQ(child->StdoutText(), "starting\n");
  EXPECT_EQ(child->StderrText(), "broken\n");
}

TEST(TestingChildProcessTest, ADeadlineLeavesTheChildRunningUntilDestroyed) {
  std::unique_ptr<ChildProcess> child = StartShell("exec sleep 30");
  const absl::Status status =
      child->WaitForStdout([](std::string_view) { return false; }, absl::Milliseconds(50));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_EQ(child->WaitExit(absl::Milliseconds(10)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  const pid_t pid = child->pid();
  const std::string dir = child->temp_dir();
  EXPECT_EQ(kill(pid, 0), 0);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  child.reset();
  // Killed and reaped: the pid is gone, and so is the directory.
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(TestingChildProcessTest, KillReportsTheSignal) {
  std::unique_ptr<ChildProcess> child = StartShell("exec sleep 30");
  EXPECT_EQ(child->Kill(), 128 + SIGKILL);
  EXPECT_EQ(child->Kill(), 128 + SIGKILL);  // reaped once; asking again is harmless
}

TEST(TestingChildProcessTest, EnvironmentAndWorkingDirectory) {
  ChildProcessOptions options;
  options.env["STRATA_CHILD_TEST"] = "value-1";
  options.temp_prefix = "strata-child-test";
  std::unique_ptr<ChildProcess> child = StartShell("echo \"$STRATA_CHILD_TEST\"; pwd", options);
  ASSERT_OK_AND_ASSIGN(const int code, child->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(
      child->StdoutText(),
      absl::StrCat("value-1\n", std::filesystem::canonical(child->temp_dir()).string(), "\n"));
  EXPECT_TRUE(absl::StrContains(child->temp_dir(), "/strata-child-test-")) << child->temp_dir();

  options.cwd = "/";
  child = StartShell("pwd", options);
  ASSERT_OK_AND_ASSIGN(const int root_code, child->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(root_code, 0);
  EXPECT_EQ(child->StdoutText(), "/\n");
}

TEST(TestingChildProcessTest, AMissingBinaryExits127) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start("/nonexistent/strata-binary", {});
  ASSERT_OK(child.status());
  ASSERT_OK_AND_ASSIGN(const int code, (*child)->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 127);
}

}  // namespace
}  // namespace strata::testing
