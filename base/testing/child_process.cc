#include "strata/testing/child_process.h"

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "strata/base/errno_status.h"
#include "strata/testing/file.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

namespace strata::testing {
namespace {

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::string& binary, const std::vector<std::string>& args,
    const ChildProcessOptions& options) {
  absl::StatusOr<std::string> dir =
      options.temp_dir.empty() ? MakeTempDir(options.temp_prefix) : options.temp_dir;
  if (!dir.ok()) return dir.status();
  const pid_t pid =
      SpawnProcess(binary, args, options.env, options.cwd.empty() ? *dir : options.cwd,
                   *dir + "/stdout.txt", *dir + "/stderr.txt");
  if (pid < 0) {
    const int error = errno;
    std::error_code ec;
    std::filesystem::remove_all(*dir, ec);
    return base::ErrnoToStatus(error, absl::StrCat("fork for ", binary));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, *std::move(dir)));
}

ChildProcess::~ChildProcess() {
  Kill();
  std::error_code ec;
  std::filesystem::remove_all(temp_dir_, ec);
}

std::string ChildProcess::StdoutText() const { return ReadFileToString(temp_dir_ + "/stdout.txt"); }

std::string ChildProcess::StderrText() const { return ReadFileToString(temp_dir_ + "/stderr.txt"); }

std::string ChildProcess::OutputTail(size_t max_bytes) const {
  return absl::StrCat("\nstdout:\n", Tail(StdoutText(), max_bytes), "\nstderr:\n",
                      Tail(StderrText(), max_bytes));
}

absl::Status ChildProcess::WaitForStdout(const std::function<bool(std::string_view)>& done,
                                         absl::Duration timeout, absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (done(StdoutText())) return absl::OkStatus();
    // Output written just before the exit counts: look once more after reaping.
    if (PollExit().has_value()) {
      if (done(StdoutText())) return absl::OkStatus();
      return absl::FailedPreconditionError(
          absl::StrCat("child pid ", pid_, " exited with ", *exit_code_, OutputTail()));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("child pid ", pid_, " did not print it in ",
                                                      absl::FormatDuration(timeout), OutputTail()));
    }
    absl::SleepFor(poll);
  }
}

void ChildProcess::Signal(int signal) const {
  if (!exit_code_.has_value()) kill(pid_, signal);
}

absl::StatusOr<int> ChildProcess::WaitExit(absl::Duration timeout) {
  if (!exit_code_.has_value()) exit_code_ = WaitForChildExit(pid_, timeout);
  if (!exit_code_.has_value()) {
    return absl::DeadlineExceededError(
        absl::StrCat("pid ", pid_, " still running after ", absl::FormatDuration(timeout)));
  }
  return *exit_code_;
}

int ChildProcess::Kill() {
  if (!exit_code_.has_value()) {
    kill(pid_, SIGKILL);
    exit_code_ = WaitForChildExit(pid_, absl::Seconds(30));
  }
  return exit_code_.value_or(-1);
}

std::optional<int> ChildProcess::PollExit() {
  if (!exit_code_.has_value()) exit_code_ = WaitForChildExit(pid_, absl::ZeroDuration());
  return exit_code_;
}

}  // namespace strata::testing
