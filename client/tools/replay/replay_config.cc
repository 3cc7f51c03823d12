#include "client/tools/replay/replay_config.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace strata::replay {
namespace {

constexpr char kUsage[] =
    R"(strata-replay: replay a Mooncake-format JSONL trace against a live strata node

usage: strata-replay [flags] TRACE.jsonl

  --node HOST:PORT        the node's gRPC address (default 127.0.0.1:7400)
  --cluster URL           a cluster instead: etcd://HOST:PORT[/NAME] (strata::ClusterClient)
  --segment-pages N       with --cluster: pages per segment (default 256)
  --text-replicas N       with --cluster: nodes holding each segment's token text (default 2)
  --speedup F             divide trace time by F (default 1: real time); 0 = as fast as possible
  --max-requests N        replay the first N requests (default: all)
  --concurrency C         requests in flight, one worker thread each (default 4)
  --decode-lookups N      per request, N decode-phase Matches of the whole context (default 0)
  --json                  print the report as one JSON object instead of a table
  --plot-dir DIR          write hit_rate.png and mrc.png into DIR (created if missing)
  --block-tokens N        tokens per trace block = page size of the namespace (default 512)
  --layers N --kv-heads N --head-dim N --dtype T
                          KV layout (default: the reference worker's 8 x 4 x 64 bfloat16)
  --tenant T --model M    the namespace (default replay / strata-reference-tiny)
  --seed N                token ids and KV bytes derive from (block id, seed) (default 1)
  --windows N             hit-rate-over-time windows (default 60)
  --mae-points N          capacities of the live-vs-exact comparison (default 64)
  --timeout-s S           deadline of each call (default 30)
  --ucx-tls TLS           UCX transports of the data plane (default: UCX's choice)
  --help
)";

absl::Status Bad(absl::string_view flag, absl::string_view value, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(flag, " ", value, ": ", why));
}

template <typename T>
absl::Status ParseUnsigned(absl::string_view flag, absl::string_view v, T min, T max, T* out) {
  uint64_t x = 0;
  if (!absl::SimpleAtoi(v, &x)) return Bad(flag, v, "not a non-negative integer");
  if (x < static_cast<uint64_t>(min) || x > static_cast<uint64_t>(max))
    return Bad(flag, v, absl::StrCat("outside [", min, ", ", max, "]"));
  *out = static_cast<T>(x);
  return absl::OkStatus();
}

}  // namespace

radix::KvLayout ReplayConfig::Layout() const {
  return radix::KvLayout{.num_layers = layers,
                         .num_kv_heads = kv_heads,
                         .head_dim = head_dim,
                         .dtype = dtype,
                         .page_tokens = block_tokens,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

const char* ReplayUsage() { return kUsage; }

absl::StatusOr<ReplayConfig> ParseReplayArgs(const std::vector<std::string>& args) {
  ReplayConfig c;
  c.command_line = absl::StrJoin(args, " ");
  for (size_t i = 1; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_inline = false;
    if (absl::StartsWith(flag, "--")) {
      if (const size_t eq = flag.find('='); eq != std::string::npos) {
        value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
        has_inline = true;
      }
    } else {
      if (!c.trace_path.empty()) return Bad("trace", flag, "a second trace path");
      c.trace_path = flag;
      continue;
    }
    if (flag == "--help" || flag == "-h") {
      c.help = true;
      return c;
    }
    if (flag == "--json") {
      c.json = true;
      continue;
    }
    if (!has_inline) {
      if (i + 1 >= args.size()) return Bad(flag, "", "needs a value");
      value = args[++i];
    }
    absl::Status s;
    if (flag == "--trace") {
      c.trace_path = value;
    } else if (flag == "--node") {
      if (value.find(':') == std::string::npos) return Bad(flag, value, "not HOST:PORT");
      c.node = value;
    } else if (flag == "--cluster") {
      if (!absl::StartsWith(value, "etcd://")) return Bad(flag, value, "not etcd://HOST:PORT/NAME");
      c.cluster = value;
    } else if (flag == "--segment-pages") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 1u << 20, &c.segment_pages);
    } else if (flag == "--text-replicas") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 8, &c.text_replicas);
    } else if (flag == "--speedup") {
      if (!absl::SimpleAtod(value, &c.speedup) || !(c.speedup >= 0) || c.speedup > 1e9) {
        return Bad(flag, value, "not a number >= 0");
      }
    } else if (flag == "--max-requests") {
      s = ParseUnsigned<uint64_t>(flag, value, 0, ~uint64_t{0}, &c.max_requests);
    } else if (flag == "--concurrency") {
      s = ParseUnsigned<int>(flag, value, 1, 256, &c.concurrency);
    } else if (flag == "--decode-lookups") {
      s = ParseUnsigned<uint32_t>(flag, value, 0, 64, &c.decode_lookups);
    } else if (flag == "--plot-dir") {
      c.plot_dir = value;
    } else if (flag == "--block-tokens") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 1u << 16, &c.block_tokens);
    } else if (flag == "--layers") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 1024, &c.layers);
    } else if (flag == "--kv-heads") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 1024, &c.kv_heads);
    } else if (flag == "--head-dim") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 4096, &c.head_dim);
    } else if (flag == "--dtype") {
      absl::StatusOr<radix::DType> d = radix::ParseDType(value);
      if (!d.ok()) return Bad(flag, value, d.status().message());
      c.dtype = *d;
    } else if (flag == "--tenant") {
      c.tenant = value;
    } else if (flag == "--model") {
      c.model = value;
    } else if (flag == "--seed") {
      s = ParseUnsigned<uint64_t>(flag, value, 0, ~uint64_t{0}, &c.seed);
    } else if (flag == "--windows") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 10000, &c.windows);
    } else if (flag == "--mae-points") {
      s = ParseUnsigned<uint32_t>(flag, value, 1, 10000, &c.mae_points);
    } else if (flag == "--timeout-s") {
      if (!absl::SimpleAtod(value, &c.call_timeout_s) || !(c.call_timeout_s > 0)) {
        return Bad(flag, value, "not a number > 0");
      }
    } else if (flag == "--ucx-tls") {
      c.ucx_tls = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    }
    if (!s.ok()) return s;
  }
  if (c.trace_path.empty()) return absl::InvalidArgumentError("no trace file given");
  if (absl::Status s = c.Layout().Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("KV layout: ", s.message()));
  }
  return c;
}

}  // namespace strata::replay
