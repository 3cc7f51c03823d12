// Data-plane throughput: FETCH and PUT_DATA through DataPlaneServer (engine, leases,
// HeldSpans, wire headers), beside the same message pattern on a bare pair of Messengers
// (no engine: the transport's limit for this pattern) and a one-thread memcpy, in one run.
//
// A NodeEngine, a DataPlaneServer and a client (test_client.h) live in this process,
// connected over loopback. Configurations (first argument): 0 = tcp, 1 = tcp,shm,cma.
//
//   BM_Fetch/config/range_bytes  one FETCH of kRanges ranges of range_bytes each (a leased
//                                32 MiB blob), waited for until FETCH_DONE; the raw pattern:
//                                a header-only request, kRanges rendezvous replies accepted
//                                into the client's buffers, then a done message.
//   BM_Put/config/bytes          one PUT_DATA of `bytes` into a pending put, waited for until
//                                PUT_DONE; the raw pattern: one rendezvous message accepted
//                                into a buffer, then a reply.
//
// Counters: GBps (payload bytes / second through the data plane), raw_GBps (the raw
// pattern, measured just before, ~0.3 s), vs_raw (GBps / raw_GBps), memcpy_GBps.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"

#include "store/dataplane/test_blobs.h"
#include "store/dataplane/test_client.h"
#include "strata/store/dataplane/data_plane_server.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::dataplane {
namespace {

using transport::DataProtocol;
using transport::IncomingData;
using transport::Messenger;
using transport::PeerId;

constexpr int kRanges = 8;
constexpr uint32_t kBlobPages = 64;  // 8 layers x 64 pages x 64 KiB chunks = 32 MiB
constexpr absl::Duration kRawTime = absl::Milliseconds(300);

struct Config {
  const char* name;
  const char* transports;
};
constexpr Config kConfigs[] = {{"tcp", "tcp"}, {"shm", "tcp,shm,cma"}};

void Must(const absl::Status& status) { CHECK(status.ok()) << status; }

// ---------------------------------------------------------------------------- the node

struct Node {
  core::FakeClock clock;  // never moves: the lease never expires
  std::unique_ptr<core::NodeEngine> engine;
  std::unique_ptr<DataPlaneServer> server;
  std::unique_ptr<testing::TestClient> client;
  radix::Namespace ns = testing::TestNamespace("bench", 8, 512);
  radix::BlobKey key;
  uint64_t lease = 0;
  uint64_t put_id = 0;  // a pending put of a second blob, written over and over
  uint64_t put_bytes = 0;
};

Node& GetNode(int config) {
  static std::unique_ptr<Node> nodes[std::size(kConfigs)];
  std::unique_ptr<Node>& node = nodes[config];
  if (node != nullptr) return *node;
  node = std::make_unique<Node>();
  node->engine =
      *core::NodeEngine::Create(testing::EngineOptions(&node->clock, uint64_t{128} << 20));
  node->server = *DataPlaneServer::Start(
      node->engine.get(),
      {.listen_address = "127.0.0.1:0", .transports = kConfigs[config].transports});
  node->client = *testing::TestClient::Connect(node->server->address(),
                                               {.transports = kConfigs[config].transports});
  const testing::BlobContent blob = testing::MakeBlob(node->ns, kBlobPages, 1);
  node->key = *testing::PutOverDataPlane(*node->engine, *node->client, node->ns, blob);
  node->lease = testing::ReadPages(*node->engine, node->ns, node->key, 0, kBlobPages)->lease_id;
  const testing::BlobContent second = testing::MakeBlob(node->ns, kBlobPages, 2);
  const core::BeginPutReply begin =
      *node->engine->BeginPut(node->ns, testing::PutRequestFor(second));
  node->put_id = begin.put_id;
  node->put_bytes = second.bytes.size();
  return *node;
}

// ---------------------------------------------------------------------------- the raw pair

constexpr uint16_t kRawFetch = 1, kRawData = 2, kRawDone = 3, kRawPut = 4, kRawPutDone = 5;

class Waiter {
 public:
  void Add(int n = 1) {
    absl::MutexLock lock(&mu_);
    count_ += n;
  }
  void WaitFor(int target) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return count_ >= target; };
    CHECK(mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(60)));
    count_ -= target;
  }

 private:
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

struct RawPair {
  std::unique_ptr<Messenger> server;
  std::unique_ptr<Messenger> client;
  PeerId peer = PeerId::kNone;
  std::vector<uint8_t> source = std::vector<uint8_t>(size_t{32} << 20, 0x5a);
  std::vector<uint8_t> sink = std::vector<uint8_t>(size_t{32} << 20, 0);
  absl::Mutex mu;
  size_t range_bytes ABSL_GUARDED_BY(mu) = 0;
  std::vector<absl::Span<uint8_t>> dests ABSL_GUARDED_BY(mu);
  Waiter landed;  // client: payloads accepted + done messages
};

RawPair& GetRaw(int config) {
  static std::unique_ptr<RawPair> pairs[std::size(kConfigs)];
  std::unique_ptr<RawPair>& pair = pairs[config];
  if (pair != nullptr) return *pair;
  pair = std::make_unique<RawPair>();
  RawPair* p = pair.get();
  p->server = *Messenger::Create({.name = "raw-server", .transports = kConfigs[config].transports});
  p->client = *Messenger::Create({.name = "raw-client", .transports = kConfigs[config].transports});
  // Server: a fetch request answers kRanges payloads, then a done once all completed.
  Must(p->server->RegisterHandler(
      kRawFetch, [p](PeerId from, absl::Span<const uint8_t>, IncomingData) {
        size_t size = 0;
        {
          absl::MutexLock lock(&p->mu);
          size = p->range_bytes;
        }
        auto left = std::make_shared<int>(kRanges);
        for (uint32_t i = 0; i < kRanges; ++i) {
          uint8_t header[4];
          std::memcpy(header, &i, 4);
          p->server->Send(from, kRawData, header,
                          absl::MakeConstSpan(p->source).subspan(i * size, size),
                          {.protocol = DataProtocol::kRendezvous}, [p, from, left](absl::Status s) {
                            Must(s);
                            if (--*left == 0)
                              p->server->Send(from, kRawDone, {}, {}, {}, [](absl::Status) {});
                          });
        }
      }));
  Must(p->server->RegisterHandler(
      kRawPut, [p](PeerId from, absl::Span<const uint8_t>, IncomingData data) {
        const size_t size = data.size();
        data.Accept(absl::MakeSpan(p->sink).subspan(0, size), [p, from](absl::Status s) {
          Must(s);
          p->server->Send(from, kRawPutDone, {}, {}, {}, [](absl::Status) {});
        });
      }));
  // Client: payloads land in dests[index].
  Must(p->client->RegisterHandler(kRawData,
                                  [p](PeerId, absl::Span<const uint8_t> header, IncomingData data) {
                                    uint32_t i = 0;
                                    std::memcpy(&i, header.data(), 4);
                                    absl::Span<uint8_t> dest;
                                    {
                                      absl::MutexLock lock(&p->mu);
                                      dest = p->dests[i];
                                    }
                                    data.Accept(dest, [p](absl::Status s) {
                                      Must(s);
                                      p->landed.Add();
                                    });
                                  }));
  for (uint16_t id : {kRawDone, kRawPutDone}) {
    Must(p->client->RegisterHandler(
        id, [p](PeerId, absl::Span<const uint8_t>, IncomingData) { p->landed.Add(); }));
  }
  const uint16_t port = *p->server->Listen("127.0.0.1:0");
  p->peer = *p->client->Connect(absl::StrCat("127.0.0.1:", port));
  return *p;
}

// GB/s of `one()` moving `bytes` per call, for about kRawTime.
template <typename Fn>
double Rate(uint64_t bytes, Fn one) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t moved = 0;
  double seconds = 0;
  do {
    one();
    moved += bytes;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (seconds < absl::ToDoubleSeconds(kRawTime));
  return moved / seconds / 1e9;
}

double MemcpyGBps(size_t size) {
  std::vector<uint8_t> a(size, 1), b(size, 2);
  return Rate(size, [&] {
    std::memcpy(b.data(), a.data(), size);
    benchmark::DoNotOptimize(b.data());
  });
}

void Report(benchmark::State& state, double bytes_per_iteration, double seconds, double raw_gbps,
            double memcpy_gbps) {
  const double bytes = static_cast<double>(state.iterations()) * bytes_per_iteration;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const double gbps = bytes / seconds / 1e9;
  state.counters["GBps"] = gbps;
  state.counters["raw_GBps"] = raw_gbps;
  state.counters["vs_raw"] = gbps / raw_gbps;
  state.counters["memcpy_GBps"] = memcpy_gbps;
}

// ---------------------------------------------------------------------------- benchmarks

void BM_Fetch(benchmark::State& state) {
  const int config = static_cast<int>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  state.SetLabel(kConfigs[config].name);
  std::vector<std::vector<uint8_t>> buffers(kRanges, std::vector<uint8_t>(size, 0));
  std::vector<absl::Span<uint8_t>> dests;
  for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));

  RawPair& raw = GetRaw(config);
  {
    absl::MutexLock lock(&raw.mu);
    raw.range_bytes = size;
    raw.dests = dests;
  }
  const double raw_gbps = Rate(kRanges * size, [&] {
    raw.client->Send(raw.peer, kRawFetch, {}, {}, {}, [](absl::Status) {});
    raw.landed.WaitFor(kRanges + 1);
  });
  const double memcpy_gbps = MemcpyGBps(size);

  Node& node = GetNode(config);
  std::vector<transport::wire::ByteRange> ranges;
  for (uint64_t i = 0; i < kRanges; ++i) ranges.push_back({.offset = i * size, .length = size});
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const testing::FetchOutcome got = node.client->Fetch(node.lease, node.key, ranges, dests);
    if (!got.status.ok()) {
      state.SkipWithError(got.status.ToString().c_str());
      break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Report(state, kRanges * size, seconds, raw_gbps, memcpy_gbps);
}

void BM_Put(benchmark::State& state) {
  const int config = static_cast<int>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  state.SetLabel(kConfigs[config].name);
  const std::vector<uint8_t> source(size, 0x3c);

  RawPair& raw = GetRaw(config);
  const double raw_gbps = Rate(size, [&] {
    raw.client->Send(raw.peer, kRawPut, {}, source, {.protocol = DataProtocol::kRendezvous},
                     [](absl::Status) {});
    raw.landed.WaitFor(1);
  });
  const double memcpy_gbps = MemcpyGBps(size);

  Node& node = GetNode(config);
  CHECK_LE(size, node.put_bytes);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const absl::Status put = node.client->Put(node.put_id, 0, source);
    if (!put.ok()) {
      state.SkipWithError(put.ToString().c_str());
      break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Report(state, size, seconds, raw_gbps, memcpy_gbps);
}

void FetchArgs(benchmark::internal::Benchmark* b) {
  for (int config = 0; config < static_cast<int>(std::size(kConfigs)); ++config) {
    for (int64_t size : {64 << 10, 1 << 20, 4 << 20}) b->Args({config, size});
  }
}
void PutArgs(benchmark::internal::Benchmark* b) {
  for (int config = 0; config < static_cast<int>(std::size(kConfigs)); ++config) {
    for (int64_t size : {1 << 20, 4 << 20, 16 << 20}) b->Args({config, size});
  }
}

BENCHMARK(BM_Fetch)->Apply(FetchArgs)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Put)->Apply(PutArgs)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata::store::dataplane
