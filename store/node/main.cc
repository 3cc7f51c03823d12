// strata-node: runs one storage node. Wiring only; see docs/operations.md.
//
// stdout carries a few machine-parsable lines, each starting "strata-node: ":
//   strata-node: grpc listening on <host>:<port>
//   strata-node: dataplane listening on <host>:<port>
//   strata-node: http listening on <host>:<port>     (absent when http_listen is empty)
//   strata-node: ready pid=<pid> data_dir=<absolute path> dram_bytes=<n> ssd_bytes=<n>
//                restored=<n> restored_ssd=<n> restored_text=<n> http=<host>:<port>|off
//                node_id=<16 hex digits>|none (none: not in a cluster) (one line)
//   strata-node: draining (<signal name>)
//   strata-node: stopped
// Errors go to stderr as one line "strata-node: <message>". Logs (glog) go to stderr.
// Exit codes: 0 stopped by SIGTERM/SIGINT (after draining); 1 could not start; 2 bad
// flag or config file.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "glog/logging.h"

#include "strata/store/node/command_line.h"
#include "strata/store/node/node_config.h"
#include "strata/store/node/node_server.h"

namespace strata::store::node {
namespace {

// SIGTERM and SIGINT are blocked in every thread (the mask is set before any thread
// starts, and threads inherit it) and taken with sigwait(), so no handler runs
// asynchronously.
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

int WaitForSignal(const sigset_t& set) {
  int signal = 0;
  while (sigwait(&set, &signal) != 0) {
  }
  return signal;
}

void PrintLine(const std::string& line) {
  std::fprintf(stdout, "strata-node: %s\n", line.c_str());
  std::fflush(stdout);
}

void PrintError(const std::string& message) {
  std::fprintf(stderr, "strata-node: %s\n", message.c_str());
  std::fflush(stderr);
}

void InitLogging(const char* argv0, const NodeConfig& config) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = config.log_level == "error" ? 2 : config.log_level == "warning" ? 1 : 0;
  FLAGS_v = config.log_verbosity;
  google::InitGoogleLogging(argv0);
  google::InstallFailureSignalHandler();
}

int Run(int argc, char** argv) {
  // Blocks of 256 KiB and more (a put's tokens and checksums, request buffers) are mapped on
  // their own and go back to the system when freed. glibc's default threshold starts at
  // 128 KiB but rises to the size of each such block freed (up to 32 MiB), after which a
  // freed put's metadata stayed in the heap: 1.3 GB after 175 puts expired (issue 12).
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  // One malloc arena, not glibc's 8 per core. With an arena per thread (gRPC, UCX, io_uring,
  // RocksDB), memory freed by one thread is reused only by threads of the same arena: after
  // a restart, the index and TEXT records loaded by one thread were replaced by records
  // allocated in other arenas, and RSS grew from 234 to 373 MiB in 135 s of the soak while
  // every structure the node accounts for stayed flat (two arenas: the same, 238 -> 368).
  // With one it stayed at 223-256 MiB; the node's data path allocates little (its bytes
  // live in the DRAM arena), and threads keep glibc's per-thread caches (docs/benchmarks.md,
  // 2026-12-06). $MALLOC_ARENA_MAX, which glibc reads itself, overrides.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  const sigset_t signals = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CommandLine> command_line = ParseCommandLine(args);
  if (!command_line.ok()) {
    PrintError(std::string(command_line.status().message()) + " (see --help)");
    return 2;
  }
  if (command_line->help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (command_line->version) {
    std::printf("strata-node %s\n", STRATA_VERSION);
    return 0;
  }
  absl::StatusOr<NodeConfig> config =
      ResolveNodeConfig(*command_line, [](const char* name) { return std::getenv(name); });
  if (!config.ok()) {
    PrintError(std::string(config.status().message()));
    return 2;
  }
  InitLogging(argv[0], *config);

  absl::StatusOr<std::unique_ptr<NodeServer>> server = NodeServer::Start(*config);
  if (!server.ok()) {
    PrintError("cannot start: " + server.status().ToString());
    return 1;
  }
  PrintLine("grpc listening on " + (*server)->grpc_address());
  PrintLine("dataplane listening on " + (*server)->data_plane_address());
  const std::string http = (*server)->http_address();
  if (!http.empty()) PrintLine("http listening on " + http);
  // The blobs the metadata store gave back (restart); all 0 on a first start.
  const core::RestoreReport restored = (*server)->restored();
  PrintLine("ready pid=" + std::to_string(getpid()) + " data_dir=" + (*server)->data_dir() +
            " dram_bytes=" + std::to_string((*server)->dram_bytes()) +
            " ssd_bytes=" + std::to_string((*server)->ssd_bytes()) + " restored=" +
            std::to_string(restored.restored) + " restored_ssd=" + std::to_string(restored.on_ssd) +
            " restored_text=" + std::to_string(restored.text) +
            " http=" + (http.empty() ? std::string("off") : http) + " node_id=" +
            ((*server)->node_id().empty() ? std::string("none") : (*server)->node_id()));

  const int first = WaitForSignal(signals);
  PrintLine(std::string("draining (SIG") + sigabbrev_np(first) + ")");
  LOG(INFO) << "SIG" << sigabbrev_np(first) << ": draining; a second SIGTERM/SIGINT exits now";
  // A second signal during the drain stops the node at once.
  std::thread([signals] {
    const int second = WaitForSignal(signals);
    PrintError(std::string("second signal (SIG") + sigabbrev_np(second) + "): exiting now");
    std::_Exit(1);
  }).detach();

  const absl::Status drained = (*server)->Drain(config->drain_timeout);
  (*server)->Shutdown(config->shutdown_grace);
  server->reset();
  if (!drained.ok()) LOG(WARNING) << "stopped without a complete drain: " << drained;
  PrintLine("stopped");
  return 0;
}

}  // namespace
}  // namespace strata::store::node

int main(int argc, char** argv) { return strata::store::node::Run(argc, argv); }
