// BM_PolicyEvents/<policy>: the cost of one eviction-policy event (OnAccess, OnInsert,
// OnErase, and the CollectVictims walk that precedes each eviction) as the node engine
// drives it: a tier of kPolicyCapacity blobs under a prefix-cache workload of chat sessions.
//
// A request picks a session (a few are hot), reads the cached prefix of its chain (OnAccess,
// root first), inserts the rest of the chain and one or two new blobs (OnInsert, root
// first), evicting leaf-first while the tier is over capacity. One in ten requests forks
// its session from an earlier turn; a chain that grows past kMaxChain starts over under one
// of kPrompts shared system prompts. Policies: 0 = lru, 1 = branch-lru, 2 = gdsf.
// Counters: `s/event` (time per event, 80n = 80 ns) and `events/request`.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "benchmark/benchmark.h"

#include "strata/tiering/eviction_policy.h"

namespace strata::tiering {
namespace {

constexpr uint64_t kPolicyCapacity = 20000;  // blobs of the tier
constexpr uint64_t kBlobBytes = 1 << 20;
constexpr int kSessions = 2000;
constexpr int kPrompts = 16;
constexpr size_t kMaxChain = 48;

const char* const kPolicies[] = {"lru", "branch-lru", "gdsf"};

class PolicyWorkload {
 public:
  explicit PolicyWorkload(EvictionPolicy* policy) : policy_(policy), rng_(7) {
    for (int p = 0; p < kPrompts; ++p) prompts_.push_back(NewId());
    sessions_.resize(kSessions);
    for (int s = 0; s < kSessions; ++s) StartOver(s);
  }

  // Serves one request; returns the number of policy events it caused.
  uint64_t Request() {
    events_ = 0;
    // 80% of the requests go to 10% of the sessions.
    const int hot = kSessions / 10;
    const int s = rng_() % 10 < 8 ? static_cast<int>(rng_() % hot)
                                  : hot + static_cast<int>(rng_() % (kSessions - hot));
    std::vector<BlobId>& chain = sessions_[s];
    if (rng_() % 10 == 0 && chain.size() > 2) {
      chain.resize(1 + rng_() % (chain.size() - 1));  // fork from an earlier turn
    }
    if (chain.size() >= kMaxChain) StartOver(s);
    const int grow = 1 + static_cast<int>(rng_() % 2);
    for (int i = 0; i < grow; ++i) chain.push_back(NewId());
    size_t hit = 0;
    while (hit < chain.size() && cached_.contains(chain[hit])) {
      policy_->OnAccess(chain[hit]);
      ++events_;
      ++hit;
    }
    for (size_t i = hit; i < chain.size(); ++i) {
      while (policy_->size() >= kPolicyCapacity && EvictOne(chain)) {
      }
      Insert(chain[i], i == 0 ? 0 : chain[i - 1], i, static_cast<uint64_t>(s) + 1);
    }
    return events_;
  }

 private:
  struct Cached {
    BlobId parent = 0;
    uint32_t children = 0;
  };

  BlobId NewId() { return next_id_++; }
  void StartOver(int s) { sessions_[s] = {prompts_[rng_() % kPrompts]}; }

  void Insert(BlobId id, BlobId parent, size_t depth, uint64_t session) {
    policy_->OnInsert(id, BlobTraits{.bytes = kBlobBytes,
                                     .first_page = static_cast<uint32_t>(depth * 32),
                                     .pages = 32,
                                     .page_tokens = 16,
                                     .parent = parent,
                                     .session_hint = session});
    ++events_;
    cached_[id] = Cached{.parent = parent};
    if (const auto it = cached_.find(parent); parent != 0 && it != cached_.end()) {
      ++it->second.children;
    }
  }

  // Evicts the first leaf the policy offers that the request does not use.
  bool EvictOne(const std::vector<BlobId>& request) {
    victims_.clear();
    policy_->CollectVictims(
        kBlobBytes,
        [&](BlobId id) {
          const auto it = cached_.find(id);
          if (it == cached_.end() || it->second.children > 0) return false;
          for (const BlobId used : request) {
            if (used == id) return false;
          }
          return true;
        },
        &victims_);
    ++events_;
    if (victims_.empty()) return false;
    const BlobId id = victims_.front();
    const auto it = cached_.find(id);
    if (const auto parent = cached_.find(it->second.parent); parent != cached_.end()) {
      --parent->second.children;
    }
    cached_.erase(it);
    policy_->OnErase(id);
    ++events_;
    return true;
  }

  EvictionPolicy* const policy_;
  std::mt19937_64 rng_;
  BlobId next_id_ = 1;
  std::vector<BlobId> prompts_;
  std::vector<std::vector<BlobId>> sessions_;
  absl::flat_hash_map<BlobId, Cached> cached_;
  std::vector<BlobId> victims_;
  uint64_t events_ = 0;
};

void BM_PolicyEvents(benchmark::State& state) {
  const char* name = kPolicies[state.range(0)];
  std::unique_ptr<EvictionPolicy> policy = MakeEvictionPolicy(name).value();
  PolicyWorkload workload(policy.get());
  // Warm up: fill the tier and reach the steady state of evictions.
  for (int i = 0; i < 40000; ++i) workload.Request();
  uint64_t events = 0, requests = 0;
  for (auto _ : state) {
    events += workload.Request();
    ++requests;
  }
  // Seconds per event (printed with an SI prefix: 80n = 80 ns).
  state.counters["s/event"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["events/request"] = static_cast<double>(events) / static_cast<double>(requests);
  state.SetLabel(name);
}
BENCHMARK(BM_PolicyEvents)->Arg(0)->Arg(1)->Arg(2)->MinTime(1.0);

}  // namespace
}  // namespace strata::tiering
