// strata-replay's configuration: what to replay, against which node, how fast, and what to
// report. ParseReplayArgs reads it from the command line (the flag table is kUsage in
// replay_config.cc, printed by --help).
//
// Pure functions; thread-safe. Errors: ParseReplayArgs returns INVALID_ARGUMENT naming the
// flag for an unknown flag, a missing or malformed value, or a value out of range; --help
// sets `help` and returns OK.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/radix/kv_layout.h"

namespace strata::replay {

struct ReplayConfig {
  std::string trace_path;  // the JSONL trace (required, positional or --trace)
  std::string node = "127.0.0.1:7400";
  // Non-empty: replay against this cluster (etcd://HOST:PORT/NAME) through ClusterClient.
  std::string cluster;
  uint32_t segment_pages = 256;
  uint32_t text_replicas = 2;
  // Trace time is divided by this; 0 = as fast as possible.
  double speedup = 1.0;
  uint64_t max_requests = 0;    // 0 = every request of the trace
  int concurrency = 4;          // worker threads (requests in flight)
  uint32_t decode_lookups = 0;  // decode-phase Matches of the whole context per request
  bool json = false;
  std::string plot_dir;  // empty: no plots
  // Namespace and KV layout of the replayed pages. page_tokens = the trace's block size.
  std::string tenant = "replay";
  std::string model = "strata-reference-tiny";
  uint32_t block_tokens = 512;
  uint32_t layers = 8, kv_heads = 4, head_dim = 64;
  radix::DType dtype = radix::DType::kBFloat16;
  uint64_t seed = 1;  // token ids and KV bytes derive from (block id, seed)
  // Hit-rate-over-time windows in the plot and JSON.
  uint32_t windows = 60;
  // Capacity grid of the live-vs-exact comparison (points up to the working set).
  uint32_t mae_points = 64;
  // Deadline of each call.
  double call_timeout_s = 30;
  std::string ucx_tls;       // ClientOptions::ucx_transports ("" = UCX's choice)
  std::string command_line;  // as invoked, for the report
  bool help = false;

  // The namespace's layout: KvLayout{layers, kv_heads, head_dim, dtype, block_tokens,
  // key_value, tp 0/1}.
  radix::KvLayout Layout() const;
};

absl::StatusOr<ReplayConfig> ParseReplayArgs(const std::vector<std::string>& args);

// The --help text.
const char* ReplayUsage();

}  // namespace strata::replay
