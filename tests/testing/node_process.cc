#include "strata/testing/node_process.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "strata/proto/grpc_limits.h"
#include "strata/proto/status_convert.h"
#include "strata/testing/temp_dir.h"

namespace strata::testing {
namespace {

constexpr absl::string_view kListenPrefix = "strata-node: grpc listening on ";
constexpr absl::string_view kReadyPrefix = "strata-node: ready ";
constexpr absl::string_view kHttpPrefix = "strata-node: http listening on ";
constexpr absl::string_view kDataPlanePrefixes[] = {"strata-node: dataplane listening on ",
                                                    "strata-node: dataplane address "};

// Whether `args` sets option `key` (--key, --key=value or --key value).
bool HasFlag(const std::vector<std::string>& args, absl::string_view key) {
  const std::string flag = absl::StrCat("--", key);
  for (const std::string& arg : args) {
    if (arg == flag || absl::StartsWith(arg, flag + "=")) return true;
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Tail(const std::string& text, size_t n = 2000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

std::string MakeNodeTempDir() { return MakeTestDir("strata-node-test"); }

}  // namespace

std::string MakeTestDir(const std::string& prefix) {
  return strata::testing::MakeTempDir(prefix).value_or("");
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

absl::Status Call(const grpc::Status& status) { return proto::FromGrpcStatus(status); }

absl::StatusOr<std::unique_ptr<NodeProcess>> NodeProcess::Start(NodeProcessOptions options) {
  const std::string temp = MakeNodeTempDir();
  if (temp.empty()) return absl::UnavailableError("mkdtemp failed");
  std::vector<std::string> args;
  const auto add_default = [&](absl::string_view key, absl::string_view value) {
    if (!HasFlag(options.args, key)) args.push_back(absl::StrCat("--", key, "=", value));
  };
  if (options.default_listen_and_dram) {
    add_default("grpc_listen", "127.0.0.1:0");
    add_default("dataplane_listen", "127.0.0.1:0");
    add_default("http_listen", "127.0.0.1:0");
    add_default("dram_bytes", "64MiB");
    add_default("ssd_bytes", "0");
  }
  if (options.default_data_dir) add_default("data_dir", absl::StrCat(temp, "/data"));
  args.insert(args.end(), options.args.begin(), options.args.end());
  const pid_t pid =
      SpawnProcess(STRATA_NODE_BINARY, args, options.env, options.cwd.empty() ? temp : options.cwd,
                   temp + "/stdout.txt", temp + "/stderr.txt");
  if (pid < 0) return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  std::unique_ptr<NodeProcess> node(new NodeProcess(pid, temp));

  // The "ready" line follows every listen line.
  const absl::Time deadline = absl::Now() + options.start_timeout;
  for (bool ready = false; !ready;) {
    const std::string text = node->StdoutText();
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::StartsWith(line, kReadyPrefix)) {
        ready = true;
        node->ready_line_ = std::string(line);
      }
      if (absl::StartsWith(line, kListenPrefix)) {
        node->grpc_address_ = std::string(line.substr(kListenPrefix.size()));
      }
      if (absl::StartsWith(line, kHttpPrefix)) {
        node->http_address_ = std::string(line.substr(kHttpPrefix.size()));
      }
      for (absl::string_view prefix : kDataPlanePrefixes) {
        if (!absl::StartsWith(line, prefix)) continue;
        const absl::string_view rest = line.substr(prefix.size());
        node->data_plane_address_ = std::string(rest.substr(0, rest.find(' ')));
      }
    }
    if (ready) break;
    if (std::optional<int> code = WaitForChildExit(pid, absl::ZeroDuration()); code.has_value()) {
      node->exit_code_ = code;
      return absl::FailedPreconditionError(absl::StrCat("strata-node exited with ", *code,
                                                        " before listening; stderr:\n",
                                                        Tail(node->StderrText())));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no ready line from strata-node; stderr:\n", Tail(node->StderrText())));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (node->grpc_address_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no grpc listen line before ready:\n", node->StdoutText()));
  }
  if (!options.wait_for_health) return node;
  absl::Status healthy = node->WaitHealthy(std::max(deadline - absl::Now(), absl::Seconds(5)));
  if (!healthy.ok()) return healthy;
  return node;
}

ExitResult NodeProcess::RunToExit(const std::vector<std::string>& args,
                                  const std::map<std::string, std::string>& env,
                                  absl::Duration timeout) {
  ExitResult result;
  const std::string temp = MakeNodeTempDir();
  if (temp.empty()) return result;
  const pid_t pid =
      SpawnProcess(STRATA_NODE_BINARY, args, env, temp, temp + "/stdout.txt", temp + "/stderr.txt");
  if (pid < 0) return result;
  std::optional<int> code = WaitForChildExit(pid, timeout);
  if (!code.has_value()) {
    kill(pid, SIGKILL);
    code = WaitForChildExit(pid, absl::Seconds(10));
  }
  result.exit_code = code.value_or(-1);
  result.stdout_text = ReadFile(temp + "/stdout.txt");
  result.stderr_text = ReadFile(temp + "/stderr.txt");
  std::error_code ec;
  std::filesystem::remove_all(temp, ec);
  return result;
}

NodeProcess::~NodeProcess() {
  if (!exit_code_.has_value()) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(temp_dir_, ec);
}

std::shared_ptr<grpc::Channel> NodeProcess::Channel(bool with_limits) const {
  grpc::ChannelArguments args;
  if (with_limits) {
    proto::ApplyMessageLimits(&args);
  } else {
    args.SetMaxSendMessageSize(-1);
    args.SetMaxReceiveMessageSize(-1);
  }
  return grpc::CreateCustomChannel(grpc_address_, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<v1::Store::Stub> NodeProcess::StoreStub() const {
  return v1::Store::NewStub(Channel());
}

std::unique_ptr<v1::Admin::Stub> NodeProcess::AdminStub() const {
  return v1::Admin::NewStub(Channel());
}

absl::Status NodeProcess::WaitHealthy(absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  std::unique_ptr<v1::Store::Stub> stub = StoreStub();
  absl::Status last = absl::DeadlineExceededError("no Health call made");
  while (absl::Now() < deadline) {
    v1::HealthResponse response;
    auto context = ContextWithDeadline(absl::Seconds(2));
    last = proto::FromGrpcStatus(stub->Health(context.get(), v1::HealthRequest(), &response));
    if (last.ok()) return last;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("strata-node at ", grpc_address_, " never answered Health: ", last.ToString()));
}

void NodeProcess::Signal(int signal) const {
  if (!exit_code_.has_value()) kill(pid_, signal);
}

absl::StatusOr<int> NodeProcess::WaitExit(absl::Duration timeout) {
  if (exit_code_.has_value()) return *exit_code_;
  exit_code_ = WaitForChildExit(pid_, timeout);
  if (!exit_code_.has_value()) {
    return absl::DeadlineExceededError(absl::StrCat(
        "strata-node pid ", pid_, " still running after ", absl::FormatDuration(timeout)));
  }
  return *exit_code_;
}

std::string NodeProcess::ReadyField(const std::string& key) const {
  for (absl::string_view field : absl::StrSplit(ready_line_, ' ')) {
    if (absl::StartsWith(field, key + "=")) return std::string(field.substr(key.size() + 1));
  }
  return "";
}

std::string NodeProcess::StdoutText() const { return ReadFile(temp_dir_ + "/stdout.txt"); }

std::string NodeProcess::StderrText() const { return ReadFile(temp_dir_ + "/stderr.txt"); }

}  // namespace strata::testing
