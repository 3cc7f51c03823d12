#include "strata/testing/etcd_process.h"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "strata/testing/temp_dir.h"

namespace strata::testing {
namespace {

constexpr std::string_view kServing = "serving insecure client requests on 127.0.0.1:";
constexpr absl::Duration kStartTimeout = absl::Seconds(30);

// The client port etcd's log says it serves on, or 0 while it has not said so.
int ServingPort(const std::string& log) {
  const size_t at = log.find(kServing);
  if (at == std::string::npos) return 0;
  const size_t begin = at + kServing.size();
  const size_t end = log.find_first_not_of("0123456789", begin);
  int port = 0;
  if (end == std::string::npos || !absl::SimpleAtoi(log.substr(begin, end - begin), &port)) {
    return 0;
  }
  return port;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdProcess>> EtcdProcess::Start() {
  std::string binary = "/usr/bin/etcd";
  if (const char* env = std::getenv("STRATA_ETCD"); env != nullptr && *env != '\0') binary = env;
  if (::access(binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no etcd at ", binary,
                     " (deploy/setup.sh installs Debian's etcd-server; $STRATA_ETCD names "
                     "another binary)"));
  }
  absl::StatusOr<std::string> root = MakeTempDir("strata-etcd");
  if (!root.ok()) return root.status();
  std::unique_ptr<EtcdProcess> etcd(new EtcdProcess(std::move(binary), *std::move(root)));
  if (absl::Status launched = etcd->Launch(0); !launched.ok()) return launched;
  return etcd;
}

EtcdProcess::~EtcdProcess() {
  Kill();
  std::error_code ignored;
  std::filesystem::remove_all(data_root_, ignored);
}

void EtcdProcess::Kill() {
  if (process_ == nullptr) return;
  process_->Kill();
  process_.reset();
}

absl::Status EtcdProcess::Restart() { return Launch(client_port_); }

absl::Status EtcdProcess::Launch(int client_port) {
  const std::string client_url = absl::StrCat("http://127.0.0.1:", client_port);
  const std::vector<std::string> args = {
      "--name=strata-test",
      "--data-dir=" + data_root_ + "/data",
      "--listen-client-urls=" + client_url,
      "--advertise-client-urls=" + client_url,
      "--listen-peer-urls=http://127.0.0.1:0",
      "--initial-advertise-peer-urls=http://127.0.0.1:0",
      "--initial-cluster=strata-test=http://127.0.0.1:0",
  };
  ChildProcessOptions options;
  options.temp_prefix = "strata-etcd-run";
  absl::StatusOr<std::unique_ptr<ChildProcess>> started =
      ChildProcess::Start(binary_, args, options);
  if (!started.ok()) return started.status();
  process_ = *std::move(started);
  const absl::Time deadline = absl::Now() + kStartTimeout;
  for (;;) {
    if (const int port = ServingPort(process_->StderrText()); port != 0) {
      client_port_ = port;
      endpoint_ = absl::StrCat("127.0.0.1:", port);
      return absl::OkStatus();
    }
    if (process_->PollExit().has_value() || absl::Now() >= deadline) {
      const std::string tail = process_->OutputTail();
      const bool exited = process_->reaped();
      Kill();
      return exited ? absl::FailedPreconditionError(absl::StrCat("etcd exited at start: ", tail))
                    : absl::DeadlineExceededError(absl::StrCat("etcd did not serve within ",
                                                               absl::FormatDuration(kStartTimeout),
                                                               ": ", tail));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

}  // namespace strata::testing
