// NodeEngine with an HBM tier (hbm_cache.h) on the host device: blobs read repeatedly are
// copied into HBM beside their DRAM bytes, byte for byte; copies are dropped leaf-first for
// room but never while leased; DRAM eviction and Delete drop the HBM copy first; Evict(kHbm)
// demotes to DRAM; Match, Stat and Tiers show the tier, its counters and its curve; a
// concurrent run with the admission thread keeps every byte read exact.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_macros.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"
#include "strata/store/core/node_engine.h"
#include "strata/tiering/hbm_tier.h"

namespace strata::store::core {
namespace {

using ::strata::store::core::testing::BlobContent;
using ::strata::store::core::testing::MakeBlob;
using ::strata::store::core::testing::PutBlob;
using ::strata::store::core::testing::ReadBytes;
using ::strata::store::core::testing::SmallNamespace;
using ::strata::store::core::testing::SmallOptions;
using ::strata::store::core::testing::WholeBlob;
using ::testing::ElementsAre;

constexpr uint32_t kPages = 12;  // 12 pages x 256 bytes = 3 KiB: one 4 KiB extent each
constexpr uint64_t kExtent = 4096;

class HbmTest : public ::testing::Test {
 protected:
  void Start(uint64_t dram_blobs, uint64_t hbm_blobs, bool background = false) {
    engine_.reset();
    ASSERT_OK_AND_ASSIGN(device_, gpu::CreateHostDevice({.memory_bytes = 64 << 20}));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<tiering::HbmTier> hbm,
                         tiering::HbmTier::Create(device_, {.capacity_bytes = hbm_blobs * kExtent,
                                                            .granule_bytes = kExtent}));
    NodeEngineOptions options = SmallOptions(&clock_, dram_blobs * kExtent);
    options.text_bytes = 1 << 20;
    options.hbm = std::move(hbm);
    options.hbm_policy = "lru";
    options.background_demotion = background;
    ASSERT_OK_AND_ASSIGN(engine_, NodeEngine::Create(options));
  }

  // A chain of `n` blobs of kPages pages (blob i continues blob i-1).
  std::vector<radix::BlobKey> PutChain(int n, uint64_t seed) {
    std::vector<radix::BlobKey> keys;
    std::optional<BlobParent> parent;
    for (int i = 0; i < n; ++i) {
      blobs_.push_back(MakeBlob(ns_, kPages, seed + i));
      auto commit = PutBlob(*engine_, ns_, parent, blobs_.back());
      EXPECT_OK(commit);
      if (!commit.ok()) return keys;
      keys.push_back(commit->key);
      parent = BlobParent{commit->key, kPages * (i + 1)};
    }
    return keys;
  }

  // Reads `key` whole; keeps the lease when `keep` is given (else releases it). Checks the
  // bytes against blob `index` and, where the reply names an HBM copy, that copy too.
  ReadRangeReply ReadChecked(const radix::BlobKey& key, size_t index, uint64_t* keep = nullptr) {
    const ReadRange range = WholeBlob(key, kPages);
    auto read = engine_->Read(ns_, {&range, 1});
    EXPECT_OK(read);
    if (!read.ok()) return {};
    const ReadRangeReply reply = read->ranges[0];
    auto bytes = ReadBytes(*engine_, read->lease_id, key, 0, reply.blob_bytes);
    EXPECT_OK(bytes);
    if (bytes.ok()) {
      EXPECT_EQ(*bytes, blobs_[index].bytes);
    }
    if (reply.hbm_offset.has_value()) {
      EXPECT_EQ(HbmBytes(*reply.hbm_offset), blobs_[index].bytes);
    }
    if (keep != nullptr) {
      *keep = read->lease_id;
    } else {
      EXPECT_OK(engine_->Release(read->lease_id));
    }
    return reply;
  }

  // The HBM copy at `offset`, read back through the device.
  std::vector<std::byte> HbmBytes(uint64_t offset) {
    std::vector<std::byte> out(kPages * 256);
    EXPECT_OK(engine_->hbm()->Read({offset, kExtent}, 0, absl::MakeSpan(out)));
    return out;
  }

  std::vector<Tier> TiersOf(const radix::BlobKey& key) {
    auto info = engine_->Stat(key);
    EXPECT_OK(info);
    return info.ok() ? info->tiers : std::vector<Tier>{};
  }

  report::TierStats HbmStats() {
    const NodeTiers tiers = engine_->Tiers();
    const report::TierStats* hbm = tiers.Find(Tier::kHbm);
    EXPECT_NE(hbm, nullptr);
    return hbm != nullptr ? *hbm : report::TierStats{};
  }

  FakeClock clock_;
  radix::Namespace ns_ = SmallNamespace();
  std::shared_ptr<gpu::Device> device_;
  std::unique_ptr<NodeEngine> engine_;
  std::vector<BlobContent> blobs_;
};

TEST_F(HbmTest, RepeatedReadsAdmitAByteExactCopyBesideDram) {
  Start(/*dram_blobs=*/8, /*hbm_blobs=*/4);
  const std::vector<radix::BlobKey> keys = PutChain(2, 10);
  ReadChecked(keys[0], 0);
  EXPECT_EQ(engine_->AdmitToHbm(), 0u);  // one read: not due
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kDram));
  ReadChecked(keys[0], 0);
  EXPECT_EQ(engine_->AdmitToHbm(), 1u);  // the second read made it due
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kHbm, Tier::kDram));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kDram));

  const ReadRangeReply reply = ReadChecked(keys[0], 0);  // checks the HBM copy's bytes
  ASSERT_TRUE(reply.hbm_offset.has_value());

  // Match reports the fastest tier of each segment.
  std::vector<radix::TokenId> tokens = blobs_[0].tokens;
  tokens.insert(tokens.end(), blobs_[1].tokens.begin(), blobs_[1].tokens.end());
  ASSERT_OK_AND_ASSIGN(const MatchResult match, engine_->Match(ns_, tokens));
  ASSERT_EQ(match.segments.size(), 2u);
  EXPECT_EQ(match.segments[0].tier, Tier::kHbm);
  EXPECT_EQ(match.segments[1].tier, Tier::kDram);

  const NodeTiers tiers = engine_->Tiers();
  ASSERT_EQ(tiers.tiers.size(), 2u);
  EXPECT_EQ(tiers.tiers[0].tier, Tier::kHbm);  // fastest first
  const report::TierStats& hbm = tiers.tiers[0];
  EXPECT_EQ(hbm.capacity_bytes, 4 * kExtent);
  EXPECT_EQ(hbm.used_bytes, kExtent);
  EXPECT_EQ(hbm.blobs, 1u);
  EXPECT_EQ(hbm.pages, kPages);
  EXPECT_EQ(hbm.promotions, 1u);
  EXPECT_EQ(hbm.hits, 1u);    // the third read
  EXPECT_EQ(hbm.misses, 2u);  // the first two
  // The curve plans the HBM tier too, from 0 to its capacity on its own.
  ASSERT_FALSE(tiers.curves.empty());
  EXPECT_EQ(tiers.curves[0].tier, Tier::kHbm);
  EXPECT_EQ(tiers.curves[0].capacity_bytes, 4 * kExtent);
}

TEST_F(HbmTest, CopiesAreDroppedLeafFirstForRoomAndTheDramBytesStay) {
  Start(/*dram_blobs=*/8, /*hbm_blobs=*/2);
  const std::vector<radix::BlobKey> keys = PutChain(3, 20);
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < 2; ++i) ReadChecked(keys[i], i);
  }
  EXPECT_EQ(engine_->AdmitToHbm(), 2u);
  // The third blob becomes due: HBM is full; blob 1 is the only leaf copy (blob 0
  // continues into it), so it goes although blob 0 was read less recently.
  ReadChecked(keys[2], 2);
  ReadChecked(keys[2], 2);
  EXPECT_EQ(engine_->AdmitToHbm(), 1u);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kHbm, Tier::kDram));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kDram));
  EXPECT_THAT(TiersOf(keys[2]), ElementsAre(Tier::kHbm, Tier::kDram));
  ReadChecked(keys[1], 1);  // its DRAM bytes are intact
  const report::TierStats hbm = HbmStats();
  EXPECT_EQ(hbm.demotions, 1u);
  EXPECT_EQ(hbm.promotions, 3u);
  EXPECT_EQ(hbm.used_bytes, 2 * kExtent);
}

TEST_F(HbmTest, ALeasedCopyIsNeverDropped) {
  Start(/*dram_blobs=*/8, /*hbm_blobs=*/1);
  std::vector<radix::BlobKey> keys = PutChain(1, 30);
  const std::vector<radix::BlobKey> other = PutChain(1, 40);  // a second sequence
  keys.push_back(other[0]);
  ReadChecked(keys[0], 0);
  ReadChecked(keys[0], 0);
  ASSERT_EQ(engine_->AdmitToHbm(), 1u);
  uint64_t lease = 0;
  const ReadRangeReply reply = ReadChecked(keys[0], 0, &lease);
  ASSERT_TRUE(reply.hbm_offset.has_value());
  ReadChecked(keys[1], 1);
  ReadChecked(keys[1], 1);
  EXPECT_EQ(engine_->AdmitToHbm(), 0u);  // the only copy is leased: no room
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kHbm, Tier::kDram));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kDram));
  ASSERT_OK_AND_ASSIGN(const EvictReply evicted, engine_->Evict(Tier::kHbm, UINT64_MAX));
  EXPECT_EQ(evicted.bytes_freed, 0u);  // Evict(kHbm) respects the lease too
  EXPECT_EQ(HbmBytes(*reply.hbm_offset), blobs_[0].bytes);
  ASSERT_OK(engine_->Release(lease));

  ReadChecked(keys[1], 1);  // due again, and now there is room
  EXPECT_EQ(engine_->AdmitToHbm(), 1u);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kDram));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kHbm, Tier::kDram));
}

TEST_F(HbmTest, DramEvictionDeleteAndEvictHbmDropTheCopy) {
  Start(/*dram_blobs=*/8, /*hbm_blobs=*/4);
  const std::vector<radix::BlobKey> keys = PutChain(3, 50);
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < 3; ++i) ReadChecked(keys[i], i);
  }
  ASSERT_EQ(engine_->AdmitToHbm(), 3u);

  // Evict(kHbm): copies go (leaf first), the DRAM bytes stay.
  ASSERT_OK_AND_ASSIGN(const EvictReply one, engine_->Evict(Tier::kHbm, 1));
  EXPECT_EQ(one.bytes_freed, kExtent);
  EXPECT_EQ(one.blobs_demoted, 1u);
  EXPECT_THAT(TiersOf(keys[2]), ElementsAre(Tier::kDram));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kHbm, Tier::kDram));

  // Delete: the blob and its copy go.
  ASSERT_OK(engine_->Delete(keys[2]).status());
  // DRAM eviction (no SSD: to TEXT) drops the copy first.
  ASSERT_OK_AND_ASSIGN(const EvictReply dram, engine_->Evict(Tier::kDram, UINT64_MAX));
  EXPECT_GT(dram.bytes_freed, 0u);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kText));
  const report::TierStats hbm = HbmStats();
  EXPECT_EQ(hbm.used_bytes, 0u);
  EXPECT_EQ(hbm.blobs, 0u);
  EXPECT_EQ(hbm.evictions, 2u);  // dropped with their DRAM bytes
  EXPECT_EQ(hbm.demotions, 1u);
}

TEST_F(HbmTest, AdmissionThreadAndConcurrentReadsDeletesAndPutsKeepBytesExact) {
  Start(/*dram_blobs=*/64, /*hbm_blobs=*/6, /*background=*/true);
  constexpr int kSequences = 12;
  std::vector<radix::BlobKey> keys;
  for (int s = 0; s < kSequences; ++s) keys.push_back(PutChain(1, 100 + s)[0]);
  std::atomic<int> reads{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      for (int n = 0; n < 400 && !stop.load(); ++n) {
        const size_t i = (n * 7 + t) % kSequences;
        const ReadRange range = WholeBlob(keys[i], kPages);
        auto read = engine_->Read(ns_, {&range, 1});
        if (!read.ok()) continue;  // deleted meanwhile
        auto bytes = ReadBytes(*engine_, read->lease_id, keys[i], 0, read->ranges[0].blob_bytes);
        EXPECT_OK(bytes);
        if (bytes.ok()) {
          EXPECT_EQ(*bytes, blobs_[i].bytes);
        }
        if (read->ranges[0].hbm_offset.has_value()) {
          EXPECT_EQ(HbmBytes(*read->ranges[0].hbm_offset), blobs_[i].bytes);
        }
        EXPECT_OK(engine_->Release(read->lease_id));
        reads.fetch_add(1);
      }
    });
  }
  // Meanwhile: deletes of some blobs and HBM evictions.
  for (int i = 0; i < kSequences; i += 4) {
    ASSERT_OK(engine_->Delete(keys[i]).status());
    ASSERT_OK(engine_->Evict(Tier::kHbm, kExtent).status());
  }
  for (std::thread& t : readers) t.join();
  EXPECT_GT(reads.load(), 0);
  // The thread admitted some copies; every copy still attached belongs to a linked blob.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (HbmStats().promotions == 0 && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(5));
  const report::TierStats hbm = HbmStats();
  EXPECT_GT(hbm.promotions, 0u);
  EXPECT_LE(hbm.blobs, 6u);
  // Once admission is idle, the tier's live extents are exactly the copies attached to
  // linked blobs: none leaked to a deleted blob or to a fill that lost its race.
  uint64_t in_hbm = 0;
  uint64_t live = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    engine_->AdmitToHbm();
    in_hbm = 0;
    for (int i = 0; i < kSequences; ++i) {
      if (i % 4 == 0) continue;
      const std::vector<Tier> tiers = TiersOf(keys[i]);
      if (!tiers.empty() && tiers[0] == Tier::kHbm) ++in_hbm;
    }
    live = HbmStats().blobs;
    if (live == in_hbm) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(live, in_hbm);
}

}  // namespace
}  // namespace strata::store::core
