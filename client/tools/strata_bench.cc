// strata-bench: GET, PUT and Match against a live strata node through libstrata's public API,
// as an inference worker would call it.
//
//   strata-bench [--node HOST:PORT] [--ucx-tls TLS] [--modes put,get,match]
//                [--sizes 256K,1M,4M,16M] [--clients 1,2,4,8] [--min-seconds 1.5]
//                [--min-ops 16] [--max-seconds 10] [--bytes 64G] [--match-tokens 32768]
//                [--match-iters 2000] [--csv]
//
// Every client is its own strata::Client (its own gRPC channel and UCX worker) on its own
// thread, doing one call after another:
//   put    Write of a fresh blob of SIZE bytes (new random tokens, so a new key: the node
//          takes every byte; nothing is skipped as `exists`). Blobs are deleted afterwards.
//   get    Read of a whole blob of SIZE bytes (each client cycles over 2 blobs it wrote
//          before timing) into its buffer; every chunk's checksum is verified as it lands.
//   match  Match of a TOKENS-token prompt (cached as a chain of 2048-token turns, plus 512
//          new tokens) from one client; beside it Health, the bare gRPC round trip.
//   memcpy no store: each client copies SIZE bytes from one of its source buffers (as get
//          cycles over its blobs) into its buffer with memcpy — the limit of a same-host GET
//          or PUT, which moves the same bytes once (plus checksums).
// --working-set BYTES: get and memcpy cycle over max(2, BYTES / SIZE) blobs (sources) per
// client; past the CPU caches both read cold memory.
// --same-host on|off: the library's same-host channel (on, its default: reads straight out
// of a local node's DRAM tier, puts through a staging file) or UCX only (off).
// A run of one (mode, size, clients) lasts `--min-seconds` with at least `--min-ops` calls
// per client, and stops early after `--bytes` bytes in all or at `--max-seconds`; two calls
// per client before the clock starts set up the connections.
//
// Output: the command line and date, then one row per run: GB/s (10^9 bytes/s) of payload
// over the wall time from the common start to the last client's end; latency percentiles
// of single calls. --csv prints the same rows as CSV for scripts (deploy/bench-compare.sh).
// Exit status: 0 when every call succeeded; 1 on the first failed call (printed); 2 usage.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/options.h"
#include "strata/types.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  ClientOptions client;
  std::vector<std::string> modes = {"put", "get", "match"};
  std::vector<uint64_t> sizes = {256 << 10, 1 << 20, 4 << 20, 16 << 20};
  std::vector<int> clients = {1, 2, 4, 8};
  uint64_t bytes = uint64_t{64} << 30;
  int min_ops = 16;
  double min_seconds = 1.5;
  double max_seconds = 10;
  // get and memcpy cycle over this many bytes of blobs (sources) per client, at least 2 of
  // them: beyond the CPU caches both read cold memory, as a node's GiB-scale DRAM tier is.
  uint64_t working_set = 0;
  uint32_t match_tokens = 32768;
  int match_iters = 2000;
  bool csv = false;
};

// 8 layers x 8 KV heads x 128, bf16, 8-token pages: a layer-page (the checksum chunk) is
// 32 KiB, a page 256 KiB; sizes are whole pages.
KvLayout BlobLayoutForBench() {
  return KvLayout{.num_layers = 8,
                  .num_kv_heads = 8,
                  .head_dim = 128,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 8,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

// 1 layer x 1 head x 8, bf16, 16-token pages (512 B a page): Match cost is in tokens and
// index walks, not KV bytes, so the prompt's KV stays small.
KvLayout MatchLayoutForBench() {
  return KvLayout{.num_layers = 1,
                  .num_kv_heads = 1,
                  .head_dim = 8,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 16,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

std::vector<TokenId> RandomTokens(std::mt19937_64& rng, size_t n) {
  std::vector<TokenId> out(n);
  for (TokenId& t : out) t = static_cast<TokenId>(rng() % 128000);
  return out;
}

struct RunResult {
  std::string mode;
  uint64_t size = 0;
  int clients = 0;
  uint64_t ops = 0;
  double seconds = 0;
  std::vector<double> latencies_us;  // every timed call
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * v.size()));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

void PrintRow(const BenchOptions& o, RunResult& r) {
  const double gbps = r.size == 0 ? 0 : r.ops * static_cast<double>(r.size) / r.seconds / 1e9;
  const double p50 = Percentile(r.latencies_us, 50);
  const double p99 = Percentile(r.latencies_us, 99);
  const double ops_s = r.ops / r.seconds;
  if (o.csv) {
    std::printf("%s,%llu,%d,%llu,%.3f,%.4f,%.1f,%.1f,%.1f\n", r.mode.c_str(),
                static_cast<unsigned long long>(r.size), r.clients,
                static_cast<unsigned long long>(r.ops), r.seconds, gbps, ops_s, p50, p99);
  } else {
    std::printf("%-6s %10llu %7d %7llu %8.2f %9.3f %10.0f %10.1f %10.1f\n", r.mode.c_str(),
                static_cast<unsigned long long>(r.size), r.clients,
                static_cast<unsigned long long>(r.ops), r.seconds, gbps, ops_s, p50, p99);
  }
  std::fflush(stdout);
}

// Each client's state for one run of put or get.
struct Worker {
  std::unique_ptr<Client> client;
  std::vector<std::byte> buffer;
  std::vector<std::byte> sources;  // memcpy: 2 * SIZE bytes to copy from
  std::vector<BlobKey> keys;       // put: written (to delete); get: the blobs to read
  std::mt19937_64 rng;
  std::vector<double> latencies_us;
  uint64_t ops = 0;
  absl::Status status;
};

absl::StatusOr<BlobKey> WriteFreshBlob(Worker& w, const Namespace& ns, uint32_t pages) {
  const std::vector<TokenId> tokens = RandomTokens(w.rng, size_t{pages} * ns.layout().page_tokens);
  absl::StatusOr<WriteResult> r = w.client->Write(
      ns, std::nullopt, tokens, MemoryDescriptor::Host(w.buffer.data(), w.buffer.size()));
  if (!r.ok()) return r.status();
  if (r->existed) return absl::InternalError("a fresh random key already existed");
  return r->key;
}

absl::Status OneCall(Worker& w, const std::string& mode, const Namespace& ns, uint32_t pages,
                     uint64_t i) {
  if (mode == "memcpy") {
    const uint64_t count = w.sources.size() / w.buffer.size();
    std::memcpy(w.buffer.data(), w.sources.data() + (i % count) * w.buffer.size(), w.buffer.size());
    return absl::OkStatus();
  }
  if (mode == "put") {
    absl::StatusOr<BlobKey> key = WriteFreshBlob(w, ns, pages);
    if (!key.ok()) return key.status();
    w.keys.push_back(*key);
    return absl::OkStatus();
  }
  const ReadRange range{w.keys[i % w.keys.size()], 0, pages};
  const MemoryDescriptor dst = MemoryDescriptor::Host(w.buffer.data(), w.buffer.size());
  return w.client->Read(ns, {&range, 1}, {&dst, 1});
}

absl::StatusOr<RunResult> RunTransfers(const BenchOptions& o, const std::string& mode,
                                       const Namespace& ns, uint64_t size, int clients,
                                       uint64_t seed) {
  const uint32_t pages = static_cast<uint32_t>(size / ns.layout().BytesPerPage());
  std::vector<Worker> workers(clients);
  for (int c = 0; c < clients; ++c) {
    Worker& w = workers[c];
    if (mode != "memcpy") {
      STRATA_ASSIGN_OR_RETURN(w.client, Client::Connect(o.client));
    }
    w.buffer.resize(size);
    const uint64_t sources = std::max<uint64_t>(2, (o.working_set + size - 1) / size);
    if (mode == "memcpy") {
      w.sources.resize(sources * size);
      std::mt19937_64 fill(seed + c);
      for (size_t b = 0; b + 8 <= w.sources.size(); b += 8) {
        const uint64_t v = fill();
        std::memcpy(w.sources.data() + b, &v, sizeof(v));
      }
    }
    w.rng.seed(seed * 1000 + c);
    for (size_t b = 0; b < w.buffer.size(); b += 4096) {
      w.buffer[b] = static_cast<std::byte>(w.rng());
    }
    if (mode == "get") {
      for (uint64_t k = 0; k < sources; ++k) {
        STRATA_ASSIGN_OR_RETURN(BlobKey key, WriteFreshBlob(w, ns, pages));
        w.keys.push_back(key);
      }
    }
  }
  const uint64_t ops_per_client =
      std::max<uint64_t>(o.min_ops, o.bytes / size / static_cast<uint64_t>(clients));
  std::barrier start(clients + 1);
  std::atomic<bool> stop{false};
  std::atomic<bool> long_enough{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      Worker& w = workers[c];
      for (uint64_t i = 0; i < 2 && w.status.ok(); ++i) w.status = OneCall(w, mode, ns, pages, i);
      start.arrive_and_wait();
      for (uint64_t i = 0; i < ops_per_client && w.status.ok() && !stop.load() &&
                           (i < static_cast<uint64_t>(o.min_ops) || !long_enough.load());
           ++i) {
        const Clock::time_point t0 = Clock::now();
        w.status = OneCall(w, mode, ns, pages, i);
        w.latencies_us.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        ++w.ops;
      }
    });
  }
  start.arrive_and_wait();
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point limit = t0 + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.max_seconds));
  const Clock::time_point enough = t0 + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(o.min_seconds));
  std::thread watchdog([&] {
    while (!stop.load() && Clock::now() < limit) {
      if (Clock::now() >= enough) long_enough.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop.store(true);
  });
  for (std::thread& t : threads) t.join();
  const Clock::time_point t1 = Clock::now();
  stop.store(true);
  watchdog.join();

  RunResult r{mode, size, clients, 0, std::chrono::duration<double>(t1 - t0).count(), {}};
  absl::Status status;
  for (Worker& w : workers) {
    if (status.ok() && !w.status.ok()) status = w.status;
    r.ops += w.ops;
    r.latencies_us.insert(r.latencies_us.end(), w.latencies_us.begin(), w.latencies_us.end());
    for (const BlobKey& key : w.keys) (void)w.client->Delete(key);
  }
  if (!status.ok()) return status;
  // A run meant to measure the same-host channel must have used it.
  if (o.client.same_host && mode != "memcpy") {
    for (Worker& w : workers) {
      const ClientStats stats = w.client->stats();
      if (stats.same_host_reads + stats.same_host_writes == 0) {
        return absl::FailedPreconditionError(
            "--same-host on, but the node's same-host channel was not used (another host? "
            "same_host off at the node?)");
      }
    }
  }
  return r;
}

absl::Status RunMatch(const BenchOptions& o, uint64_t seed) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Connect(o.client));
  STRATA_ASSIGN_OR_RETURN(
      Namespace ns,
      Namespace::Create("bench", absl::StrCat("strata-bench-match-", seed), MatchLayoutForBench()));
  const KvLayout& layout = ns.layout();
  std::mt19937_64 rng(seed);
  // The conversation so far: turns of 2048 tokens, each a blob continuing the previous one.
  const uint32_t turn_tokens = 2048;
  std::vector<TokenId> prompt;
  std::optional<Parent> parent;
  std::vector<std::byte> kv(size_t{turn_tokens / layout.page_tokens} * layout.BytesPerPage());
  std::vector<BlobKey> keys;
  while (prompt.size() < o.match_tokens) {
    const std::vector<TokenId> turn = RandomTokens(rng, turn_tokens);
    STRATA_ASSIGN_OR_RETURN(
        WriteResult w,
        client->Write(ns, parent, turn, MemoryDescriptor::Host(kv.data(), kv.size())));
    prompt.insert(prompt.end(), turn.begin(), turn.end());
    parent = Parent{w.key, static_cast<uint32_t>(prompt.size() / layout.page_tokens)};
    keys.push_back(w.key);
  }
  const uint32_t cached_pages = static_cast<uint32_t>(prompt.size() / layout.page_tokens);
  const std::vector<TokenId> fresh = RandomTokens(rng, 512);
  prompt.insert(prompt.end(), fresh.begin(), fresh.end());

  auto time_calls = [&](const std::string& name, auto&& call) -> absl::Status {
    for (int i = 0; i < 20; ++i) STRATA_RETURN_IF_ERROR(call());
    RunResult r{name, 0, 1, 0, 0, {}};
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < o.match_iters; ++i) {
      const Clock::time_point c0 = Clock::now();
      STRATA_RETURN_IF_ERROR(call());
      r.latencies_us.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
      ++r.ops;
      if (std::chrono::duration<double>(Clock::now() - t0).count() > o.max_seconds) break;
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    PrintRow(o, r);
    return absl::OkStatus();
  };
  STRATA_RETURN_IF_ERROR(time_calls("health", [&]() { return client->Health().status(); }));
  STRATA_RETURN_IF_ERROR(time_calls("match", [&]() -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(MatchResult m, client->Match(ns, prompt));
    if (m.matched_pages != cached_pages) {
      return absl::InternalError(
          absl::StrCat("match found ", m.matched_pages, " pages, expected ", cached_pages));
    }
    return absl::OkStatus();
  }));
  for (const BlobKey& key : keys) (void)client->Delete(key);
  return absl::OkStatus();
}

bool ParseSize(absl::string_view s, uint64_t* out) {
  uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) mult = 1 << 10;
  if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) mult = 1 << 20;
  if (!s.empty() && (s.back() == 'G' || s.back() == 'g')) mult = 1 << 30;
  if (mult != 1) s.remove_suffix(1);
  uint64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v == 0) return false;
  *out = v * mult;
  return true;
}

int Usage(const char* argv0, int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: %s [--node HOST:PORT] [--ucx-tls TLS] [--same-host on|off]\n"
               "          [--modes put,get,match,memcpy] [--working-set 256M]\n"
               "          [--sizes 256K,1M,4M,16M] [--clients 1,2,4,8] [--min-seconds 1.5]\n"
               "          [--min-ops 16] [--max-seconds 10] [--bytes 64G] [--match-tokens 32768]\n"
               "          [--match-iters 2000] [--csv]\n",
               argv0);
  return code;
}

int Main(int argc, char** argv) {
  BenchOptions o;
  o.client = ClientOptions::FromEnvironment();
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = v != nullptr;
    if (arg == "--help" || arg == "-h") return Usage(argv[0], 0);
    if (arg == "--csv") {
      o.csv = true;
      continue;
    }
    if (arg == "--node" && ok) {
      o.client.node = v;
    } else if (arg == "--ucx-tls" && ok) {
      o.client.ucx_transports = v;
    } else if (arg == "--working-set" && ok) {
      ok = ParseSize(v, &o.working_set);
    } else if (arg == "--same-host" && ok) {
      ok = std::string_view(v) == "on" || std::string_view(v) == "off";
      o.client.same_host = std::string_view(v) == "on";
    } else if (arg == "--modes" && ok) {
      o.modes = absl::StrSplit(v, ',');
      for (const std::string& m : o.modes) {
        ok = ok && (m == "put" || m == "get" || m == "match" || m == "memcpy");
      }
    } else if (arg == "--sizes" && ok) {
      o.sizes.clear();
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        uint64_t size = 0;
        ok = ok && ParseSize(s, &size) && size % BlobLayoutForBench().BytesPerPage() == 0;
        o.sizes.push_back(size);
      }
    } else if (arg == "--clients" && ok) {
      o.clients.clear();
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        int c = 0;
        ok = ok && absl::SimpleAtoi(s, &c) && c >= 1 && c <= 64;
        o.clients.push_back(c);
      }
    } else if (arg == "--bytes" && ok) {
      ok = ParseSize(v, &o.bytes);
    } else if (arg == "--min-ops" && ok) {
      ok = absl::SimpleAtoi(v, &o.min_ops) && o.min_ops >= 1;
    } else if (arg == "--min-seconds" && ok) {
      ok = absl::SimpleAtod(v, &o.min_seconds) && o.min_seconds >= 0;
    } else if (arg == "--max-seconds" && ok) {
      ok = absl::SimpleAtod(v, &o.max_seconds) && o.max_seconds > 0;
    } else if (arg == "--match-tokens" && ok) {
      ok = absl::SimpleAtoi(v, &o.match_tokens) && o.match_tokens >= 2048;
    } else if (arg == "--match-iters" && ok) {
      ok = absl::SimpleAtoi(v, &o.match_iters) && o.match_iters >= 1;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "strata-bench: bad or incomplete argument '%s' (sizes are whole "
                   "256K pages)\n",
                   argv[i]);
      return Usage(argv[0], 2);
    }
    ++i;
  }
  o.client.wait_for_node = true;
  o.client.default_timeout = absl::Seconds(30);

  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::vector<std::string> args(argv, argv + argc);
  std::printf(
      "# command: %s\n# date: %s\n# node: %s, ucx transports: %s, same-host channel: %s\n",
      absl::StrJoin(args, " ").c_str(), date, o.client.node.c_str(),
      o.client.ucx_transports.empty() ? "(UCX_TLS / UCX default)" : o.client.ucx_transports.c_str(),
      o.client.same_host ? "on" : "off");
  if (o.csv) {
    std::printf("mode,size,clients,ops,seconds,gbps,ops_per_s,p50_us,p99_us\n");
  } else {
    std::printf("%-6s %10s %7s %7s %8s %9s %10s %10s %10s\n", "mode", "size", "clients", "ops",
                "seconds", "GB/s", "ops/s", "p50_us", "p99_us");
  }
  const uint64_t seed = static_cast<uint64_t>(now) * 100003 + static_cast<uint64_t>(getpid());
  absl::StatusOr<Namespace> ns =
      Namespace::Create("bench", absl::StrCat("strata-bench-", seed), BlobLayoutForBench());
  if (!ns.ok()) {
    std::fprintf(stderr, "strata-bench: %s\n", ns.status().ToString().c_str());
    return 1;
  }
  uint64_t run = 0;
  for (const std::string& mode : o.modes) {
    if (mode == "match") {
      if (absl::Status s = RunMatch(o, seed); !s.ok()) {
        std::fprintf(stderr, "strata-bench: match: %s\n", s.ToString().c_str());
        return 1;
      }
      continue;
    }
    for (uint64_t size : o.sizes) {
      for (int clients : o.clients) {
        absl::StatusOr<RunResult> r = RunTransfers(o, mode, *ns, size, clients, seed + ++run);
        if (!r.ok()) {
          std::fprintf(stderr, "strata-bench: %s size %llu clients %d: %s\n", mode.c_str(),
                       static_cast<unsigned long long>(size), clients,
                       r.status().ToString().c_str());
          return 1;
        }
        PrintRow(o, *r);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
