// strata-replay: replays a Mooncake-format JSONL trace against a live strata node through
// libstrata, and reports hit rates (by lookup phase and tier), bytes moved, latency
// percentiles, the node's live miss-ratio curve against the exact one from an offline
// replay of the same page-access stream, and (--plot-dir) PNG plots. What one request does,
// and how requests are scheduled: replay/replay_runner.h. Flags: --help.
//
// Exit status: 0 the replay ran (failed calls are counted in the report, never fatal);
// 1 the trace could not be loaded, the node not reached, or a plot not written; 2 usage.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "client/tools/kv_store.h"
#include "client/tools/replay/replay_config.h"
#include "client/tools/replay/replay_report.h"
#include "client/tools/replay/replay_runner.h"
#include "strata/client.h"
#include "strata/cluster_client.h"
#include "strata/tiering/sim/mooncake_trace.h"

int main(int argc, char** argv) {
  using namespace strata;
  const std::vector<std::string> args(argv, argv + argc);
  absl::StatusOr<replay::ReplayConfig> config = replay::ParseReplayArgs(args);
  if (!config.ok()) {
    std::fprintf(stderr, "strata-replay: %s\n\n%s", config.status().ToString().c_str(),
                 replay::ReplayUsage());
    return 2;
  }
  if (config->help) {
    std::fputs(replay::ReplayUsage(), stdout);
    return 0;
  }
  // Whole pages only (the node caches whole pages); the full trace gives each request's
  // prompt length for the token hit rate.
  tiering::sim::MooncakeTraceOptions whole{.block_tokens = config->block_tokens,
                                           .drop_partial_last_block = true};
  absl::StatusOr<tiering::sim::ReplayTrace> trace =
      tiering::sim::LoadMooncakeTrace(config->trace_path, whole);
  absl::StatusOr<tiering::sim::ReplayTrace> full =
      tiering::sim::LoadMooncakeTrace(config->trace_path, {.block_tokens = config->block_tokens});
  if (!trace.ok() || !full.ok()) {
    std::fprintf(stderr, "strata-replay: %s\n",
                 (!trace.ok() ? trace.status() : full.status()).ToString().c_str());
    return 1;
  }
  std::vector<uint64_t> input_tokens(full->requests.size());
  for (size_t i = 0; i < full->requests.size(); ++i) {
    const auto& r = full->requests[i];
    input_tokens[i] = r.blocks.empty() ? 0
                                       : uint64_t{config->block_tokens} * (r.blocks.size() - 1) +
                                             r.last_block_tokens;
  }

  // Token and TLS from the environment ($STRATA_TOKEN, $STRATA_TLS_CA), as every tool.
  ClientOptions options = ClientOptions::FromEnvironment();
  options.node = config->node;
  options.ucx_transports = config->ucx_tls;
  options.default_timeout = absl::Seconds(config->call_timeout_s);
  options.wait_for_node = true;
  options.async_threads = 1;
  std::unique_ptr<Client> client;
  std::unique_ptr<ClusterClient> cluster;
  std::unique_ptr<tools::KvStore> store;
  if (!config->cluster.empty()) {
    ClusterClientOptions cluster_options;
    cluster_options.cluster_url = config->cluster;
    cluster_options.node_options = options;
    cluster_options.segment_pages = config->segment_pages;
    cluster_options.text_replicas = config->text_replicas;
    absl::StatusOr<std::unique_ptr<ClusterClient>> connected =
        ClusterClient::Connect(cluster_options);
    if (!connected.ok()) {
      std::fprintf(stderr, "strata-replay: cannot reach cluster %s: %s\n", config->cluster.c_str(),
                   connected.status().ToString().c_str());
      return 1;
    }
    cluster = *std::move(connected);
    store = tools::KvStore::OfCluster(cluster.get());
  } else {
    absl::StatusOr<std::unique_ptr<Client>> connected = Client::Connect(options);
    if (!connected.ok()) {
      std::fprintf(stderr, "strata-replay: cannot reach node %s: %s\n", config->node.c_str(),
                   connected.status().ToString().c_str());
      return 1;
    }
    client = *std::move(connected);
    store = tools::KvStore::OfNode(client.get());
  }
  absl::StatusOr<replay::ReplayResult> result =
      replay::RunReplay(*config, *trace, input_tokens, *store);
  if (!result.ok()) {
    std::fprintf(stderr, "strata-replay: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::string live_error;
  absl::StatusOr<replay::LiveCurve> live =
      client != nullptr
          ? replay::FetchLiveCurve(*client, absl::Seconds(config->call_timeout_s))
          : absl::StatusOr<replay::LiveCurve>(absl::UnimplementedError(
                "a cluster has one curve per node: strata capacity --cluster combines them"));
  if (!live.ok()) live_error = "Tiers: " + live.status().ToString();
  const replay::LiveCurve* live_ptr = live.ok() ? &*live : nullptr;
  const replay::CurveComparison cmp = replay::Compare(*result, live_ptr, config->mae_points);
  replay::PlotFiles plots;
  if (!config->plot_dir.empty()) {
    absl::StatusOr<replay::PlotFiles> written = replay::WritePlots(*config, *result, live_ptr, cmp);
    if (!written.ok()) {
      std::fprintf(stderr, "strata-replay: plots: %s\n", written.status().ToString().c_str());
      return 1;
    }
    plots = *written;
  }
  const std::string report =
      config->json ? replay::FormatJson(*config, *result, live_ptr, live_error, cmp, plots)
                   : replay::FormatTable(*config, *result, live_ptr, live_error, cmp, plots);
  std::fputs(report.c_str(), stdout);
  return 0;
}
