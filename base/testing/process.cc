#include "strata/testing/process.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "strata/testing/temp_dir.h"

extern char** environ;

namespace strata::testing {
namespace {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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

  std::vector<std::string> argv_storage = {binary};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (options.env.count(name) == 0 && options.unset_env.count(name) == 0) {
      env_storage.push_back(entry);
    }
  }
  for (const auto& [name, value] : options.env) env_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  std::error_code ec;
  if (spawned != 0) {
    std::filesystem::remove_all(dir, ec);
    return absl::InternalError(absl::StrCat("posix_spawn ", binary, ": ", std::strerror(spawned)));
  }

  const absl::Time deadline = absl::Now() + options.timeout;
  int status = 0;
  bool timed_out = false;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (absl::Now() > deadline) {
      timed_out = true;
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  ProgramResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadWholeFile(out_path);
  result.err = ReadWholeFile(err_path);
  std::filesystem::remove_all(dir, ec);
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(binary, " did not exit within ",
                                                    absl::FormatDuration(options.timeout),
                                                    "; stderr:\n", result.err));
  }
  return result;
}

}  // namespace strata::testing
