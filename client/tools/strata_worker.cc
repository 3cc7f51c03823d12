// strata-worker: the reference rebuild worker (rebuild_worker.h) as a program. Connects to a
// node, pulls rebuild tasks, recomputes each blob's KV with the reference model of --seed
// (the seed the writer used; strata-demo's --seed), checks it against the original's chunk
// checksums and fills the blob with an ordinary put. One line per task, a summary at the end.
//
//   strata-worker [--node HOST:PORT | --cluster URL] [--seed S] [--max-tasks N]
//                 [--idle-exit DURATION] [--batch N] [--poll DURATION]
//
// With --cluster (or $STRATA_CLUSTER, "etcd://HOST:PORT/NAME"): one worker per node of the
// cluster's view at start, each pulling that node's tasks; a blob that starts a segment gets
// its sequence's earlier tokens from the nodes holding them (ClusterClient::PrefixTokens).
// --max-tasks then counts per node.
//
// Runs until --max-tasks tasks were handled, or no task came for --idle-exit (default 5s;
// "never" to run until killed; 0 to stop as soon as the queue is empty), or SIGINT/SIGTERM.
//
// Exit status: 0 every task was rebuilt (or found filled already); 1 some task was skipped,
// failed or did not match its checksums; 2 usage; 3 the node could not be reached, or a pull
// failed (UNIMPLEMENTED: the node has no rebuild queue).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "client/tools/rebuild_worker.h"
#include "strata/client.h"
#include "strata/cluster_client.h"
#include "strata/options.h"

namespace strata::tools {
namespace {

std::atomic<bool> stop_requested{false};

void OnSignal(int) { stop_requested.store(true); }

int Usage(const char* argv0, int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: %s [--node HOST:PORT | --cluster URL] [--seed S] [--max-tasks N]\n"
               "          [--idle-exit DURATION] [--batch N] [--poll DURATION]\n"
               "Pulls rebuild tasks from a strata node (default $STRATA_NODE or 127.0.0.1:7400),\n"
               "or from every node of a cluster (--cluster etcd://HOST:PORT/NAME, default\n"
               "$STRATA_CLUSTER), recomputes each blob's KV with the reference model of --seed\n"
               "(default 42, the seed the writer used), checks it against the original's chunk\n"
               "checksums and fills the blob with an ordinary put.\n"
               "  --max-tasks N         stop after N tasks (default 0: no limit)\n"
               "  --idle-exit DURATION  stop when no task came for this long (default 5s;\n"
               "                        0: when the queue is empty; never: run until killed)\n"
               "  --batch N             tasks per pull, 1..1024 (default 16)\n"
               "  --poll DURATION       long-poll wait of one pull, up to 60s (default 1s)\n"
               "exit: 0 all tasks rebuilt; 1 a task skipped, failed or mismatched; 2 usage;\n"
               "      3 node unreachable or a pull failed\n",
               argv0);
  return code;
}

bool ParseDurationArg(const std::string& text, absl::Duration* out) {
  if (text == "never" || text == "inf") {
    *out = absl::InfiniteDuration();
    return true;
  }
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds) && seconds >= 0) {
    *out = absl::Seconds(seconds);
    return true;
  }
  return absl::ParseDuration(text, out) && *out >= absl::ZeroDuration();
}

void PrintTask(const RebuildTaskReport& r) {
  const RebuildTask& t = r.task;
  std::printf("task %llu blob %s pages [%u, %u) %-17s %8.2f ms compute %8.2f ms write%s%s\n",
              static_cast<unsigned long long>(t.task_id), t.key.ToHex().c_str(), t.first_page,
              t.first_page + t.pages, RebuildOutcomeName(r.outcome),
              absl::ToDoubleMilliseconds(r.compute_time), absl::ToDoubleMilliseconds(r.write_time),
              r.status.ok() ? "" : ": ", r.status.ok() ? "" : r.status.ToString().c_str());
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  ClientOptions options = ClientOptions::FromEnvironment();
  const char* cluster_env = std::getenv("STRATA_CLUSTER");
  std::string cluster_url = cluster_env != nullptr ? cluster_env : "";
  uint64_t seed = 42;
  RebuildWorkerOptions worker;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") return Usage(argv[0], 0);
    const char* v = nullptr;
    bool ok = true;
    if (arg == "--node" && (v = value())) {
      options.node = v;
      cluster_url.clear();
    } else if (arg == "--cluster" && (v = value())) {
      cluster_url = v;
    } else if (arg == "--seed" && (v = value())) {
      ok = absl::SimpleAtoi(v, &seed);
    } else if (arg == "--max-tasks" && (v = value())) {
      ok = absl::SimpleAtoi(v, &worker.max_tasks);
    } else if (arg == "--idle-exit" && (v = value())) {
      ok = ParseDurationArg(v, &worker.idle_exit);
    } else if (arg == "--batch" && (v = value())) {
      ok = absl::SimpleAtoi(v, &worker.batch) && worker.batch >= 1 && worker.batch <= 1024;
    } else if (arg == "--poll" && (v = value())) {
      ok = ParseDurationArg(v, &worker.poll_wait) && worker.poll_wait <= absl::Seconds(60);
    } else {
      std::fprintf(stderr, "strata-worker: unknown or incomplete argument '%s'\n", argv[i]);
      return Usage(argv[0], 2);
    }
    if (!ok) {
      std::fprintf(stderr, "strata-worker: bad value '%s' for %s\n", v, std::string(arg).c_str());
      return Usage(argv[0], 2);
    }
  }
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::fprintf(stderr, "strata-worker: %s\n", valid.ToString().c_str());
    return 2;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  worker.stop = [] { return stop_requested.load(); };
  absl::Mutex print_mu;
  worker.on_task = [&print_mu](const RebuildTaskReport& report) {
    absl::MutexLock lock(&print_mu);
    PrintTask(report);
  };
  RebuildWorkerSummary summary;
  std::unique_ptr<ClusterClient> cluster;
  std::unique_ptr<Client> client;
  // The nodes to pull from, by name.
  std::vector<std::pair<std::string, Client*>> nodes;
  if (!cluster_url.empty()) {
    ClusterClientOptions cluster_options;
    cluster_options.cluster_url = cluster_url;
    cluster_options.node_options = options;
    absl::StatusOr<std::unique_ptr<ClusterClient>> connected =
        ClusterClient::Connect(cluster_options);
    if (!connected.ok()) {
      std::fprintf(stderr, "strata-worker: cannot reach cluster %s: %s\n", cluster_url.c_str(),
                   connected.status().ToString().c_str());
      return connected.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 3;
    }
    cluster = *std::move(connected);
    for (const ClusterNodeInfo& node : cluster->Nodes()) {
      absl::StatusOr<Client*> one = cluster->Node(node.id);
      if (!one.ok()) {
        std::fprintf(stderr, "strata-worker: node %s (%s): %s\n", node.id.c_str(),
                     node.grpc_address.c_str(), one.status().ToString().c_str());
        summary.status = one.status();
        continue;
      }
      nodes.emplace_back(absl::StrCat(node.id, " (", node.grpc_address, ")"), *one);
    }
    ClusterClient* c = cluster.get();
    worker.prefix_tokens = [c](const Namespace& ns, const SegmentStart& start) {
      return c->PrefixTokens(ns, start);
    };
  } else {
    options.wait_for_node = true;
    absl::StatusOr<std::unique_ptr<Client>> connected = Client::Connect(options);
    if (!connected.ok()) {
      std::fprintf(stderr, "strata-worker: cannot reach node %s: %s\n", options.node.c_str(),
                   connected.status().ToString().c_str());
      return 3;
    }
    client = *std::move(connected);
    nodes.emplace_back(options.node, client.get());
  }
  std::printf("strata-worker: %s %s, seed %llu, idle exit %s, max tasks %llu\n",
              cluster_url.empty() ? "node" : "cluster",
              cluster_url.empty() ? options.node.c_str()
                                  : absl::StrCat(cluster_url, ": ", nodes.size(), " nodes").c_str(),
              static_cast<unsigned long long>(seed), absl::FormatDuration(worker.idle_exit).c_str(),
              static_cast<unsigned long long>(worker.max_tasks));
  std::fflush(stdout);
  // One worker per node, each with its own models (SeededModels is one thread's).
  std::vector<RebuildWorkerSummary> summaries(nodes.size());
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < nodes.size(); ++i) {
      threads.emplace_back([&, i] {
        SeededModels models(seed);
        summaries[i] = RunRebuildWorker(
            *nodes[i].second, [&models](const KvLayout& layout) { return models.For(layout); },
            worker);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const RebuildWorkerSummary& one = summaries[i];
    summary.pulls += one.pulls;
    summary.tasks += one.tasks;
    summary.rebuilt += one.rebuilt;
    summary.existed += one.existed;
    summary.skipped += one.skipped;
    summary.checksum_mismatches += one.checksum_mismatches;
    summary.write_failures += one.write_failures;
    summary.bytes_written += one.bytes_written;
    summary.elapsed = std::max(summary.elapsed, one.elapsed);
    if (!one.status.ok()) {
      std::fprintf(stderr, "strata-worker: node %s: %s\n", nodes[i].first.c_str(),
                   one.status.ToString().c_str());
      if (summary.status.ok()) summary.status = one.status;
    }
  }
  std::printf(
      "strata-worker: %llu tasks in %.2f s: %llu rebuilt (%llu bytes), %llu already filled, "
      "%llu skipped, %llu checksum mismatches, %llu write failures%s%s\n",
      static_cast<unsigned long long>(summary.tasks), absl::ToDoubleSeconds(summary.elapsed),
      static_cast<unsigned long long>(summary.rebuilt),
      static_cast<unsigned long long>(summary.bytes_written),
      static_cast<unsigned long long>(summary.existed),
      static_cast<unsigned long long>(summary.skipped),
      static_cast<unsigned long long>(summary.checksum_mismatches),
      static_cast<unsigned long long>(summary.write_failures),
      summary.status.ok() ? "" : "; stopped: ",
      summary.status.ok() ? "" : summary.status.ToString().c_str());
  if (!summary.status.ok()) {
    return summary.status.code() == absl::StatusCode::kInvalidArgument ? 2 : 3;
  }
  const bool all_good =
      summary.skipped == 0 && summary.checksum_mismatches == 0 && summary.write_failures == 0;
  return all_good ? 0 : 1;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) { return strata::tools::Main(argc, argv); }
