// ChildProcess: a long-running child process that a test starts, watches and stops — a
// strata-node (NodeProcess in tests/testing is built on it), an etcd, a second client.
// Test-only (strata::testing).
//
// Start() makes a fresh temporary directory (MakeTempDir), and spawns `binary` with `args`
// there (SpawnProcess: this process's environment plus `env`, SIGKILL when this process
// dies), its stdout and stderr going to <temp>/stdout.txt and <temp>/stderr.txt. The caller
// owns the ChildProcess; its destructor SIGKILLs a child still running, reaps it and removes
// the temporary directory with everything in it.
//
// WaitForStdout polls the child's stdout until a predicate holds, so a test can wait for a
// "ready" or "listening on" line; WaitExit reaps the child; Signal sends it a signal.
//
// Errors: Start returns the errno of mkdtemp or fork (base::ErrnoToStatus). WaitForStdout
// returns FAILED_PRECONDITION when the child exited before the predicate held, and
// DEADLINE_EXCEEDED after `timeout` (both messages carry the exit code or the tail of the
// child's stdout and stderr). WaitExit returns DEADLINE_EXCEEDED when the child is still
// running after `timeout`.
// Thread safety: none; one test thread drives one ChildProcess (distinct ones are
// independent).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace strata::testing {

struct ChildProcessOptions {
  // Added to (or replacing entries of) this process's environment.
  std::map<std::string, std::string> env;
  // The child's working directory; empty: its temporary directory.
  std::string cwd;
  // The name of the temporary directory starts with this.
  std::string temp_prefix = "strata-child";
  // An existing directory to take over as the temporary directory instead of a fresh one
  // (for arguments that name paths in it); the ChildProcess removes it, and so does a
  // failed Start.
  std::string temp_dir;
};

class ChildProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      const ChildProcessOptions& options = {});

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The temporary directory (stdout.txt, stderr.txt, and whatever the test puts there).
  const std::string& temp_dir() const { return temp_dir_; }

  std::string StdoutText() const;
  std::string StderrText() const;
  // The last `max_bytes` of stdout and stderr, labelled, for a failure message.
  std::string OutputTail(size_t max_bytes = 2000) const;

  // Waits until `done(stdout so far)` holds, polling every `poll`.
  absl::Status WaitForStdout(const std::function<bool(std::string_view)>& done,
                             absl::Duration timeout, absl::Duration poll = absl::Milliseconds(5));

  // Sends `signal` (SIGTERM, SIGKILL, SIGSTOP, ...) unless the child was reaped already.
  void Signal(int signal) const;
  // The child's exit code (128 + N if killed by signal N), waiting up to `timeout`.
  absl::StatusOr<int> WaitExit(absl::Duration timeout);
  // SIGKILLs the child (unless it was reaped already), reaps it and returns its exit code
  // (137 when the kill ended it; -1 when it could not be reaped in 30 s).
  int Kill();
  // Reaps the child if it has exited (without waiting): its exit code, or nullopt while it
  // runs.
  std::optional<int> PollExit();
  // Whether the child has been reaped (by WaitExit, Kill, PollExit or WaitForStdout).
  bool reaped() const { return exit_code_.has_value(); }

 private:
  ChildProcess(pid_t pid, std::string temp_dir) : pid_(pid), temp_dir_(std::move(temp_dir)) {}

  pid_t pid_;
  std::string temp_dir_;
  std::optional<int> exit_code_;
};

}  // namespace strata::testing
