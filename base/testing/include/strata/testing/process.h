// Child processes for tests. RunProgram: runs a program to completion (the `strata` binary in
// tests/integration/cli_test.cc), with a given stdin and captured stdout and stderr.
//
// The child is started with posix_spawn (safe from a test process that runs gRPC threads),
// its stdin read from a temporary file holding `stdin_text`, stdout and stderr written to
// temporary files (in a MakeTempDir directory) that are read back and removed. `env` adds to (or
// replaces entries of) this process's environment; names in `unset_env` are dropped from it. A
// child still running after `timeout` is killed (SIGKILL) and reported as timed out.
//
// Errors: INTERNAL when no temporary directory could be made or posix_spawn failed (the
// message says why); DEADLINE_EXCEEDED when the child ran past `timeout`. Thread-safe
// (each call uses its own directory).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace strata::testing {

struct ProgramResult {
  int exit_code = -1;  // exit status, or 128 + N when killed by signal N
  std::string out;
  std::string err;
};

struct ProgramOptions {
  std::string stdin_text;
  std::map<std::string, std::string> env;
  std::set<std::string> unset_env;
  absl::Duration timeout = absl::Seconds(60);
};

absl::StatusOr<ProgramResult> RunProgram(const std::string& binary,
                                         const std::vector<std::string>& args,
                                         const ProgramOptions& options = {});

// Forks and execs `binary` with `args` (argv[1..]), this process's environment plus `env`
// (which wins), in directory `cwd`, stdout and stderr going to the files named (created or
// truncated). The child gets SIGKILL if this process dies (PR_SET_PDEATHSIG). Returns the
// child's pid, or -1 when fork failed (errno set); the caller reaps it (WaitForChildExit).
// NodeProcess (strata::testing_node, tests/testing) starts strata-node with it; tests use it for
// helper processes (e.g. a second client process to kill). Everything the child touches is prepared
// before fork(): the parent may run gRPC threads.
pid_t SpawnProcess(const std::string& binary, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, const std::string& cwd,
                   const std::string& out_path, const std::string& err_path);

// Waits up to `timeout` (polling) for child `pid` to exit and reaps it: its exit status, or
// 128 + N when killed by signal N; -1 when waitpid failed (not our child, reaped already);
// nullopt while it is still running.
std::optional<int> WaitForChildExit(pid_t pid, absl::Duration timeout);

}  // namespace strata::testing
