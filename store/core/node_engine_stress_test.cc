// NodeEngine under concurrent, randomized use: several threads put (with and without
// parents, branching), commit (some with corrupted bytes), match, read and verify every
// byte through ReadSource against the writer's checksums, delete, pin, evict and reap, in
// a DRAM tier small enough that eviction runs all the time. Bounded in operations; each
// thread's choices come from a fixed seed (the interleaving is the scheduler's).
//
// A second run adds the SSD tier (the real SsdTier over an in-memory block file that
// completes on its own thread), a TEXT budget, the background mover, SSD and TEXT
// evictions, Prefetch and rebuild workers that refill TEXT blobs.
//
// Invariants checked while running: no call returns an error code outside its contract;
// a Read never yields bytes that differ from what was put under that key (bytes are a
// function of the key); Match segments tile the matched pages. At the end, with all
// leases released and everything evicted, no byte of the tier and no record is left.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"
#include "strata/tiering/io/memory_block_file.h"
#include "strata/tiering/io/ssd_tier.h"

namespace strata::store::core {
namespace {

// Unpins every blob in the index, page by page (List answers at most 1000 a page, and a
// TEXT-heavy run leaves more than that).
void UnpinAll(NodeEngine& engine) {
  std::string token;
  do {
    ASSERT_OK_AND_ASSIGN(ListReply list, engine.List({std::nullopt, token, 1000}));
    for (const BlobInfo& b : list.blobs) ASSERT_OK(engine.Unpin(b.key));
    token = list.next_page_token;
  } while (!token.empty());
}

using testing::MakeBytes;
using testing::MakeTokens;
using testing::SmallNamespace;
using testing::SmallOptions;

constexpr int kThreads = 4;
constexpr int kOpsPerThread = 2000;
using testing::kPageTokens;

// Keys that were committed at some point (they may be gone since).
class KnownKeys {
 public:
  void Add(const radix::BlobKey& key) {
    absl::MutexLock lock(&mu_);
    keys_.push_back(key);
  }
  std::optional<radix::BlobKey> Pick(std::mt19937_64& rng) {
    absl::MutexLock lock(&mu_);
    if (keys_.empty()) return std::nullopt;
    return keys_[rng() % keys_.size()];
  }

 private:
  absl::Mutex mu_;
  std::vector<radix::BlobKey> keys_ ABSL_GUARDED_BY(mu_);
};

// The bytes of a blob are a function of its key, so any incarnation must read the same.
std::vector<std::byte> BytesOf(const radix::BlobKey& key, uint64_t size) {
  return MakeBytes(size, key.hash.lo ^ key.hash.hi);
}

bool CodeIn(const absl::Status& s, std::initializer_list<absl::StatusCode> codes) {
  return std::find(codes.begin(), codes.end(), s.code()) != codes.end();
}

// What the workers did, to show the test exercised each path.
struct WorkCounts {
  std::atomic<uint64_t> committed{0}, corrupted{0}, aborted{0}, exists{0}, refused{0};
  std::atomic<uint64_t> reads_verified{0}, read_misses{0}, bytes_verified{0};
  std::atomic<uint64_t> rebuilt{0}, prefetches{0};
};

class Worker {
 public:
  Worker(NodeEngine& engine, const radix::Namespace& ns, KnownKeys& keys, WorkCounts& counts,
         uint64_t seed, bool tiers)
      : engine_(engine), ns_(ns), keys_(keys), counts_(counts), rng_(seed), tiers_(tiers) {}

  void Run() {
    for (int op = 0; op < kOpsPerThread && !::testing::Test::HasFailure(); ++op) {
      const uint64_t r = rng_() % 100;
      if (r < 35) {
        Put();
      } else if (r < 70) {
        ReadAndVerify();
      } else if (r < 82) {
        Match();
      } else if (r < 88) {
        Delete();
      } else if (r < 93) {
        PinUnpin();
      } else if (r < 97) {
        ASSERT_OK(engine_.Evict(Tier::kDram, 1 + rng_() % 32768));
      } else if (tiers_ && r < 98) {
        const Tier tier = rng_() % 2 == 0 ? Tier::kSsd : Tier::kText;
        ASSERT_OK(engine_.Evict(tier, 1 + rng_() % 16384));
      } else if (tiers_) {
        Rebuild();
      } else {
        engine_.ReapExpired();
      }
    }
  }

 private:
  void Put() {
    // Parent: none, or a known blob, cut at a random page inside it.
    std::optional<BlobParent> parent;
    radix::PrefixHash start = radix::NamespaceHash(ns_);
    if (rng_() % 3 != 0) {
      if (std::optional<radix::BlobKey> key = keys_.Pick(rng_)) {
        absl::StatusOr<BlobInfo> info = engine_.Stat(*key, /*with_tokens=*/true);
        if (info.ok()) {
          const uint32_t take = 1 + rng_() % info->pages;
          parent = BlobParent{*key, info->first_page + take};
          start = radix::PrefixHashAt(info->start_hash,
                                      absl::MakeConstSpan(info->tokens).first(take * kPageTokens),
                                      kPageTokens);
        }
      }
    }
    // Few distinct token seeds: sequences share prefixes and keys repeat.
    const uint32_t pages = 1 + rng_() % 4;
    const std::vector<radix::TokenId> tokens = MakeTokens(pages, rng_() % 6, kPageTokens);
    const radix::BlobKey key{radix::PrefixHashAt(start, tokens, kPageTokens)};
    const radix::BlobLayout layout = radix::BlobLayout::Create(ns_.layout(), pages).value();
    const std::vector<std::byte> bytes = BytesOf(key, layout.TotalBytes());
    const std::vector<uint64_t> checksums = ComputeChunkChecksums(layout, bytes).value();

    PutRequest request;
    request.parent = parent;
    request.tokens = tokens;
    request.bytes = bytes.size();
    request.checksums = checksums;
    request.key = key;
    absl::StatusOr<BeginPutReply> begin = engine_.BeginPut(ns_, request);
    if (!begin.ok()) {
      // The parent may be gone or cut since Stat; the tier may be all held.
      ASSERT_TRUE(CodeIn(begin.status(), {absl::StatusCode::kFailedPrecondition,
                                          absl::StatusCode::kResourceExhausted}))
          << begin.status();
      ++counts_.refused;
      return;
    }
    ASSERT_EQ(begin->key, key);
    if (begin->exists) {
      ++counts_.exists;
      return;
    }
    const uint64_t fate = rng_() % 10;
    {
      absl::StatusOr<HeldSpan> target = engine_.PutTarget(begin->put_id);
      ASSERT_OK(target);
      std::memcpy(target->data(), bytes.data(), bytes.size());
      if (fate == 0) target->data()[rng_() % bytes.size()] ^= std::byte{0x40};
    }
    ASSERT_OK(engine_.PutReceived(begin->put_id, 0, bytes.size()));
    if (fate == 1) {
      ASSERT_OK(engine_.AbortPut(begin->put_id));
      ++counts_.aborted;
      return;
    }
    absl::StatusOr<CommitPutReply> commit = engine_.CommitPut(begin->put_id);
    if (fate == 0) {
      EXPECT_CODE(commit, absl::StatusCode::kDataLoss);
      ++counts_.corrupted;
      return;
    }
    ASSERT_OK(commit);
    ++counts_.committed;
    keys_.Add(key);
  }

  void ReadAndVerify() {
    std::optional<radix::BlobKey> key = keys_.Pick(rng_);
    if (!key.has_value()) return;
    absl::StatusOr<BlobInfo> info = engine_.Stat(*key);
    if (!info.ok()) return;
    const uint32_t first = rng_() % info->pages;
    const uint32_t count = 1 + rng_() % (info->pages - first);
    const ReadRange range{*key, first, count, 0, ns_.layout().num_layers};
    absl::StatusOr<ReadReply> read = engine_.Read(ns_, {&range, 1}, absl::Seconds(60));
    if (!read.ok()) {
      // Evicted or deleted since Stat, or TEXT: a miss. With tiers, a promotion may find
      // DRAM all held.
      if (tiers_ && absl::IsResourceExhausted(read.status())) return;
      EXPECT_CODE(read, absl::StatusCode::kNotFound);
      ++counts_.read_misses;
      return;
    }
    // Whatever happens to the blob meanwhile, the lease keeps its bytes.
    if (rng_() % 2 == 0) (void)engine_.Delete(*key);
    const std::vector<std::byte> expected = BytesOf(*key, info->bytes);
    const uint64_t chunk = ns_.layout().BytesPerLayerPage();
    size_t c = 0;
    for (const radix::ByteRange& br : read->ranges[0].layer_ranges) {
      absl::StatusOr<HeldSpan> source =
          engine_.ReadSource(read->lease_id, *key, br.offset, br.length);
      ASSERT_OK(source);
      ASSERT_EQ(0, std::memcmp(source->data(), expected.data() + br.offset, br.length))
          << key->ToHex();
      for (uint64_t off = 0; off < br.length; off += chunk) {
        ASSERT_EQ(ChunkChecksum(source->span().subspan(off, chunk)),
                  read->ranges[0].checksums[c++]);
      }
      counts_.bytes_verified += br.length;
    }
    ++counts_.reads_verified;
    ASSERT_OK(engine_.Release(read->lease_id));
  }

  // Requests a rebuild of a known blob's path, pulls tasks and fills them with the bytes
  // the key implies (a TEXT blob refilled with its original bytes).
  void Rebuild() {
    std::optional<radix::BlobKey> key = keys_.Pick(rng_);
    if (!key.has_value()) return;
    absl::StatusOr<RebuildRequestReply> requested = engine_.RequestRebuild(*key, true);
    if (!requested.ok()) {
      EXPECT_CODE(requested, absl::StatusCode::kNotFound);
      return;
    }
    ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> tasks,
                         engine_.PullRebuildTasks(4, absl::ZeroDuration()));
    for (const RebuildTask& task : tasks) {
      const size_t own = size_t{task.pages} * kPageTokens;
      const std::vector<radix::TokenId> tokens(task.sequence_tokens.end() - own,
                                               task.sequence_tokens.end());
      const radix::BlobLayout layout = radix::BlobLayout::Create(ns_.layout(), task.pages).value();
      const std::vector<std::byte> bytes = BytesOf(task.key, layout.TotalBytes());
      PutRequest request;
      request.parent = task.parent;
      request.tokens = tokens;
      request.bytes = bytes.size();
      request.checksums = task.checksums;
      request.key = task.key;
      absl::StatusOr<BeginPutReply> begin = engine_.BeginPut(ns_, request);
      if (!begin.ok() || begin->exists) continue;  // parent gone, tier full, or refilled
      {
        ASSERT_OK_AND_ASSIGN(HeldSpan target, engine_.PutTarget(begin->put_id));
        std::memcpy(target.data(), bytes.data(), bytes.size());
      }
      ASSERT_OK(engine_.PutReceived(begin->put_id, 0, bytes.size()));
      absl::StatusOr<CommitPutReply> commit = engine_.CommitPut(begin->put_id);
      ASSERT_OK(commit);  // the bytes are the original's: never refused
      ++counts_.rebuilt;
    }
    if (rng_() % 2 == 0) {
      const std::vector<radix::TokenId> probe = MakeTokens(1 + rng_() % 8, rng_() % 6, kPageTokens);
      absl::StatusOr<PrefetchReply> prefetch = engine_.Prefetch(ns_, probe);
      if (prefetch.ok()) ++counts_.prefetches;
    }
  }

  void Match() {
    const std::vector<radix::TokenId> tokens = MakeTokens(1 + rng_() % 8, rng_() % 6, kPageTokens);
    absl::StatusOr<MatchResult> match = engine_.Match(ns_, tokens);
    if (absl::IsNotFound(match.status())) return;  // no put named the namespace yet
    ASSERT_OK(match);
    uint32_t next = 0;
    for (const Segment& s : match->segments) {
      ASSERT_EQ(s.seq_page_begin, next);
      ASSERT_GT(s.page_count, 0u);
      ASSERT_LE(s.blob_page_offset + s.page_count, s.blob_pages);
      next += s.page_count;
    }
    ASSERT_EQ(next, match->matched_pages);
  }

  void Delete() {
    std::optional<radix::BlobKey> key = keys_.Pick(rng_);
    if (!key.has_value()) return;
    absl::StatusOr<DeleteReply> del = engine_.Delete(*key);
    if (!del.ok()) {
      ASSERT_TRUE(CodeIn(del.status(),
                         {absl::StatusCode::kNotFound, absl::StatusCode::kFailedPrecondition}))
          << del.status();
    }
  }

  void PinUnpin() {
    std::optional<radix::BlobKey> key = keys_.Pick(rng_);
    if (!key.has_value()) return;
    absl::Status s = rng_() % 3 == 0 ? engine_.Pin(*key) : engine_.Unpin(*key);
    if (!s.ok()) {
      EXPECT_CODE(s, absl::StatusCode::kNotFound);
    }
  }

  NodeEngine& engine_;
  const radix::Namespace& ns_;
  KnownKeys& keys_;
  WorkCounts& counts_;
  std::mt19937_64 rng_;
  const bool tiers_;
};

TEST(NodeEngineStressTest, ConcurrentPutReadDeleteEvict) {
  FakeClock clock;
  NodeEngineOptions options = SmallOptions(&clock, 256 << 10);  // 64 extents of 4 KiB
  ASSERT_OK_AND_ASSIGN(auto engine, NodeEngine::Create(options));
  const radix::Namespace ns = SmallNamespace();
  KnownKeys keys;
  WorkCounts counts;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(
        [&, t] { Worker(*engine, ns, keys, counts, 1000 + t, /*tiers=*/false).Run(); });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::cout << "committed " << counts.committed << ", corrupted " << counts.corrupted
            << ", aborted " << counts.aborted << ", exists " << counts.exists << ", refused "
            << counts.refused << ", reads verified " << counts.reads_verified << " ("
            << counts.bytes_verified << " bytes), read misses " << counts.read_misses
            << ", evictions " << engine->Tiers().Find(Tier::kDram)->evictions << "\n";
  EXPECT_GT(counts.committed, 0u);
  EXPECT_GT(counts.corrupted, 0u);
  EXPECT_GT(counts.reads_verified, 0u);

  NodeTiers tiers = engine->Tiers();
  EXPECT_GT(tiers.Find(Tier::kDram)->evictions, 0u);
  EXPECT_GT(tiers.Find(Tier::kDram)->hits, 0u);
  EXPECT_EQ(tiers.engine.leases, 0u);
  EXPECT_EQ(tiers.engine.pending_puts, 0u);
  // Unpin everything still known, evict all: nothing may remain.
  ASSERT_NO_FATAL_FAILURE(UnpinAll(*engine));
  ASSERT_OK(engine->Evict(Tier::kDram, UINT64_MAX));
  tiers = engine->Tiers();
  EXPECT_EQ(tiers.engine.blobs, 0u);
  EXPECT_EQ(tiers.engine.unlinked_blobs, 0u);
  EXPECT_EQ(tiers.engine.token_only_blobs, 0u);
  EXPECT_EQ(tiers.index.pages, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->used_bytes, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->blobs, 0u);
}

TEST(NodeEngineStressTest, ConcurrentWorkAcrossDramSsdAndText) {
  FakeClock clock;
  NodeEngineOptions options = SmallOptions(&clock, 256 << 10);  // 64 extents of 4 KiB
  options.text_bytes = 16 << 10;
  options.dram_high_watermark = 0.6;
  options.dram_low_watermark = 0.4;
  options.background_demotion = true;
  // The policies meant to beat LRU, under concurrency and the engine's leaf-first rule.
  options.dram_policy = "branch-lru";
  options.ssd_policy = "gdsf";
  options.admission = "reuse";
  tiering::io::MemoryBlockFileOptions file_options;
  file_options.size_bytes = 128 << 10;  // 32 extents: SSD pressure too
  file_options.async_completion = true;
  ASSERT_OK_AND_ASSIGN(auto file, tiering::io::MemoryBlockFile::Create(file_options));
  tiering::io::SsdTierOptions ssd_options;
  ssd_options.capacity_bytes = file_options.size_bytes;
  ssd_options.granule_bytes = 4096;
  ssd_options.max_extent_bytes = 64 << 10;
  ssd_options.large_extent_bytes = 0;
  ASSERT_OK_AND_ASSIGN(auto ssd, tiering::io::SsdTier::Create(std::move(file), ssd_options));
  options.ssd = std::move(ssd);
  ASSERT_OK_AND_ASSIGN(auto engine, NodeEngine::Create(options));
  const radix::Namespace ns = SmallNamespace();
  KnownKeys keys;
  WorkCounts counts;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(
        [&, t] { Worker(*engine, ns, keys, counts, 2000 + t, /*tiers=*/true).Run(); });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(::testing::Test::HasFailure());
  NodeTiers tiers = engine->Tiers();
  std::cout << "committed " << counts.committed << ", reads verified " << counts.reads_verified
            << ", read misses " << counts.read_misses << ", rebuilt " << counts.rebuilt
            << ", prefetches " << counts.prefetches << ", demotions "
            << tiers.Find(Tier::kDram)->demotions << ", promotions "
            << tiers.Find(Tier::kDram)->promotions << ", TEXT drops " << tiers.text.drops
            << ", TEXT deletions " << tiers.text.deletions << "\n";
  EXPECT_GT(counts.reads_verified, 0u);
  EXPECT_GT(tiers.Find(Tier::kDram)->demotions, 0u);
  EXPECT_GT(tiers.Find(Tier::kDram)->promotions, 0u);
  EXPECT_GT(tiers.text.drops, 0u);
  EXPECT_EQ(tiers.engine.leases, 0u);
  EXPECT_EQ(tiers.engine.pending_puts, 0u);
  // Unpin everything, drop every tier: nothing may remain. The background mover may be
  // in the middle of a demotion round (its blobs are `moving`, which eviction skips), so
  // evict again until the engine is empty, for at most 5 s.
  ASSERT_NO_FATAL_FAILURE(UnpinAll(*engine));
  for (int round = 0; round < 500; ++round) {
    ASSERT_OK(engine->Evict(Tier::kDram, UINT64_MAX));
    ASSERT_OK(engine->Evict(Tier::kSsd, UINT64_MAX));
    ASSERT_OK(engine->Evict(Tier::kText, UINT64_MAX));
    if (engine->Tiers().engine.blobs == 0) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  tiers = engine->Tiers();
  EXPECT_EQ(tiers.engine.blobs, 0u);
  EXPECT_EQ(tiers.engine.unlinked_blobs, 0u);
  EXPECT_EQ(tiers.engine.token_only_blobs, 0u);
  EXPECT_EQ(tiers.index.pages, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->used_bytes, 0u);
  ASSERT_TRUE((tiers.Find(Tier::kSsd) != nullptr));
  EXPECT_EQ(tiers.Find(Tier::kSsd)->used_bytes, 0u);
  EXPECT_EQ(tiers.text.blobs, 0u);
  EXPECT_EQ(tiers.text.used_bytes, 0u);
}

}  // namespace
}  // namespace strata::store::core
