#include "strata/testing/process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "strata/testing/file.h"
#include "strata/testing/temp_dir.h"

extern char** environ;

namespace strata::testing {
namespace {

// argv and envp for execve / posix_spawn, built in the parent: this process's environment
// without the names in `env` and `unset`, then `env`.
class ExecVectors {
 public:
  ExecVectors(const std::string& binary, const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env, const std::set<std::string>& unset)
      : args_{binary} {
    args_.insert(args_.end(), args.begin(), args.end());
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      const std::string name = entry.substr(0, entry.find('='));
      if (env.count(name) == 0 && unset.count(name) == 0) env_.push_back(entry);
    }
    for (const auto& [name, value] : env) env_.push_back(absl::StrCat(name, "=", value));
    for (std::string& a : args_) argv_.push_back(a.data());
    argv_.push_back(nullptr);
    for (std::string& e : env_) envp_.push_back(e.data());
    envp_.push_back(nullptr);
  }
  char** argv() { return argv_.data(); }
  char** envp() { return envp_.data(); }

 private:
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, envp_;
};

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

absl::StatusOr<ProgramResult> RunProgram(const std::string& binary,
                                         const std::vector<std::string>& args,
                                         const ProgramOptions& options) {
  absl::StatusOr<std::string> made = MakeTempDir("strata-program");
  if (!made.ok()) return absl::InternalError(made.status().message());
  const std::string dir = *std::move(made);
  const std::string in_path = dir + "/stdin", out_path = dir + "/stdout",
                    err_path = dir + "/stderr";
  std::ofstream(in_path, std::ios::binary) << options.stdin_text;
  ExecVectors exec(binary, args, options.env, options.unset_env);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, binary.c_str(), &actions, nullptr, exec.argv(), exec.envp());
  posix_spawn_file_actions_destroy(&actions);
  std::error_code ec;
  if (spawned != 0) {
    std::filesystem::remove_all(dir, ec);
    return absl::InternalError(absl::StrCat("posix_spawn ", binary, ": ", std::strerror(spawned)));
  }

  std::optional<int> code = WaitForChildExit(pid, options.timeout);
  const bool timed_out = !code.has_value();
  if (timed_out) {
    kill(pid, SIGKILL);
    code = WaitForChildExit(pid, absl::InfiniteDuration());
  }
  ProgramResult result;
  result.exit_code = code.value_or(-1);
  result.out = ReadFileToString(out_path);
  result.err = ReadFileToString(err_path);
  std::filesystem::remove_all(dir, ec);
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(binary, " did not exit within ",
                                                    absl::FormatDuration(options.timeout),
                                                    "; stderr:\n", result.err));
  }
  return result;
}

pid_t SpawnProcess(const std::string& binary, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, const std::string& cwd,
                   const std::string& out_path, const std::string& err_path) {
  ExecVectors exec(binary, args, env, {});
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: async-signal-safe calls only.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(126);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) {
    _exit(126);
  }
  if (chdir(cwd.c_str()) != 0) _exit(126);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(exec.argv()[0], exec.argv(), exec.envp());
  _exit(127);
}

std::optional<int> WaitForChildExit(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return ExitCodeOf(status);
    if (r < 0 && errno != EINTR) return -1;
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

}  // namespace strata::testing
