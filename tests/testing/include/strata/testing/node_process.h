// NodeProcess: a real `strata-node` process for tests of any folder (strata::testing_node,
// tests/testing; test-only). Each NodeProcess has its own temporary directory and, by default,
// kernel-chosen loopback ports, so a test may run several at once (a cluster test's nodes).
// The caller owns the NodeProcess; the node lives until it is destroyed (or exits).
//
// Start() runs the strata-node binary built in this tree (STRATA_NODE_BINARY) as a
// ChildProcess (strata/testing/child_process.h), by default with `--grpc_listen=127.0.0.1:0
// --dataplane_listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --dram_bytes=64MiB --ssd_bytes=0
// --data_dir=<temp>/data`, stdout and stderr going to files in a fresh temporary directory. It
// waits for the "strata-node: ready" line, which follows the listen lines ("strata-node: grpc
// listening on HOST:PORT": the port the kernel chose), then (unless wait_for_health is off) for
// a Health call to succeed. The destructor SIGKILLs a node still running, reaps it and removes
// the temporary directory. The child also gets SIGKILL if the test process dies
// (PR_SET_PDEATHSIG), so a crashed test leaves no node behind.
//
// RunToExit() runs strata-node to completion (for --help, bad flags, a node that must fail
// to start) and returns its exit code and output.
//
// Errors: Start returns DEADLINE_EXCEEDED when no ready line or no healthy answer came in
// time, FAILED_PRECONDITION when the node exited first or printed no grpc listen line (the
// message carries its exit code and the tail of its output), and the errno of mkdtemp or
// fork when it could not be started. WaitExit returns DEADLINE_EXCEEDED if the node is
// still running after `timeout`.
// Thread safety: none; one test thread drives one NodeProcess (distinct NodeProcesses are
// independent). ContextWithDeadline and Call are thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"
#include "strata/proto/protocol_internal.h"
#include "strata/testing/child_process.h"
#include "strata/testing/process.h"

namespace strata::testing {

struct NodeProcessOptions {
  // Appended after the defaults. A default flag whose key appears here is left out, so
  // these win.
  std::vector<std::string> args;
  // Pass --grpc_listen=127.0.0.1:0, --dataplane_listen=127.0.0.1:0,
  // --http_listen=127.0.0.1:0 (parallel tests must not clash on 7402), --dram_bytes=64MiB and
  // --ssd_bytes=0: a DRAM-only node (tests of the SSD tier name its size; the node's own
  // default, a 2 GiB file, is too much for many test nodes at once). The metadata store is
  // on (the node's default).
  bool default_listen_and_dram = true;
  // Pass --data_dir=<temp>/data.
  bool default_data_dir = true;
  // Extra environment variables for the child (on top of this process's environment).
  std::map<std::string, std::string> env;
  // Working directory of the child; empty: the temporary directory.
  std::string cwd;
  // How long to wait for the listen line and then for Health (ASan builds start slowly).
  absl::Duration start_timeout = absl::Seconds(30);
  // Whether Start waits for a Health call to succeed after the ready line. Off: Start
  // returns as soon as the node printed "ready" (every listener is up), so that a test can
  // time how quickly its own client gets through. (Health from the fixture would go through
  // the same gRPC subchannel as the test's client when their channel arguments match:
  // gRPC shares subchannels process-wide.)
  bool wait_for_health = true;
  // Run the node through this command, e.g. {"/usr/sbin/ip", "netns", "exec", NAME} for a
  // node in a network namespace the test made: the child is wrapper[0] with wrapper[1..],
  // then strata-node and its arguments (the wrapper must exec it: signals reach the node).
  std::vector<std::string> wrapper;
};

class NodeProcess {
 public:
  static absl::StatusOr<std::unique_ptr<NodeProcess>> Start(NodeProcessOptions options = {});

  // Runs strata-node with exactly `args` (no defaults), in a temporary directory, until it
  // exits or `timeout` passes (then it is killed: exit_code 128 + 9); its stdout and stderr
  // are `out` and `err`. exit_code -1 when it could not be started.
  static ProgramResult RunToExit(const std::vector<std::string>& args,
                                 const std::map<std::string, std::string>& env = {},
                                 absl::Duration timeout = absl::Seconds(30));

  ~NodeProcess();
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;

  pid_t pid() const { return child_->pid(); }
  // "127.0.0.1:PORT" from the listen line.
  const std::string& grpc_address() const { return grpc_address_; }
  // The data-plane address the node printed ("strata-node: dataplane listening on X", or
  // "strata-node: dataplane address X ..." while the node has no data plane): what it
  // reports to clients.
  const std::string& data_plane_address() const { return data_plane_address_; }
  // "127.0.0.1:PORT" of the HTTP endpoint ("strata-node: http listening on X"); "" when the
  // node serves none (http_listen empty).
  const std::string& http_address() const { return http_address_; }
  // The temporary directory (stdout.txt, stderr.txt, data/). Removed with the
  // NodeProcess; a data dir the args put elsewhere survives it (for restarts).
  const std::string& temp_dir() const { return child_->temp_dir(); }
  // The default data dir (<temp>/data); ReadyField("data_dir") is the one in use.
  std::string data_dir() const { return temp_dir() + "/data"; }
  // Field `key` of the ready line ("strata-node: ready pid=.. data_dir=.. dram_bytes=.."),
  // or "" when it has none.
  std::string ReadyField(const std::string& key) const;

  // A channel with strata's message limits (ApplyMessageLimits), or with none on the
  // sending side (to push oversized messages at the node).
  std::shared_ptr<grpc::Channel> Channel(bool with_limits = true) const;
  std::unique_ptr<v1::Store::Stub> StoreStub() const;
  std::unique_ptr<v1::Admin::Stub> AdminStub() const;

  // Health answered OK within `timeout`.
  absl::Status WaitHealthy(absl::Duration timeout) const;

  // Sends `signal` (e.g. SIGTERM, SIGKILL) to the node.
  void Signal(int signal) const { child_->Signal(signal); }
  // The node's exit code (128 + N if killed by signal N), waiting up to `timeout`.
  absl::StatusOr<int> WaitExit(absl::Duration timeout) { return child_->WaitExit(timeout); }
  // Whether the node has been reaped (WaitExit returned its code).
  bool exited() const { return child_->reaped(); }

  // Waits until the node's stdout contains `text` (ChildProcess::WaitForStdout: FAILED_PRECONDITION
  // when it exited first, DEADLINE_EXCEEDED after `timeout`).
  absl::Status WaitForStdout(std::string_view text, absl::Duration timeout);

  std::string StdoutText() const { return child_->StdoutText(); }
  std::string StderrText() const { return child_->StderrText(); }

 private:
  explicit NodeProcess(std::unique_ptr<ChildProcess> child) : child_(std::move(child)) {}

  std::unique_ptr<ChildProcess> child_;
  std::string grpc_address_;
  std::string data_plane_address_;
  std::string http_address_;
  std::string ready_line_;
};

// The strata-node binary of this build (STRATA_NODE_BINARY), for tests that run it
// otherwise (RunProgram, ChildProcess).
const std::string& NodeBinaryPath();

// A client context whose deadline is `timeout` from now.
std::unique_ptr<grpc::ClientContext> ContextWithDeadline(
    absl::Duration timeout = absl::Seconds(10));

// The status of a stub call, as the client library sees it (proto::FromGrpcStatus):
// `ASSERT_OK(Call(stub->Health(ContextWithDeadline().get(), request, &response)))`.
absl::Status Call(const grpc::Status& status);

}  // namespace strata::testing
