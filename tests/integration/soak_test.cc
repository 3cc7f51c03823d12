// Soak (issue 12, item 12): a real strata-node (small DRAM tier over an SSD tier, short
// lease, put and transfer deadlines) under a bounded mix, for STRATA_SOAK_SECONDS (default
// 16: the short form the test command runs; `ctest -C soak -L soak` runs the long form,
// 180 s): writers put chained blobs, readers match and read them back and compare every
// byte, a deleter deletes, a hostile peer throws bytes at the data-plane and gRPC ports,
// `strata` CLI processes are killed mid-put and stopped mid-get, and halfway the node is
// killed (SIGKILL) and restarted on its data directory. It checks that no read ever
// returned a wrong byte, that the node's resident memory stayed bounded, and that once the
// load ends no lease, pending put, held blob or data-plane request is left.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "nlohmann/json.hpp"
#include "strata/base/sanitizers.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/store/http/http_get.h"
#include "strata/testing/child_process.h"
#include "strata/testing/net.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::soak_test {

using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;

namespace {

constexpr bool kAsan = ::strata::kAddressSanitizer;

constexpr uint64_t kDramBytes = uint64_t{32} << 20;
constexpr uint64_t kSsdBytes = uint64_t{64} << 20;
// The node's resident memory may exceed its DRAM tier by this much (code, RocksDB, gRPC,
// UCX, per-connection buffers); a leak of the soak's traffic would pass it.
constexpr uint64_t kRssOverheadBytes = uint64_t{320} << 20;

absl::Duration SoakTime() {
  const char* value = std::getenv("STRATA_SOAK_SECONDS");
  int seconds = 16;
  if (value != nullptr) (void)absl::SimpleAtoi(value, &seconds);
  return absl::Seconds(std::max(seconds, 4));
}

uint64_t ResidentBytes(const std::string& pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    uint64_t kib = 0;
    std::string number = line.substr(6);
    number.erase(number.find("kB"));
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(number), &kib) ? kib << 10 : 0;
  }
  return 0;
}

// The KV bytes of pages [first, first + count) of sequence `seed`, laid out as
// radix::BlobLayout (layer-major): chunk (layer l, page p) is drawn from (seed, p, l), so a
// blob written in two parts reads back as one, and every read has one right answer.
std::vector<std::byte> SequenceBytes(uint64_t seed, const KvLayout& layout, uint32_t first,
                                     uint32_t count) {
  const uint64_t chunk = layout.BytesPerLayerPage();
  std::vector<std::byte> out(chunk * count * layout.num_layers);
  std::byte* at = out.data();
  for (uint32_t l = 0; l < layout.num_layers; ++l) {
    for (uint32_t p = first; p < first + count; ++p) {
      std::mt19937_64 rng((seed * 1000003 + p) * 131 + l);
      for (uint64_t i = 0; i < chunk; i += 8) {
        const uint64_t v = rng();
        std::memcpy(at + i, &v, std::min<uint64_t>(8, chunk - i));
      }
      at += chunk;
    }
  }
  return out;
}

// One sequence: tokens and the keys of its two blobs, pages [0, split) and [split, pages).
struct Sequence {
  uint64_t seed = 0;
  uint32_t pages = 0;
  uint32_t split = 0;
  std::vector<TokenId> tokens;
  BlobKey first, second;
};

class Soak {
 public:
  Soak(const std::string& grpc, const std::string& data_plane, const std::string& pid)
      : grpc_(grpc), data_plane_(data_plane), pid_(pid) {}

  // Runs every actor until `until`; the sequences written survive for the next phase.
  void Run(absl::Time until, std::vector<Sequence>* written, std::mutex* mu) {
    std::vector<std::thread> actors;
    for (int w = 0; w < 2; ++w) {
      actors.emplace_back([&, w] { Writer(until, 1000 * (w + 1) + phase_seed_, written, mu); });
    }
    for (int r = 0; r < 2; ++r) actors.emplace_back([&] { Reader(until, written, mu); });
    actors.emplace_back([&] { Deleter(until, written, mu); });
    actors.emplace_back([&] { Hostile(until); });
    actors.emplace_back([&] { Sampler(until); });
    for (std::thread& t : actors) t.join();
  }

  void set_phase_seed(uint64_t seed) { phase_seed_ = seed; }
  uint64_t wrong_bytes() const { return wrong_bytes_; }
  uint64_t reads_verified() const { return reads_verified_; }
  uint64_t writes() const { return writes_; }
  uint64_t peak_rss() const { return peak_rss_; }
  uint64_t hostile_streams() const { return hostile_streams_; }

 private:
  std::unique_ptr<Client> NewClient() {
    ClientOptions options = ClientOptionsFor(grpc_, "tcp");
    options.default_timeout = absl::Seconds(10);
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  void Writer(absl::Time until, uint64_t seed, std::vector<Sequence>* written, std::mutex* mu) {
    std::unique_ptr<Client> client = NewClient();
    if (client == nullptr) return;
    const Namespace ns = ClientTestNamespace("soak");
    std::mt19937_64 rng(seed);
    while (absl::Now() < until) {
      Sequence s;
      s.seed = rng();
      s.pages = 2 + static_cast<uint32_t>(rng() % 15);
      s.split = 1 + static_cast<uint32_t>(rng() % (s.pages - 1));
      s.tokens = RandomTokens(s.seed, s.pages * ns.layout().page_tokens);
      const uint32_t pt = ns.layout().page_tokens;
      const std::vector<std::byte> head = SequenceBytes(s.seed, ns.layout(), 0, s.split);
      const std::vector<std::byte> tail =
          SequenceBytes(s.seed, ns.layout(), s.split, s.pages - s.split);
      absl::StatusOr<WriteResult> first =
          client->Write(ns, std::nullopt, absl::MakeConstSpan(s.tokens).first(s.split * pt),
                        MemoryDescriptor::Host(static_cast<const void*>(head.data()), head.size()));
      if (!first.ok()) continue;  // a full tier or a restart: not the soak's concern
      s.first = first->key;
      absl::StatusOr<WriteResult> second = client->Write(
          ns, Parent{s.first, s.split}, absl::MakeConstSpan(s.tokens).subspan(s.split * pt),
          MemoryDescriptor::Host(static_cast<const void*>(tail.data()), tail.size()));
      if (second.ok()) s.second = second->key;
      ++writes_;
      std::lock_guard<std::mutex> lock(*mu);
      written->push_back(std::move(s));
    }
  }

  void Reader(absl::Time until, std::vector<Sequence>* written, std::mutex* mu) {
    std::unique_ptr<Client> client = NewClient();
    if (client == nullptr) return;
    const Namespace ns = ClientTestNamespace("soak");
    const uint64_t page_bytes = PagesBytes(ns.layout(), 1);
    std::mt19937_64 rng(reinterpret_cast<uintptr_t>(&rng));
    std::vector<std::byte> got;
    while (absl::Now() < until) {
      Sequence s;
      {
        std::lock_guard<std::mutex> lock(*mu);
        if (!written->empty()) s = (*written)[rng() % written->size()];
      }
      if (s.tokens.empty()) {
        absl::SleepFor(absl::Milliseconds(5));
        continue;
      }
      {}
      absl::StatusOr<MatchResult> match = client->Match(ns, s.tokens);
      if (!match.ok() || match->ReadablePages() == 0) continue;
      const uint32_t pages = match->ReadablePages();
      got.assign(pages * page_bytes, std::byte{0});
      const absl::Status read =
          client->Read(ns, match->segments, pages, MemoryDescriptor::Host(got.data(), got.size()));
      if (read.code() == absl::StatusCode::kDataLoss) ++wrong_bytes_;  // never acceptable
      if (!read.ok()) continue;  // evicted or deleted meanwhile: a miss, fine
      if (got != SequenceBytes(s.seed, ns.layout(), 0, pages)) {
        ++wrong_bytes_;
        ADD_FAILURE() << "wrong bytes from a read of sequence " << s.seed;
      }
      ++reads_verified_;
    }
  }

  void Deleter(absl::Time until, std::vector<Sequence>* written, std::mutex* mu) {
    std::unique_ptr<Client> client = NewClient();
    if (client == nullptr) return;
    std::mt19937_64 rng(7);
    while (absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(20));
      BlobKey key;
      {
        std::lock_guard<std::mutex> lock(*mu);
        if (written->empty()) continue;
        const Sequence& s = (*written)[rng() % written->size()];
        key = rng() % 2 == 0 ? s.first : s.second;
      }
      if (key == BlobKey{}) continue;
      (void)client->Delete(key);
    }
  }

  // The hostile streams (strata/testing/net.h: the bytes that once crashed UCX, absurd frame
  // lengths, frames before the handshake, garbage) at both ports, in turn.
  void Hostile(absl::Time until) {
    uint64_t seed = 1;
    while (absl::Now() < until) {
      for (const strata::testing::HostileStream& stream : strata::testing::HostileStreams(seed++)) {
        for (const std::string& address : {data_plane_, grpc_}) {
          if (strata::testing::SendRawStream(address, stream.bytes, absl::Milliseconds(5)).ok()) {
            ++hostile_streams_;
          }
        }
        if (absl::Now() >= until) return;
      }
    }
  }

  // Samples the node's RSS every 100 ms; with STRATA_SOAK_TRACE=N (seconds) it also prints
  // every N seconds what the node says it holds, to tell a leak from a structure filling up.
  void Sampler(absl::Time until) {
    int trace_seconds = 0;
    if (const char* value = std::getenv("STRATA_SOAK_TRACE"); value != nullptr) {
      (void)absl::SimpleAtoi(value, &trace_seconds);
    }
    const absl::Time start = absl::Now();
    absl::Time next_trace = start;
    std::unique_ptr<Client> client;
    while (absl::Now() < until) {
      const uint64_t rss = ResidentBytes(pid_);
      peak_rss_ = std::max<uint64_t>(peak_rss_, rss);
      if (trace_seconds > 0 && absl::Now() >= next_trace) {
        next_trace += absl::Seconds(trace_seconds);
        Trace(absl::Now() - start, rss, &client);
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  }

  void Trace(absl::Duration at, uint64_t rss, std::unique_ptr<Client>* client) {
    if (*client == nullptr) {
      absl::StatusOr<std::unique_ptr<Client>> connected =
          Client::Connect(ClientOptionsFor(grpc_, "tcp"));
      if (!connected.ok()) return;
      *client = *std::move(connected);
    }
    absl::StatusOr<NodeTiers> t = (*client)->Tiers();
    if (!t.ok()) return;
    std::string tiers;
    for (const report::TierStats& tier : t->tiers) {
      absl::StrAppend(&tiers, " ", std::string(report::TierName(tier.tier)), "=",
                      tier.used_bytes >> 20, "MiB/", tier.blobs);
    }
    std::cout << "soak trace t=" << absl::ToInt64Seconds(at) << "s rss=" << (rss >> 20)
              << "MiB blobs=" << t->engine.blobs << " token_only=" << t->engine.token_only_blobs
              << " namespaces=" << t->engine.namespaces << " index_nodes=" << t->index.nodes
              << " index=" << (t->index.index_bytes >> 20)
              << "MiB tokens=" << (t->index.token_bytes >> 20)
              << "MiB text=" << (t->text.used_bytes >> 20) << "MiB/" << t->text.blobs << tiers
              << " rebuild_queued=" << t->rebuild.queued << " leases=" << t->engine.leases
              << " pending=" << t->engine.pending_puts << " unlinked=" << t->engine.unlinked_blobs
              << " meta: disk=" << (t->meta.disk_bytes >> 20)
              << "MiB memtables=" << (t->meta.memtable_bytes >> 20)
              << "MiB table_readers=" << (t->meta.table_reader_bytes >> 20)
              << "MiB block_cache=" << (t->meta.block_cache_bytes >> 20) << "MiB" << std::endl;
  }

  const std::string grpc_, data_plane_, pid_;
  uint64_t phase_seed_ = 0;
  std::atomic<uint64_t> wrong_bytes_{0}, reads_verified_{0}, writes_{0};
  std::atomic<uint64_t> peak_rss_{0};
  std::atomic<uint64_t> hostile_streams_{0};
};

// `strata` CLI processes against the node, killed mid-put and stopped mid-get; counts them.
struct CliAbuse {
  int puts_killed = 0;
  int gets_stopped = 0;
};
CliAbuse AbuseWithClis(const std::string& grpc, const std::string& dir, absl::Time until) {
  CliAbuse done;
  const KvLayout layout = ClientTestLayout();
  const std::string layout_spec =
      absl::StrCat("layers=", layout.num_layers, ",kv_heads=", layout.num_kv_heads,
                   ",head_dim=", layout.head_dim, ",dtype=bf16,page_tokens=", layout.page_tokens);
  const uint32_t pages = 256;  // 4 MiB
  const std::vector<TokenId> tokens = RandomTokens(99, pages * layout.page_tokens);
  std::ofstream(dir + "/big.tokens") << absl::StrJoin(tokens, " ");
  {
    std::ofstream kv(dir + "/big.kv", std::ios::binary);
    const std::string page(PagesBytes(layout, 1), 'k');
    for (uint32_t p = 0; p < pages; ++p) kv << page;
  }
  // One whole put first, for the gets to read (it may be evicted later: a get then misses).
  const std::vector<std::string> put_args = {"--node=" + grpc,
                                             "--json",
                                             "put",
                                             "--tenant=soak",
                                             "--model=cli",
                                             "--layout=" + layout_spec,
                                             "--tokens=" + dir + "/big.tokens",
                                             "--input=" + dir + "/big.kv"};
  strata::testing::ProgramOptions program;
  program.env["UCX_TLS"] = "tcp";
  absl::StatusOr<strata::testing::ProgramResult> whole =
      strata::testing::RunProgram(STRATA_CLI_BINARY, put_args, program);
  std::string key;
  if (whole.ok() && whole->exit_code == 0) {
    const nlohmann::json out = nlohmann::json::parse(whole->out, nullptr, false);
    if (out.is_object() && out.contains("key") && out["key"].is_string()) key = out["key"];
  }
  strata::testing::ChildProcessOptions options;
  options.env["UCX_TLS"] = "tcp";
  std::mt19937_64 rng(5);
  for (int round = 0; absl::Now() < until; ++round) {
    if (round % 2 == 0 || key.empty()) {
      // A put killed (SIGKILL) mid-transfer, or just after.
      absl::StatusOr<std::unique_ptr<strata::testing::ChildProcess>> put =
          strata::testing::ChildProcess::Start(STRATA_CLI_BINARY, put_args, options);
      if (put.ok()) {
        absl::SleepFor(absl::Milliseconds(20 + rng() % 80));
        (*put)->Kill();
        ++done.puts_killed;
      }
    } else {
      // A get stopped (SIGSTOP) mid-transfer past the node's transfer deadline, then killed.
      absl::StatusOr<std::unique_ptr<strata::testing::ChildProcess>> get =
          strata::testing::ChildProcess::Start(
              STRATA_CLI_BINARY, {"--node=" + grpc, "get", key, "--output=" + dir + "/got.kv"},
              options);
      if (get.ok()) {
        absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
        (*get)->Signal(SIGSTOP);
        absl::SleepFor(absl::Milliseconds(2500));
        (*get)->Kill();
        ++done.gets_stopped;
      }
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return done;
}

TEST(SoakTest, ANodeUnderMixedHostileLoadAndARestartStaysCorrectAndBounded) {
  const absl::Duration total = SoakTime();
  std::cout << "soak: " << total << " (STRATA_SOAK_SECONDS), two phases around a SIGKILL restart"
            << std::endl;
  const strata::testing::ScopedTempDir dir("soak");
  const std::string data_dir = dir.path() + "/data";
  const std::vector<std::string> args = {"--dram_bytes=" + std::to_string(kDramBytes),
                                         "--ssd_bytes=" + std::to_string(kSsdBytes),
                                         "--ssd_preallocate=false",
                                         "--data_dir=" + data_dir,
                                         "--lease_ttl=2s",
                                         "--put_ttl=2s",
                                         "--reap_interval=100ms",
                                         "--dataplane_transfer_timeout=2s",
                                         "--dataplane_handshake_timeout=1s"};
  std::vector<Sequence> written;
  std::mutex mu;
  uint64_t wrong = 0, verified = 0, writes = 0, peak = 0;
  std::unique_ptr<NodeProcess> node;
  for (int phase = 0; phase < 2; ++phase) {
    NodeProcessOptions options;
    options.args = args;
    options.default_data_dir = false;
    options.env["UCX_TLS"] = "tcp";
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> started, NodeProcess::Start(options));
    std::unique_ptr<NodeProcess> killed = std::move(node);  // its temp dir goes now
    node = std::move(started);
    Soak soak(node->grpc_address(), node->data_plane_address(), node->ReadyField("pid"));
    soak.set_phase_seed(phase);
    const absl::Time until = absl::Now() + total / 2;
    CliAbuse abuse;
    std::thread clis([&] { abuse = AbuseWithClis(node->grpc_address(), dir.path(), until); });
    soak.Run(until, &written, &mu);
    clis.join();
    wrong += soak.wrong_bytes();
    verified += soak.reads_verified();
    writes += soak.writes();
    peak = std::max(peak, soak.peak_rss());
    std::cout << "soak phase " << phase << ": " << soak.writes() << " sequences written, "
              << soak.reads_verified() << " reads verified byte for byte, "
              << soak.hostile_streams() << " hostile streams, " << abuse.puts_killed
              << " CLI puts killed, " << abuse.gets_stopped << " CLI gets stopped, peak RSS "
              << (soak.peak_rss() >> 20) << " MiB" << std::endl;
    EXPECT_GT(soak.hostile_streams(), 0u);
    EXPECT_GT(abuse.puts_killed, 0);
    if (phase == 0) {
      node->Signal(SIGKILL);
      ASSERT_OK(node->WaitExit(absl::Seconds(10)).status());
    }
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(verified, 0u);
  EXPECT_GT(writes, 0u);

  // Once the load ends (and the deadlines behind it pass), nothing is left held.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Connect(ClientOptionsFor(node->grpc_address(), "tcp")));
  NodeTiers tiers;
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  do {
    absl::SleepFor(absl::Milliseconds(200));
    ASSERT_OK_AND_ASSIGN(tiers, client->Tiers());
  } while ((tiers.engine.leases + tiers.engine.pending_puts + tiers.engine.unlinked_blobs) > 0 &&
           absl::Now() < deadline);
  EXPECT_EQ(tiers.engine.leases, 0u);
  EXPECT_EQ(tiers.engine.pending_puts, 0u);
  EXPECT_EQ(tiers.engine.unlinked_blobs, 0u);  // no bytes held by a lease or a transfer
  ASSERT_OK_AND_ASSIGN(const store::http::HttpResponse metrics,
                       store::http::HttpGet(node->http_address(), "/metrics"));
  EXPECT_NE(metrics.body.find("\nstrata_dataplane_requests_in_flight 0\n"), std::string::npos)
      << "data-plane requests still in flight";
  if (kAsan) {
    std::cout << "soak: RSS bound not checked under ASan (its quarantine keeps freed memory); "
                 "peak was "
              << (peak >> 20) << " MiB" << std::endl;
  } else {
    EXPECT_LT(peak, kDramBytes + kRssOverheadBytes) << "peak RSS " << (peak >> 20) << " MiB";
  }
}

}  // namespace
}  // namespace strata::integration::soak_test
