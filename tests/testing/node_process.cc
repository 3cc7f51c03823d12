#include "strata/testing/node_process.h"

#include <algorithm>
#include <string_view>
#include <utility>

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

// Whether `text` has a whole line starting with the ready prefix.
bool HasReadyLine(std::string_view text) {
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    if (absl::StartsWith(line, kReadyPrefix)) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

absl::Status Call(const grpc::Status& status) { return proto::FromGrpcStatus(status); }

const std::string& NodeBinaryPath() {
  static const std::string* path = new std::string(STRATA_NODE_BINARY);
  return *path;
}

absl::StatusOr<std::unique_ptr<NodeProcess>> NodeProcess::Start(NodeProcessOptions options) {
  ChildProcessOptions child_options;
  child_options.env = options.env;
  child_options.cwd = options.cwd;
  // The default data dir is in the child's temporary directory, so that is made first.
  absl::StatusOr<std::string> temp = MakeTempDir("strata-node-test");
  if (!temp.ok()) return temp.status();
  child_options.temp_dir = *temp;
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
  if (options.default_data_dir) add_default("data_dir", absl::StrCat(*temp, "/data"));
  args.insert(args.end(), options.args.begin(), options.args.end());
  std::string binary = NodeBinaryPath();
  if (!options.wrapper.empty()) {
    std::vector<std::string> wrapped(options.wrapper.begin() + 1, options.wrapper.end());
    wrapped.push_back(binary);
    wrapped.insert(wrapped.end(), args.begin(), args.end());
    binary = options.wrapper.front();
    args = std::move(wrapped);
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(binary, args, child_options);
  if (!child.ok()) return child.status();
  std::unique_ptr<NodeProcess> node(new NodeProcess(*std::move(child)));

  // The "ready" line follows every listen line.
  const absl::Time deadline = absl::Now() + options.start_timeout;
  absl::Status ready =
      node->child_->WaitForStdout(HasReadyLine, options.start_timeout, absl::Milliseconds(20));
  if (!ready.ok()) {
    return absl::Status(
        ready.code(), absl::StrCat("strata-node did not print its ready line: ", ready.message()));
  }
  for (absl::string_view line : absl::StrSplit(node->StdoutText(), '\n')) {
    if (absl::StartsWith(line, kReadyPrefix)) node->ready_line_ = std::string(line);
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
  if (node->grpc_address_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no grpc listen line before ready:\n", node->StdoutText()));
  }
  if (!options.wait_for_health) return node;
  absl::Status healthy = node->WaitHealthy(std::max(deadline - absl::Now(), absl::Seconds(5)));
  if (!healthy.ok()) return healthy;
  return node;
}

ProgramResult NodeProcess::RunToExit(const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env,
                                     absl::Duration timeout) {
  ProgramResult result;
  ChildProcessOptions options;
  options.env = env;
  options.temp_prefix = "strata-node-test";
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(NodeBinaryPath(), args, options);
  if (!child.ok()) return result;
  absl::StatusOr<int> code = (*child)->WaitExit(timeout);
  result.exit_code = code.ok() ? *code : (*child)->Kill();
  result.out = (*child)->StdoutText();
  result.err = (*child)->StderrText();
  return result;
}

NodeProcess::~NodeProcess() = default;

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
    last = Call(stub->Health(context.get(), v1::HealthRequest(), &response));
    if (last.ok()) return last;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("strata-node at ", grpc_address_, " never answered Health: ", last.ToString()));
}

absl::Status NodeProcess::WaitForStdout(std::string_view text, absl::Duration timeout) {
  return child_->WaitForStdout(
      [text](std::string_view out) { return out.find(text) != std::string_view::npos; }, timeout,
      absl::Milliseconds(10));
}

std::string NodeProcess::ReadyField(const std::string& key) const {
  for (absl::string_view field : absl::StrSplit(ready_line_, ' ')) {
    if (absl::StartsWith(field, key + "=")) return std::string(field.substr(key.size() + 1));
  }
  return "";
}

}  // namespace strata::testing
