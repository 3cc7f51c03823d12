// strata-demo: drives the reference worker through a multi-turn agent session against a
// live strata node, through the public client API only.
//
// The session: a prefill of a fresh prompt; several midfills that each add a tool result
// and a user message to the growing context; a branch (a retry that rewrites the last
// turn, continuing from inside an earlier blob); and a decode that writes each page as it
// fills. Every turn matches its context against the node, reads the cached KV straight
// into its buffer, checks it against what the model computes for those pages (the cache
// must be byte-identical to recomputation), computes the rest, and writes the new blob.
//
//   strata-demo [--node HOST:PORT] [--turns N] [--seed S]
//
// Then rebuild from text: DRAM (and SSD) are evicted, so the node drops the KV bytes and
// keeps the tokens (TEXT); Match reports the session's context as TEXT spans; a rebuild of
// its last blob with its prefix is requested; the reference rebuild worker
// (rebuild_worker.h) runs in-process until the queue is empty; the context is read again and
// compared with the bytes read before the eviction. A node without rebuild support
// (UNIMPLEMENTED) skips this part with a note.
//
// Exit status: 0 when every turn ran, every cached byte matched and (when the node supports
// it) every rebuilt byte matched; 1 otherwise.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "client/tools/kv_store.h"
#include "client/tools/rebuild_worker.h"
#include "strata/client.h"
#include "strata/cluster_client.h"
#include "strata/options.h"
#include "strata/types.h"
#include "strata/worker/reference_model.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Deterministic token stream: splitmix64 over (seed, counter), folded into a vocabulary.
class TokenSource {
 public:
  explicit TokenSource(uint64_t seed) : state_(seed) {}
  std::vector<TokenId> Next(size_t n) {
    std::vector<TokenId> out(n);
    for (TokenId& t : out) {
      uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      t = static_cast<TokenId>((z ^ (z >> 31)) % 128000);
    }
    return out;
  }

 private:
  uint64_t state_;
};

struct TurnReport {
  std::string kind;
  size_t context_tokens = 0;
  size_t cached_tokens = 0;
  size_t new_tokens = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  double match_ms = 0, read_ms = 0, compute_ms = 0, write_ms = 0;
  bool existed = false;
};

// The worker side of one conversation: its context tokens and where its KV lives.
// Against one node (client) or a cluster (cluster: the same turns through ClusterClient,
// each segment on its owner).
class AgentSession {
 public:
  AgentSession(tools::KvStore* store, Namespace ns, const worker::ReferenceModel* model)
      : store_(store), ns_(std::move(ns)), model_(model) {}

  // One turn over `context` (whole pages; a trailing partial page stays uncached).
  absl::StatusOr<TurnReport> Turn(std::string kind, const std::vector<TokenId>& context) {
    TurnReport report;
    report.kind = std::move(kind);
    report.context_tokens = context.size();
    const KvLayout& layout = ns_.layout();
    const uint32_t page_tokens = layout.page_tokens;
    const uint32_t pages = static_cast<uint32_t>(context.size() / page_tokens);

    // 1. What does the node already hold?
    auto t0 = Clock::now();
    absl::StatusOr<tools::KvStore::Lookup> match =
        store_->Match(ns_, context, LookupPhase::kUnspecified, {});
    if (!match.ok() && match.status().code() == absl::StatusCode::kNotFound) {
      match = tools::KvStore::Lookup{};  // a namespace the node has not seen: nothing cached
    }
    if (!match.ok())
      return absl::Status(match.status().code(), "match: " + std::string(match.status().message()));
    auto t1 = Clock::now();
    report.match_ms = Ms(t0, t1);
    // Pages with bytes on the node; TEXT pages after them (bytes dropped, tokens kept) are
    // recomputed here like uncached ones.
    const uint32_t cached = match->match.ReadablePages();
    report.cached_tokens = size_t{cached} * page_tokens;
    report.new_tokens = context.size() - report.cached_tokens;

    // 2. Read the cached prefix straight into this worker's KV buffer and check it against
    //    the model's own computation of those pages.
    if (cached > 0) {
      // The worker's KV buffer lives across turns (as a real worker's KV pool does), so a
      // turn's read time is the transfer, not first-touch page faults of fresh memory.
      const size_t bytes = PagesBytes(layout, cached);
      if (kv_.size() < bytes) kv_.resize(bytes);
      const auto r0 = Clock::now();
      const MemoryDescriptor into = MemoryDescriptor::Host(kv_.data(), bytes);
      if (absl::Status s = store_->Read(ns_, *match, cached, into, {}); !s.ok()) {
        return absl::Status(s.code(), "read: " + std::string(s.message()));
      }
      report.read_ms = Ms(r0, Clock::now());
      report.bytes_read = bytes;
      absl::StatusOr<std::vector<std::byte>> expected = model_->ComputeBlobBytes(
          absl::MakeConstSpan(context).first(size_t{cached} * page_tokens), 0, cached);
      if (!expected.ok()) return expected.status();
      if (expected->size() != bytes ||
          !std::equal(expected->begin(), expected->end(), kv_.begin())) {
        return absl::DataLossError(report.kind + ": cached KV differs from recomputation");
      }
    }

    // 3. Compute the KV of the uncached whole pages and write them as one blob.
    if (pages > cached) {
      auto t3 = Clock::now();
      worker::ModelState state = model_->InitialState();
      const std::span<const TokenId> all(context);
      if (absl::Status s = model_->Advance(&state, all.first(size_t{cached} * page_tokens));
          !s.ok()) {
        return s;
      }
      const auto tail =
          all.subspan(size_t{cached} * page_tokens, size_t{pages - cached} * page_tokens);
      std::vector<std::byte> blob(PagesBytes(layout, pages - cached));
      if (absl::Status s = model_->ComputeNextPages(&state, tail, absl::MakeSpan(blob)); !s.ok()) {
        return s;
      }
      auto t4 = Clock::now();
      report.compute_ms = Ms(t3, t4);
      // The whole sequence through its last page (a cluster's segment hashes need it).
      const MemoryDescriptor from = MemoryDescriptor::Host(blob.data(), blob.size());
      absl::StatusOr<WriteResult> wrote =
          store_->Write(ns_, all.first(size_t{pages} * page_tokens), cached, from,
                        tools::ParentAt(*match, cached), {});
      if (!wrote.ok()) {
        return absl::Status(wrote.status().code(),
                            "write: " + std::string(wrote.status().message()));
      }
      report.write_ms = Ms(t4, Clock::now());
      report.existed = wrote->existed;
      report.bytes_written = wrote->existed ? 0 : blob.size();
    }
    return report;
  }

 private:
  tools::KvStore* store_;
  Namespace ns_;
  const worker::ReferenceModel* model_;
  std::vector<std::byte> kv_;  // the worker's KV buffer, reused turn after turn
};

void PrintHeader() {
  std::printf("%-4s %-22s %9s %9s %9s %10s %10s %8s %8s %8s %8s\n", "turn", "kind", "context",
              "cached", "new", "read", "written", "match", "read", "compute", "write");
  std::printf("%-4s %-22s %9s %9s %9s %10s %10s %8s %8s %8s %8s\n", "", "", "tokens", "tokens",
              "tokens", "bytes", "bytes", "ms", "ms", "ms", "ms");
}

std::string Bytes(uint64_t b) {
  char buf[32];
  if (b >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", b / 1048576.0);
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(b));
  }
  return buf;
}

void PrintTurn(int n, const TurnReport& r) {
  std::printf("%-4d %-22s %9zu %9zu %9zu %10s %10s %8.2f %8.2f %8.2f %8.2f%s\n", n, r.kind.c_str(),
              r.context_tokens, r.cached_tokens, r.new_tokens, Bytes(r.bytes_read).c_str(),
              Bytes(r.bytes_written).c_str(), r.match_ms, r.read_ms, r.compute_ms, r.write_ms,
              r.existed ? "  (already cached)" : "");
}

bool Unimplemented(const absl::Status& status, const char* what) {
  if (status.code() != absl::StatusCode::kUnimplemented) return false;
  std::printf("rebuild: skipped, the node has no %s (%s)\n", what,
              std::string(status.message()).c_str());
  return true;
}

// The rebuild-from-text part (header comment). Returns false when something failed.
bool RunRebuildDemo(Client& client, const Namespace& ns, const worker::ReferenceModel& model,
                    const std::vector<TokenId>& context) {
  std::printf("\nrebuild from text\n");
  const uint32_t page_tokens = ns.layout().page_tokens;
  absl::StatusOr<MatchResult> before = client.Match(ns, context);
  if (!before.ok() || before->matched_pages == 0 || before->ReadablePages() == 0) {
    std::fprintf(stderr, "strata-demo: rebuild: nothing cached to start from (%s)\n",
                 before.ok() ? "no pages" : before.status().ToString().c_str());
    return false;
  }
  const uint32_t pages = before->ReadablePages();
  std::vector<std::byte> original(PagesBytes(ns.layout(), pages));
  if (absl::Status s = client.Read(ns, before->segments, pages,
                                   MemoryDescriptor::Host(original.data(), original.size()));
      !s.ok()) {
    std::fprintf(stderr, "strata-demo: rebuild: read before eviction: %s\n", s.ToString().c_str());
    return false;
  }

  // 1. Drop the bytes: DRAM out (to SSD when the node has one), then SSD out.
  absl::StatusOr<EvictResult> dram = client.Evict(Tier::kDram, UINT64_MAX);
  if (!dram.ok()) {
    std::fprintf(stderr, "strata-demo: rebuild: evict dram: %s\n",
                 dram.status().ToString().c_str());
    return false;
  }
  absl::StatusOr<EvictResult> ssd = client.Evict(Tier::kSsd, UINT64_MAX);
  const uint64_t dropped = dram->blobs_dropped + (ssd.ok() ? ssd->blobs_dropped : 0);
  std::printf("evict: %s freed from dram, %llu blobs dropped to text (tokens kept)\n",
              Bytes(dram->bytes_freed).c_str(), static_cast<unsigned long long>(dropped));

  // 2. What Match sees now.
  absl::StatusOr<MatchResult> text = client.Match(ns, context);
  if (!text.ok()) {
    std::fprintf(stderr, "strata-demo: rebuild: match: %s\n", text.status().ToString().c_str());
    return false;
  }
  uint64_t text_pages = 0, text_tokens = 0;
  for (const Segment& segment : text->TextSegments()) {
    text_pages += segment.page_count;
    text_tokens += segment.tokens.size();
  }
  std::printf("match: %u pages matched, %llu of them TEXT (%llu tokens returned), %u readable\n",
              text->matched_pages, static_cast<unsigned long long>(text_pages),
              static_cast<unsigned long long>(text_tokens), text->ReadablePages());
  if (text->segments.empty() || text_pages == 0) {
    std::printf("rebuild: skipped, the node kept no TEXT (it answered with %u readable pages)\n",
                text->ReadablePages());
    return true;
  }

  // 3. Ask for the session's last blob and its whole prefix.
  const BlobKey last = text->segments.back().blob;
  absl::StatusOr<RebuildRequestResult> requested = client.RequestRebuild(last, true);
  if (!requested.ok()) {
    if (Unimplemented(requested.status(), "rebuild queue")) return true;
    std::fprintf(stderr, "strata-demo: rebuild: request: %s\n",
                 requested.status().ToString().c_str());
    return false;
  }
  std::printf("request: rebuild %s with its prefix: %llu queued, %llu resident\n",
              last.ToHex().c_str(), static_cast<unsigned long long>(requested->queued),
              static_cast<unsigned long long>(requested->resident));

  // 4. The reference rebuild worker, in-process, until the queue is empty.
  tools::RebuildWorkerOptions options;
  options.idle_exit = absl::ZeroDuration();
  options.poll_wait = absl::ZeroDuration();
  const tools::RebuildWorkerSummary summary = tools::RunRebuildWorker(client, model, options);
  if (!summary.status.ok()) {
    if (Unimplemented(summary.status, "rebuild queue")) return true;
    std::fprintf(stderr, "strata-demo: rebuild: worker: %s\n", summary.status.ToString().c_str());
    return false;
  }
  std::printf("worker: %llu tasks, %llu rebuilt (%s), %llu checksum mismatches, %.1f ms\n",
              static_cast<unsigned long long>(summary.tasks),
              static_cast<unsigned long long>(summary.rebuilt),
              Bytes(summary.bytes_written).c_str(),
              static_cast<unsigned long long>(summary.checksum_mismatches),
              absl::ToDoubleMilliseconds(summary.elapsed));

  // 5. Read the context again and compare with what was there before the eviction.
  absl::StatusOr<MatchResult> after = client.Match(ns, context);
  bool identical = after.ok() && after->ReadablePages() >= pages;
  if (identical) {
    std::vector<std::byte> rebuilt(original.size());
    const absl::Status s = client.Read(ns, after->segments, pages,
                                       MemoryDescriptor::Host(rebuilt.data(), rebuilt.size()));
    identical = s.ok() && rebuilt == original;
  }
  std::printf("rebuilt %llu blobs (%u pages, %zu tokens of context), byte-identical: %s\n",
              static_cast<unsigned long long>(summary.rebuilt), pages, size_t{pages} * page_tokens,
              identical ? "yes" : "NO");
  return identical;
}

// The demo's namespace and model: 8 layers, 4 KV heads of 64, bf16, 16-token pages = 128 KiB
// of KV a page.
struct Demo {
  Namespace ns;
  std::unique_ptr<worker::ReferenceModel> model;
};

absl::StatusOr<Demo> MakeDemo(uint64_t seed) {
  const KvLayout layout{.num_layers = 8,
                        .num_kv_heads = 4,
                        .head_dim = 64,
                        .dtype = DType::kBFloat16,
                        .page_tokens = 16,
                        .format = KvFormat::kKeyValue,
                        .tp_rank = 0,
                        .tp_world = 1};
  absl::StatusOr<Namespace> ns = Namespace::Create("demo", "strata-reference-tiny", layout);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<std::unique_ptr<worker::ReferenceModel>> model =
      worker::ReferenceModel::Create(layout, seed);
  if (!model.ok()) return model.status();
  return Demo{*std::move(ns), *std::move(model)};
}

// The session's turns (prefill, midfills, a branch, decode, a repeat), printed; false when
// one failed. *context: the session's context at the end.
bool RunSession(AgentSession& session, const Demo& demo, int midfills, uint64_t seed,
                std::vector<TokenId>* out) {
  const KvLayout& layout = demo.ns.layout();
  std::printf("strata-demo: KV layout %s (%s per page)\n\n", layout.ToString().c_str(),
              Bytes(layout.BytesPerPage()).c_str());
  TokenSource tokens(seed);
  std::vector<TokenId> context = tokens.Next(4096 + 7);  // system prompt + task (+ partial page)
  int turn = 0;
  bool ok = true;
  auto run = [&](std::string kind, const std::vector<TokenId>& ctx) {
    absl::StatusOr<TurnReport> r = session.Turn(std::move(kind), ctx);
    if (!r.ok()) {
      std::fprintf(stderr, "strata-demo: turn %d failed: %s\n", turn + 1,
                   r.status().ToString().c_str());
      ok = false;
      return;
    }
    PrintTurn(++turn, *r);
  };
  PrintHeader();
  run("prefill", context);
  std::vector<TokenId> before_last;
  for (int m = 0; m < midfills && ok; ++m) {
    before_last = context;
    std::vector<TokenId> more = tokens.Next(256 + 128 * m);  // a tool result + user message
    context.insert(context.end(), more.begin(), more.end());
    run("midfill (agent step)", context);
  }
  if (ok) {
    // A retry of the last step: same context up to before it, then different tokens. The
    // new blob continues from inside the blob of an earlier turn.
    std::vector<TokenId> branch = before_last;
    branch.resize(branch.size() - branch.size() % 16 + 8);
    std::vector<TokenId> retry = tokens.Next(300);
    branch.insert(branch.end(), retry.begin(), retry.end());
    run("branch (retry)", branch);
  }
  if (ok) {
    // Decode: the context grows a token at a time; each page is written as it fills.
    for (int page = 0; page < 4 && ok; ++page) {
      const size_t target = (context.size() / 16 + 1) * 16;
      std::vector<TokenId> decoded = tokens.Next(target - context.size());
      context.insert(context.end(), decoded.begin(), decoded.end());
      run("decode (page filled)", context);
    }
  }
  if (ok) run("repeat (all cached)", context);
  *out = std::move(context);
  return ok;
}

// --cluster: the same session through ClusterClient (segments of 16 pages, so the 4K-token
// prompt alone spans 16 segments over the nodes), then where the segments went.
int RunCluster(const ClientOptions& options, const std::string& url, int midfills, uint64_t seed) {
  ClusterClientOptions cluster_options;
  cluster_options.cluster_url = url;
  cluster_options.node_options = options;
  cluster_options.segment_pages = 16;
  absl::StatusOr<std::unique_ptr<ClusterClient>> cluster = ClusterClient::Connect(cluster_options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "strata-demo: cannot reach cluster %s: %s\n", url.c_str(),
                 cluster.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<Demo> demo = MakeDemo(seed);
  if (!demo.ok()) {
    std::fprintf(stderr, "strata-demo: %s\n", demo.status().ToString().c_str());
    return 1;
  }
  std::printf("strata-demo: cluster %s (%zu nodes), namespace %s, segments of %u pages\n",
              url.c_str(), (*cluster)->Nodes().size(), demo->ns.ToString().c_str(),
              cluster_options.segment_pages);
  const std::unique_ptr<tools::KvStore> store = tools::KvStore::OfCluster(cluster->get());
  AgentSession session(store.get(), demo->ns, demo->model.get());
  std::vector<TokenId> context;
  const bool ok = RunSession(session, *demo, midfills, seed, &context);
  if (ok) {
    absl::StatusOr<ClusterMatch> m = (*cluster)->Match(demo->ns, context);
    if (m.ok()) {
      std::map<std::string, uint32_t> pages;
      for (size_t i = 0; i < m->owners.size(); ++i)
        pages[m->owners[i]] += m->match.segments[i].page_count;
      std::printf("\nthe context's %u pages by node:", m->match.matched_pages);
      for (const auto& [node, n] : pages) std::printf("  %s %u", node.c_str(), n);
      std::printf("\n");
    }
    const ClusterClientStats stats = (*cluster)->stats();
    std::printf(
        "token text replicated: %llu TEXT copies on the next node of each segment "
        "(%llu failed)\n",
        static_cast<unsigned long long>(stats.text_replicas),
        static_cast<unsigned long long>(stats.text_replica_failures));
  }
  std::printf(
      "\nstrata-demo: %s\n",
      ok ? "every turn ran across the cluster; every cached byte matched recomputation" : "FAILED");
  return ok ? 0 : 1;
}

int Usage(const char* argv0, int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: %s [--node HOST:PORT | --cluster etcd://HOST:PORT/NAME] [--turns N] "
               "[--seed S]\n"
               "Runs a multi-turn agent session (prefill, midfills, a branch, decode) through\n"
               "the reference worker against a strata node (default $STRATA_NODE or "
               "127.0.0.1:7400)\nor a cluster ($STRATA_CLUSTER; segments of 16 pages).\n",
               argv0);
  return code;
}

int Main(int argc, char** argv) {
  ClientOptions options = ClientOptions::FromEnvironment();
  std::string cluster_url;
  if (const char* env = std::getenv("STRATA_CLUSTER"); env != nullptr) cluster_url = env;
  int midfills = 4;
  uint64_t seed = 42;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") return Usage(argv[0], 0);
    const char* v = nullptr;
    if (arg == "--node" && (v = value())) {
      options.node = v;
      cluster_url.clear();
    } else if (arg == "--cluster" && (v = value())) {
      cluster_url = v;
    } else if (arg == "--turns" && (v = value())) {
      midfills = std::atoi(v);
    } else if (arg == "--seed" && (v = value())) {
      seed = std::strtoull(v, nullptr, 10);
    } else {
      std::fprintf(stderr, "strata-demo: unknown or incomplete argument '%s'\n", argv[i]);
      return Usage(argv[0], 2);
    }
  }
  if (midfills < 1 || midfills > 64) {
    std::fprintf(stderr, "strata-demo: --turns must be in [1, 64]\n");
    return 2;
  }
  if (!cluster_url.empty()) return RunCluster(options, cluster_url, midfills, seed);
  options.wait_for_node = true;
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "strata-demo: cannot reach node %s: %s\n", options.node.c_str(),
                 client.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<Demo> demo = MakeDemo(seed);
  if (!demo.ok()) {
    std::fprintf(stderr, "strata-demo: %s\n", demo.status().ToString().c_str());
    return 1;
  }
  std::printf("strata-demo: node %s, namespace %s\n", options.node.c_str(),
              demo->ns.ToString().c_str());
  const std::unique_ptr<tools::KvStore> store = tools::KvStore::OfNode(client->get());
  AgentSession session(store.get(), demo->ns, demo->model.get());
  std::vector<TokenId> context;
  bool ok = RunSession(session, *demo, midfills, seed, &context);
  absl::StatusOr<NodeTiers> tiers = (*client)->Tiers();
  if (tiers.ok()) {
    for (const TierStats& t : tiers->tiers) {
      std::printf("\ntier %s: %s of %s used, %llu blobs, %llu hits, %llu misses, %llu evictions\n",
                  std::string(TierName(t.tier)).c_str(), Bytes(t.used_bytes).c_str(),
                  Bytes(t.capacity_bytes).c_str(), static_cast<unsigned long long>(t.blobs),
                  static_cast<unsigned long long>(t.hits),
                  static_cast<unsigned long long>(t.misses),
                  static_cast<unsigned long long>(t.evictions));
    }
  }
  if (ok) ok = RunRebuildDemo(**client, demo->ns, *demo->model, context);
  std::printf(
      "\nstrata-demo: %s\n",
      ok ? "every turn ran; every cached and rebuilt byte matched recomputation" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
