// strata-cluster-bench: a long context striped over 1..N nodes through strata::ClusterClient
// (issue 13, item 9): what a cluster lookup and a fanned-out read cost, by node count,
// segment size S and context length.
//
//   strata-cluster-bench --nodes HOST:PORT,... [--node-counts 1,2,4,8]
//                        [--tokens 32768,131072] [--segment-pages 16,64,256,1024]
//                        [--match-iters 200] [--read-iters 5] [--ucx-tls TLS]
//
// For every (node count n, S, tokens T): a ClusterClient over the first n nodes (a static
// membership: every client agrees), a fresh namespace, T random tokens written from page 0
// in one Write (cut into segments over the owners), then `--match-iters` Matches of the
// whole context (p50/p99 of single calls) and `--read-iters` Reads of all of it into one
// buffer (GB/s; the first read is checked byte for byte against what was written). The
// blobs are deleted afterwards. Layout: 2 layers x 2 KV heads x 64, bf16, 16-token pages
// (16 KiB a page: a 128K-token context is 128 MiB).
//
// On one machine every node shares its cores and memory: the read figure shows the cost of
// the fan-out, not the scaling a cluster of machines would have.
// Output: the command line and date, then one row per run. Exit status: 0, 1 on the first
// failed call, 2 usage.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/cluster_client.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

KvLayout BenchLayout() {
  return KvLayout{.num_layers = 2,
                  .num_kv_heads = 2,
                  .head_dim = 64,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 16,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

struct Options {
  std::vector<std::string> nodes;
  // --cluster: a workload against the cluster's members in etcd (deploy/cluster-membership.sh).
  std::string cluster;
  std::string workload;  // write | read
  int sequences = 64;
  uint32_t pages = 64;
  uint64_t seed = 1;
  std::vector<int> node_counts = {1, 2, 4, 8};
  std::vector<uint32_t> tokens = {32768, 131072};
  std::vector<uint32_t> segment_pages = {16, 64, 256, 1024};
  int match_iters = 200;
  int read_iters = 5;
  std::string ucx_tls;
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct Row {
  int nodes = 0;
  uint32_t segment_pages = 0, tokens = 0, segments = 0, owners = 0;
  double write_gbps = 0, match_p50_ms = 0, match_p99_ms = 0, read_gbps = 0;
};

absl::StatusOr<Row> RunOne(const Options& o, int n, uint32_t s, uint32_t t, uint64_t seed) {
  ClusterClientOptions options;
  options.nodes.assign(o.nodes.begin(), o.nodes.begin() + n);
  options.node_options.ucx_transports = o.ucx_tls;
  options.node_options.default_timeout = absl::Seconds(60);
  options.segment_pages = s;
  options.node_timeout = absl::Seconds(5);  // a benchmark waits; the default is 300 ms
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ClusterClient> cluster, ClusterClient::Connect(options));
  STRATA_ASSIGN_OR_RETURN(
      const Namespace ns,
      Namespace::Create("bench", absl::StrCat("cluster-bench-", seed), BenchLayout()));
  std::mt19937_64 rng(seed);
  std::vector<TokenId> tokens(t);
  for (TokenId& id : tokens) id = static_cast<TokenId>(rng() % 50000);
  const uint32_t pages = t / ns.layout().page_tokens;
  std::vector<std::byte> source(PagesBytes(ns.layout(), pages));
  for (size_t i = 0; i < source.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(source.data() + i, &v, std::min<size_t>(8, source.size() - i));
  }
  Row row{.nodes = n, .segment_pages = s, .tokens = t};

  Clock::time_point start = Clock::now();
  STRATA_ASSIGN_OR_RETURN(
      const ClusterWriteResult written,
      cluster->Write(ns, tokens, 0, MemoryDescriptor::Host(source.data(), source.size())));
  row.write_gbps = static_cast<double>(source.size()) / Ms(Clock::now() - start) / 1e6;
  row.segments = static_cast<uint32_t>(written.pieces.size());
  row.owners = static_cast<uint32_t>(
      std::set<std::string>(written.owners.begin(), written.owners.end()).size());

  ClusterMatch match;
  std::vector<double> ms;
  for (int i = -3; i < o.match_iters; ++i) {  // three untimed: connections, first lookups
    start = Clock::now();
    STRATA_ASSIGN_OR_RETURN(match, cluster->Match(ns, tokens));
    if (i >= 0) ms.push_back(Ms(Clock::now() - start));
  }
  if (match.match.matched_pages != pages) {
    return absl::InternalError(
        absl::StrCat("matched ", match.match.matched_pages, " of ", pages, " pages just written"));
  }
  row.match_p50_ms = Percentile(ms, 0.5);
  row.match_p99_ms = Percentile(ms, 0.99);

  std::vector<std::byte> dest(source.size());
  double read_ms = 0;
  for (int i = -1; i < o.read_iters; ++i) {
    start = Clock::now();
    STRATA_RETURN_IF_ERROR(
        cluster->Read(ns, match, pages, MemoryDescriptor::Host(dest.data(), dest.size())));
    if (i >= 0) read_ms += Ms(Clock::now() - start);
    if (i == -1 && dest != source) return absl::DataLossError("a read differs from the write");
  }
  row.read_gbps = static_cast<double>(source.size()) * o.read_iters / read_ms / 1e6;

  // Give the nodes their memory back for the next run.
  std::map<std::string, std::unique_ptr<Client>> clients;
  for (size_t i = 0; i < written.pieces.size(); ++i) {
    std::unique_ptr<Client>& client = clients[written.owners[i]];
    if (client == nullptr) {
      ClientOptions one = options.node_options;
      one.node = written.owners[i];  // a static member's id is its address
      STRATA_ASSIGN_OR_RETURN(client, Client::Connect(one));
    }
    absl::StatusOr<DeleteResult> deleted = client->Delete(written.pieces[i].key);
    if (!deleted.ok() && !absl::IsNotFound(deleted.status())) return deleted.status();
  }
  return row;
}

// --cluster URL --workload write|read: `sequences` sequences of `pages` pages (tokens and
// bytes from `seed`), segments of segment_pages[0]; write writes them, read looks each up,
// reads what is readable (checked byte for byte), waits for the moves a read started, and
// prints what was found where and what moved. For join and drain figures.
int RunWorkload(const Options& o) {
  ClusterClientOptions options;
  options.cluster_url = o.cluster;
  options.node_options.ucx_transports = o.ucx_tls;
  options.node_options.default_timeout = absl::Seconds(60);
  options.segment_pages = o.segment_pages.front();
  absl::StatusOr<std::unique_ptr<ClusterClient>> cluster = ClusterClient::Connect(options);
  absl::StatusOr<Namespace> ns = Namespace::Create("bench", "cluster-membership", BenchLayout());
  if (!cluster.ok() || !ns.ok()) {
    std::fprintf(stderr, "strata-cluster-bench: %s\n",
                 (!cluster.ok() ? cluster.status() : ns.status()).ToString().c_str());
    return 1;
  }
  const uint32_t pt = ns->layout().page_tokens;
  const uint64_t bytes = PagesBytes(ns->layout(), o.pages);
  uint64_t found = 0, readable = 0, from_previous = 0, segments = 0;
  for (int i = 0; i < o.sequences; ++i) {
    std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(i));
    std::vector<TokenId> tokens(size_t{o.pages} * pt);
    for (TokenId& id : tokens) id = static_cast<TokenId>(rng() % 50000);
    std::vector<std::byte> source(bytes);
    for (size_t b = 0; b < source.size(); b += 8) {
      const uint64_t v = rng();
      std::memcpy(source.data() + b, &v, std::min<size_t>(8, source.size() - b));
    }
    if (o.workload == "write") {
      absl::StatusOr<ClusterWriteResult> w =
          (*cluster)->Write(*ns, tokens, 0, MemoryDescriptor::Host(source.data(), source.size()));
      if (!w.ok()) {
        std::fprintf(stderr, "strata-cluster-bench: write %d: %s\n", i,
                     w.status().ToString().c_str());
        return 1;
      }
      continue;
    }
    absl::StatusOr<ClusterMatch> m = (*cluster)->Match(*ns, tokens);
    if (!m.ok()) {
      std::fprintf(stderr, "strata-cluster-bench: match %d: %s\n", i,
                   m.status().ToString().c_str());
      return 1;
    }
    found += m->match.matched_pages;
    const uint32_t r = m->match.ReadablePages();
    readable += r;
    from_previous += m->segments_from_previous;
    segments += m->segments_asked;
    if (r == 0) continue;
    std::vector<std::byte> got(PagesBytes(ns->layout(), r));
    if (absl::Status s =
            (*cluster)->Read(*ns, *m, r, MemoryDescriptor::Host(got.data(), got.size()));
        !s.ok()) {
      std::fprintf(stderr, "strata-cluster-bench: read %d: %s\n", i, s.ToString().c_str());
      return 1;
    }
    // Layer-major: each layer's first r pages of the written blob.
    const uint64_t chunk = ns->layout().BytesPerLayerPage();
    for (uint32_t l = 0; l < ns->layout().num_layers; ++l) {
      if (std::memcmp(got.data() + uint64_t{l} * r * chunk,
                      source.data() + uint64_t{l} * o.pages * chunk, r * chunk) != 0) {
        std::fprintf(stderr, "strata-cluster-bench: read %d: bytes differ\n", i);
        return 1;
      }
    }
  }
  if (o.workload == "write") {
    std::printf("wrote %d sequences of %u pages (%.1f MiB)\n", o.sequences, o.pages,
                static_cast<double>(bytes) * o.sequences / 1048576.0);
    return 0;
  }
  (*cluster)->WaitMovesIdle(absl::Seconds(120));
  const ClusterClientStats stats = (*cluster)->stats();
  std::printf(
      "{\"sequences\": %d, \"pages\": %llu, \"found_pages\": %llu, \"readable_pages\": %llu, "
      "\"segments\": %llu, \"segments_from_previous\": %llu, \"moves_done\": %llu, "
      "\"moves_failed\": %llu, \"moves_dropped\": %llu, \"bytes_moved\": %llu, "
      "\"kv_bytes\": %llu, \"nodes\": %zu}\n",
      o.sequences, static_cast<unsigned long long>(uint64_t{o.pages} * o.sequences),
      static_cast<unsigned long long>(found), static_cast<unsigned long long>(readable),
      static_cast<unsigned long long>(segments), static_cast<unsigned long long>(from_previous),
      static_cast<unsigned long long>(stats.moves_done),
      static_cast<unsigned long long>(stats.moves_failed),
      static_cast<unsigned long long>(stats.moves_dropped),
      static_cast<unsigned long long>(stats.bytes_moved),
      static_cast<unsigned long long>(bytes * o.sequences), (*cluster)->Nodes().size());
  return 0;
}

int Usage(const char* argv0, int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: %s --nodes HOST:PORT,... [--node-counts 1,2,4,8] [--tokens 32768,131072]\n"
               "          [--segment-pages 16,64,256,1024] [--match-iters 200] [--read-iters 5]\n"
               "          [--ucx-tls TLS]\n"
               "       %s --cluster etcd://HOST:PORT/NAME --workload write|read [--sequences 64]\n"
               "          [--pages 64] [--segment-pages 16] [--seed 1] [--ucx-tls TLS]\n",
               argv0, argv0);
  return code;
}

template <typename T>
bool ParseList(const std::string& v, std::vector<T>* out) {
  out->clear();
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    T x{};
    if (!absl::SimpleAtoi(part, &x) || x <= 0) return false;
    out->push_back(x);
  }
  return !out->empty();
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Usage(argv[0], 0);
    if (i + 1 >= argc) return Usage(argv[0], 2);
    const std::string v = argv[i + 1];
    bool ok = true;
    if (arg == "--nodes") {
      o.nodes = absl::StrSplit(v, ',', absl::SkipEmpty());
    } else if (arg == "--node-counts") {
      ok = ParseList(v, &o.node_counts);
    } else if (arg == "--tokens") {
      ok = ParseList(v, &o.tokens);
    } else if (arg == "--segment-pages") {
      ok = ParseList(v, &o.segment_pages);
    } else if (arg == "--match-iters") {
      ok = absl::SimpleAtoi(v, &o.match_iters) && o.match_iters >= 1;
    } else if (arg == "--read-iters") {
      ok = absl::SimpleAtoi(v, &o.read_iters) && o.read_iters >= 1;
    } else if (arg == "--ucx-tls") {
      o.ucx_tls = v;
    } else if (arg == "--cluster") {
      o.cluster = v;
    } else if (arg == "--workload") {
      o.workload = v;
      ok = v == "write" || v == "read";
    } else if (arg == "--sequences") {
      ok = absl::SimpleAtoi(v, &o.sequences) && o.sequences >= 1;
    } else if (arg == "--pages") {
      ok = absl::SimpleAtoi(v, &o.pages) && o.pages >= 1;
    } else if (arg == "--seed") {
      ok = absl::SimpleAtoi(v, &o.seed);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "strata-cluster-bench: bad argument %s %s\n", arg.c_str(), v.c_str());
      return Usage(argv[0], 2);
    }
  }
  if (!o.cluster.empty()) {
    if (o.workload.empty()) return Usage(argv[0], 2);
    return RunWorkload(o);
  }
  if (o.nodes.empty()) return Usage(argv[0], 2);
  for (uint32_t t : o.tokens) {
    if (t % BenchLayout().page_tokens != 0) {
      std::fprintf(stderr, "strata-cluster-bench: --tokens must be whole 16-token pages\n");
      return 2;
    }
  }
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::printf("# command: %s\n# date: %s\n", absl::StrJoin(argv, argv + argc, " ").c_str(), date);
  std::printf("%5s %6s %7s %8s %6s %9s %11s %11s %9s\n", "nodes", "S", "tokens", "segments",
              "owners", "write_GBs", "match_p50ms", "match_p99ms", "read_GBs");
  uint64_t seed = static_cast<uint64_t>(now) * 1000003 + static_cast<uint64_t>(getpid());
  for (int n : o.node_counts) {
    if (n > static_cast<int>(o.nodes.size())) continue;
    for (uint32_t t : o.tokens) {
      for (uint32_t s : o.segment_pages) {
        absl::StatusOr<Row> row = RunOne(o, n, s, t, ++seed);
        if (!row.ok()) {
          std::fprintf(stderr, "strata-cluster-bench: nodes %d S %u tokens %u: %s\n", n, s, t,
                       row.status().ToString().c_str());
          return 1;
        }
        std::printf("%5d %6u %7u %8u %6u %9.3f %11.3f %11.3f %9.3f\n", row->nodes,
                    row->segment_pages, row->tokens, row->segments, row->owners, row->write_gbps,
                    row->match_p50_ms, row->match_p99_ms, row->read_gbps);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
