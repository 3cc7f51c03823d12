// Active-message rendezvous bandwidth through Messenger, beside a single-thread memcpy of
// the same size (the floor a receiver's copy cannot beat), in one run.
//
// A client and a server messenger live in this process (two UCX contexts, workers and
// progress threads), connected over loopback. Each iteration sends one message of `size`
// bytes with DataProtocol::kRendezvous, keeping kWindow messages in flight; the server's
// handler accepts each into the destination buffer of its window slot.
//
// Configurations (first argument): 0 = tcp, 1 = tcp,shm,cma (same-host data endpoint on
// sysv shared memory + CMA), 2 and 3 = the same with a 50 us busy-poll before the progress
// threads sleep. Counters: GBps (payload bytes / second), memcpy_GBps (one thread copying
// the same size, measured just before), vs_memcpy (their ratio).
//
// Compare with UCX's own tool (see store/transport/README.md for the exact commands):
//   UCX_TLS=tcp ucx_perftest -p 13390 &
//   UCX_TLS=tcp ucx_perftest 127.0.0.1 -p 13390 -t ucp_am_bw -s 1048576 -n 2000 -w 100 -O 8
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

#include "strata/store/transport/messenger.h"

namespace strata::store::transport {
namespace {

constexpr int kWindow = 8;  // messages in flight per iteration
constexpr uint16_t kPut = 1;

struct Config {
  const char* name;
  const char* transports;
  absl::Duration busy_poll;
};
constexpr Config kConfigs[] = {
    {"tcp", "tcp", absl::ZeroDuration()},
    {"shm", "tcp,shm,cma", absl::ZeroDuration()},
    {"tcp+poll50us", "tcp", absl::Microseconds(50)},
    {"shm+poll50us", "tcp,shm,cma", absl::Microseconds(50)},
};

// Counts completions; WaitAtLeast(n) blocks until n arrived in total.
class Counter {
 public:
  void Add(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    ++count_;
    if (!status.ok()) error_ = status;
  }
  absl::Status WaitAtLeast(int64_t n) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return count_ >= n; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(60))) {
      return absl::DeadlineExceededError("transfers did not complete within 60 s");
    }
    return error_;
  }
  void Reset() {
    absl::MutexLock lock(&mu_);
    count_ = 0;
    error_ = absl::OkStatus();
  }

 private:
  absl::Mutex mu_;
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
};

// A connected server/client pair; the server accepts message `i` (header: slot index)
// into destinations[i].
struct Pair {
  // Before the messengers: their callbacks use these until the messengers are gone.
  Counter sent;
  Counter received;
  absl::Mutex mu;
  std::vector<absl::Span<uint8_t>> destinations ABSL_GUARDED_BY(mu);
  std::unique_ptr<Messenger> server;
  std::unique_ptr<Messenger> client;
  PeerId peer = PeerId::kNone;
};

Pair& GetPair(int config) {
  static std::unique_ptr<Pair> pairs[std::size(kConfigs)];
  std::unique_ptr<Pair>& pair = pairs[config];
  if (pair != nullptr) return *pair;
  pair = std::make_unique<Pair>();
  const Config& c = kConfigs[config];
  pair->server = *Messenger::Create(
      {.name = "bench-server", .transports = c.transports, .busy_poll = c.busy_poll});
  pair->client = *Messenger::Create(
      {.name = "bench-client", .transports = c.transports, .busy_poll = c.busy_poll});
  Pair* p = pair.get();
  const absl::Status registered = pair->server->RegisterHandler(
      kPut, [p](PeerId, absl::Span<const uint8_t> header, IncomingData data) {
        uint32_t slot = 0;
        std::memcpy(&slot, header.data(), sizeof(slot));
        absl::Span<uint8_t> dest;
        {
          absl::MutexLock lock(&p->mu);
          dest = p->destinations[slot];
        }
        data.Accept(dest, [p](absl::Status s) { p->received.Add(s); });
      });
  CHECK(registered.ok()) << registered;
  const uint16_t port = *pair->server->Listen("127.0.0.1:0");
  pair->peer = *pair->client->Connect(absl::StrCat("127.0.0.1:", port));
  return *pair;
}

// One thread copying `size` bytes, GB/s (best of a few ~20 ms rounds).
double MemcpyGBps(size_t size) {
  std::vector<uint8_t> a(size, 1), b(size, 2);
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    size_t bytes = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) {
      std::memcpy(b.data(), a.data(), size);
      benchmark::DoNotOptimize(b.data());
      bytes += size;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, bytes / seconds / 1e9);
  }
  return best;
}

void BM_AmRendezvous(benchmark::State& state) {
  const int config = static_cast<int>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  state.SetLabel(kConfigs[config].name);
  Pair& pair = GetPair(config);
  std::vector<std::vector<uint8_t>> sources(kWindow, std::vector<uint8_t>(size, 0x5a));
  std::vector<std::vector<uint8_t>> dests(kWindow, std::vector<uint8_t>(size, 0));
  {
    absl::MutexLock lock(&pair.mu);
    pair.destinations.clear();
    for (auto& d : dests) pair.destinations.push_back(absl::MakeSpan(d));
  }
  const double memcpy_gbps = MemcpyGBps(size);
  pair.sent.Reset();
  pair.received.Reset();
  // A sliding window: message i reuses slot i % kWindow once message i - kWindow is done
  // at both ends, so kWindow transfers stay in flight (as ucx_perftest -O does).
  int64_t issued = 0;
  absl::Status status;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (issued >= kWindow) {
      status.Update(pair.sent.WaitAtLeast(issued - kWindow + 1));
      status.Update(pair.received.WaitAtLeast(issued - kWindow + 1));
      if (!status.ok()) break;
    }
    const uint32_t slot = static_cast<uint32_t>(issued % kWindow);
    uint8_t header[sizeof(slot)];
    std::memcpy(header, &slot, sizeof(slot));
    pair.client->Send(pair.peer, kPut, header, sources[slot],
                      {.protocol = DataProtocol::kRendezvous},
                      [&pair](absl::Status s) { pair.sent.Add(s); });
    ++issued;
  }
  status.Update(pair.sent.WaitAtLeast(issued));
  status.Update(pair.received.WaitAtLeast(issued));
  if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double bytes = static_cast<double>(issued) * size;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const double gbps = bytes / seconds / 1e9;
  state.counters["GBps"] = gbps;
  state.counters["memcpy_GBps"] = memcpy_gbps;
  state.counters["vs_memcpy"] = gbps / memcpy_gbps;
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int config = 0; config < static_cast<int>(std::size(kConfigs)); ++config) {
    for (int64_t size : {256 << 10, 1 << 20, 4 << 20, 16 << 20}) b->Args({config, size});
  }
}

BENCHMARK(BM_AmRendezvous)->Apply(Sizes)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata::store::transport
