#include "strata/tiering/sim/prefix_cache_replay.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/lru_policy.h"
#include "strata/tiering/sim/belady_policy.h"

namespace strata::tiering::sim {
namespace {

ReplayTrace MakeTrace(std::vector<std::vector<BlobId>> requests, uint64_t session = 0) {
  ReplayTrace trace;
  trace.name = "test";
  trace.block_tokens = 4;
  for (std::vector<BlobId>& blocks : requests) {
    ReplayRequest request;
    request.last_block_tokens = blocks.empty() ? 0 : 4;
    request.blocks = std::move(blocks);
    request.session = session;
    trace.requests.push_back(std::move(request));
  }
  return trace;
}

// A random prefix trace: a random forest of `nodes` blocks (each new block's parent is an
// older block or none), and requests that read the path from the root to a random block,
// recent blocks more often.
ReplayTrace RandomTrace(uint64_t seed, int nodes, int requests) {
  std::mt19937_64 rng(seed);
  std::vector<BlobId> parent(nodes + 1, 0);
  for (int i = 2; i <= nodes; ++i) {
    parent[i] = rng() % 4 == 0 ? 0 : 1 + rng() % (i - 1);
  }
  std::vector<std::vector<BlobId>> paths;
  for (int r = 0; r < requests; ++r) {
    const int frontier = std::min(nodes, 4 + r * nodes / requests);
    const BlobId leaf = 1 + rng() % frontier;
    std::vector<BlobId> path;
    for (BlobId b = leaf; b != 0; b = parent[b]) path.insert(path.begin(), b);
    paths.push_back(std::move(path));
  }
  ReplayTrace trace = MakeTrace(std::move(paths));
  for (ReplayRequest& request : trace.requests) request.session = 1 + rng() % 3;
  return trace;
}

uint64_t Hits(const ReplayTrace& trace, uint64_t capacity, EvictionPolicy* policy,
              const NextUses* next_uses = nullptr) {
  ReplayOptions options;
  options.capacity_bytes = capacity;
  absl::StatusOr<ReplayResult> result = ReplayPrefixCache(trace, options, policy, next_uses);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->block_hits : 0;
}

// An independent LRU: every touch stamps a block; under pressure, evict the unpinned block
// with no cached child and the oldest stamp, by scanning everything.
uint64_t BruteForceLruHits(const ReplayTrace& trace, uint64_t capacity) {
  struct Block {
    BlobId parent;
    uint64_t stamp;
  };
  absl::flat_hash_map<BlobId, Block> cache;
  uint64_t clock = 0;
  uint64_t hits = 0;
  for (const ReplayRequest& request : trace.requests) {
    const std::vector<BlobId>& blocks = request.blocks;
    size_t k = 0;
    while (k < blocks.size() && cache.contains(blocks[k])) cache[blocks[k++]].stamp = ++clock;
    hits += k;
    for (size_t i = k; i < blocks.size(); ++i) {
      while (cache.size() >= capacity) {
        std::optional<BlobId> victim;
        for (const auto& [id, block] : cache) {
          bool has_child = false;
          for (const auto& entry : cache) has_child |= entry.second.parent == id;
          const bool pinned = std::find(blocks.begin(), blocks.end(), id) != blocks.end();
          if (has_child || pinned) continue;
          if (!victim || block.stamp < cache.at(*victim).stamp) victim = id;
        }
        if (!victim) break;
        cache.erase(*victim);
      }
      if (cache.size() >= capacity) break;
      cache[blocks[i]] = Block{i == 0 ? 0 : blocks[i - 1], ++clock};
    }
  }
  return hits;
}

TEST(PrefixCacheReplayTest, CountsTheLongestCachedPrefixOnly) {
  // Capacity 3. r0 inserts 1,2,3. r1 = [1,2,4]: hits 1,2; inserting 4 evicts the leaf 3.
  // r2 = [1,2,3]: hits 1,2 (3 is gone); inserting 3 evicts 4. r3 = [5]: evicts 3 (the only
  // unpinned leaf), then hit count 0.
  const ReplayTrace trace = MakeTrace({{1, 2, 3}, {1, 2, 4}, {1, 2, 3}, {5}});
  LruPolicy lru;
  ReplayOptions options;
  options.capacity_bytes = 3;
  ASSERT_OK_AND_ASSIGN(ReplayResult result, ReplayPrefixCache(trace, options, &lru));
  EXPECT_EQ(result.requests, 4u);
  EXPECT_EQ(result.block_reads, 10u);
  EXPECT_EQ(result.block_hits, 4u);
  EXPECT_EQ(result.evictions, 3u);
  EXPECT_EQ(result.token_reads, 40u);
  EXPECT_EQ(result.token_hits, 16u);
  EXPECT_EQ(lru.size(), 3u);
}

TEST(PrefixCacheReplayTest, TokenHitsCountThePartialLastBlockOnlyOnAFullHit) {
  ReplayTrace trace = MakeTrace({{1, 2}, {1, 2}, {1, 2, 3}});
  for (ReplayRequest& request : trace.requests) request.last_block_tokens = 1;
  LruPolicy lru;
  ReplayOptions options;
  options.capacity_bytes = 10;
  ASSERT_OK_AND_ASSIGN(ReplayResult result, ReplayPrefixCache(trace, options, &lru));
  EXPECT_EQ(result.token_reads, 5u + 5u + 9u);
  EXPECT_EQ(result.token_hits, 5u + 8u);  // r1 hits all of 1,2; r2 hits 1 and 2 (full)
}

TEST(PrefixCacheReplayTest, LruMatchesABruteForceReference) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const ReplayTrace trace = RandomTrace(seed, 60, 300);
    for (uint64_t capacity : {1, 3, 8, 20, 61}) {
      LruPolicy lru;
      EXPECT_EQ(Hits(trace, capacity, &lru), BruteForceLruHits(trace, capacity))
          << "seed " << seed << " capacity " << capacity;
    }
  }
}

TEST(PrefixCacheReplayTest, BeladyIsAtLeastEveryPolicy) {
  for (uint64_t seed = 11; seed <= 30; ++seed) {
    const ReplayTrace trace = RandomTrace(seed, 80, 400);
    const NextUses next_uses = ComputeNextUses(trace);
    for (uint64_t capacity : {2, 5, 12, 30, 60}) {
      BeladyPolicy belady;
      const uint64_t best = Hits(trace, capacity, &belady, &next_uses);
      for (const char* name : {"lru", "branch-lru", "gdsf"}) {
        std::unique_ptr<EvictionPolicy> policy = MakeEvictionPolicy(name).value();
        EXPECT_LE(Hits(trace, capacity, policy.get()), best)
            << name << " seed " << seed << " capacity " << capacity;
      }
    }
  }
}

TEST(PrefixCacheReplayTest, ARequestLongerThanTheTierIsCachedInPart) {
  const ReplayTrace trace = MakeTrace({{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}});
  LruPolicy lru;
  ReplayOptions options;
  options.capacity_bytes = 3;
  ASSERT_OK_AND_ASSIGN(ReplayResult result, ReplayPrefixCache(trace, options, &lru));
  EXPECT_EQ(result.not_cached_blocks, 4u);  // 4, 5 of each request
  EXPECT_EQ(result.block_hits, 3u);
  EXPECT_EQ(result.evictions, 0u);
}

// Records the traits the replay hands to the policy, and can misbehave.
class RecordingPolicy final : public EvictionPolicy {
 public:
  using EvictionPolicy::OnInsert;
  std::string_view name() const override { return "recording"; }
  void OnInsert(BlobId id, const BlobTraits& traits) override {
    inserted[id] = traits;
    lru.OnInsert(id, traits);
  }
  void OnAccess(BlobId id) override { lru.OnAccess(id); }
  void OnErase(BlobId id) override { lru.OnErase(id); }
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const override {
    if (offer_anything) {
      victims->push_back(1);  // the root: it has a cached child
      return;
    }
    lru.CollectVictims(bytes_needed, evictable, victims);
  }
  std::optional<double> Score(BlobId id) const override { return lru.Score(id); }
  uint64_t size() const override { return lru.size(); }
  uint64_t tracked_bytes() const override { return lru.tracked_bytes(); }

  absl::flat_hash_map<BlobId, BlobTraits> inserted;
  bool offer_anything = false;
  LruPolicy lru;
};

TEST(PrefixCacheReplayTest, PoliciesGetTheBlockTraitsAndTheChosenSessionHint) {
  const ReplayTrace trace = MakeTrace({{7, 8, 9}}, /*session=*/42);
  for (const auto& [hints, expected] : {std::pair{SessionHints::kNone, BlobId{0}},
                                        std::pair{SessionHints::kSession, (BlobId{1} << 63) | 42},
                                        std::pair{SessionHints::kRoot, BlobId{7}}}) {
    RecordingPolicy policy;
    ReplayOptions options;
    options.capacity_bytes = 3000;
    options.block_bytes = 1000;
    options.session_hints = hints;
    ASSERT_OK(ReplayPrefixCache(trace, options, &policy).status());
    ASSERT_EQ(policy.inserted.size(), 3u);
    const BlobTraits& third = policy.inserted[9];
    EXPECT_EQ(third.bytes, 1000u);
    EXPECT_EQ(third.first_page, 2u);
    EXPECT_EQ(third.pages, 1u);
    EXPECT_EQ(third.page_tokens, 4u);
    EXPECT_EQ(third.parent, 8u);
    EXPECT_EQ(third.session_hint, expected);
    EXPECT_EQ(policy.inserted[7].parent, 0u);
  }
}

TEST(PrefixCacheReplayTest, ReportsBadInputAndPolicyBugs) {
  const ReplayTrace trace = MakeTrace({{1, 2}, {3}});
  RecordingPolicy bad;
  bad.offer_anything = true;
  ReplayOptions options;
  options.capacity_bytes = 2;
  EXPECT_CODE(ReplayPrefixCache(trace, options, &bad), absl::StatusCode::kInternal);

  LruPolicy lru;
  options.block_bytes = 0;
  EXPECT_CODE(ReplayPrefixCache(trace, options, &lru), absl::StatusCode::kInvalidArgument);

  BeladyPolicy belady;
  options.block_bytes = 1;
  EXPECT_CODE(ReplayPrefixCache(trace, options, &belady), absl::StatusCode::kFailedPrecondition);

  // Block 2 under 1, then under 3: a cached block after a missing one.
  const ReplayTrace not_prefix = MakeTrace({{1, 2}, {3, 2}});
  LruPolicy lru2;
  options.capacity_bytes = 10;
  EXPECT_CODE(ReplayPrefixCache(not_prefix, options, &lru2), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(ValidateTrace(not_prefix), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::tiering::sim
