// NodeEngine tiers: DRAM pressure drops bytes to TEXT (or demotes them to SSD), Match
// reports tier states and TEXT tokens, rebuild tasks refill TEXT blobs byte-identically,
// SSD blobs are promoted on Read and a corrupt SSD copy is DATA_LOSS, never garbage.
// The SSD tier is the real SsdTier over an in-memory, fault-injecting block file.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_macros.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/meta/memory_meta_store.h"
#include "strata/tiering/io/memory_block_file.h"
#include "strata/tiering/io/ssd_tier.h"

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

class TiersTest : public ::testing::Test {
 protected:
  // A node with `dram_blobs` extents of DRAM and, if ssd_blobs > 0, an SSD tier of
  // `ssd_blobs` extents. With `restart`, the SSD tier starts from a copy of the previous
  // one's bytes (a fresh allocator, as after a process restart) and the same metadata.
  void Start(uint64_t dram_blobs, uint64_t ssd_blobs, uint64_t text_bytes = 1 << 20,
             bool restart = false) {
    NodeEngineOptions options = SmallOptions(&clock_, dram_blobs * 4096);
    options.text_bytes = text_bytes;
    options.admission = admission_;
    options.meta = meta_;
    options.tenant_quotas = quotas_;
    options.background_demotion = background_demotion_;
    if (ssd_blobs > 0) {
      tiering::io::MemoryBlockFileOptions file_options;
      file_options.size_bytes = ssd_blobs * 4096;
      auto file = tiering::io::MemoryBlockFile::Create(file_options);
      ASSERT_OK(file);
      if (restart) {
        ASSERT_NE(file_, nullptr);
        CopyBytes(*file_, **file);
      }
      file_ = file->get();
      tiering::io::SsdTierOptions ssd_options;
      ssd_options.capacity_bytes = ssd_blobs * 4096;
      ssd_options.granule_bytes = 4096;
      ssd_options.max_extent_bytes = 1 << 20;
      ssd_options.large_extent_bytes = 0;
      auto ssd = tiering::io::SsdTier::Create(std::move(*file), ssd_options);
      ASSERT_OK(ssd);
      options.ssd = std::shared_ptr<tiering::Tier>(std::move(*ssd));
    }
    engine_.reset();  // the previous node (if any) stops first
    auto engine = NodeEngine::Create(options);
    ASSERT_OK(engine);
    engine_ = std::move(*engine);
  }

  // Copies every byte of `from` into `to` (same size) through the BlockFile interface.
  static void CopyBytes(const tiering::io::MemoryBlockFile& from,
                        tiering::io::MemoryBlockFile& to) {
    const absl::Span<const std::byte> bytes = from.contents();
    auto* buffer = static_cast<std::byte*>(std::aligned_alloc(4096, bytes.size()));
    std::memcpy(buffer, bytes.data(), bytes.size());
    absl::Status written;
    to.SubmitBatch({tiering::io::BlockIo::Write(0, {buffer, bytes.size()})},
                   [&](std::vector<absl::Status> statuses) { written = statuses[0]; });
    EXPECT_OK(written);
    std::free(buffer);
  }

  // Puts a chain of `n` blobs of kPages pages (blob i continues blob i-1).
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

  // The whole sequence of the first `n` blobs put.
  std::vector<radix::TokenId> Sequence(size_t n) const {
    std::vector<radix::TokenId> tokens;
    for (size_t i = 0; i < n; ++i) {
      tokens.insert(tokens.end(), blobs_[i].tokens.begin(), blobs_[i].tokens.end());
    }
    return tokens;
  }

  std::vector<Tier> TiersOf(const radix::BlobKey& key) {
    auto info = engine_->Stat(key);
    EXPECT_OK(info);
    return info.ok() ? info->tiers : std::vector<Tier>{};
  }

  // Reads the whole blob and returns its bytes.
  absl::StatusOr<std::vector<std::byte>> ReadAll(const radix::BlobKey& key) {
    const ReadRange range = WholeBlob(key, kPages);
    STRATA_ASSIGN_OR_RETURN(ReadReply reply, engine_->Read(ns_, {&range, 1}));
    auto bytes = ReadBytes(*engine_, reply.lease_id, key, 0, reply.ranges[0].blob_bytes);
    EXPECT_OK(engine_->Release(reply.lease_id));
    return bytes;
  }

  FakeClock clock_;
  std::string admission_ = "always";
  TenantQuotas quotas_;
  bool background_demotion_ = false;
  std::shared_ptr<meta::MemoryMetaStore> meta_ = std::make_shared<meta::MemoryMetaStore>();
  radix::Namespace ns_ = SmallNamespace();
  std::vector<BlobContent> blobs_;
  tiering::io::MemoryBlockFile* file_ = nullptr;  // owned by the SSD tier
  std::unique_ptr<NodeEngine> engine_;
};

TEST_F(TiersTest, DramPressureDropsLeavesToTextAndMatchCarriesTheirTokens) {
  Start(/*dram_blobs=*/3, /*ssd_blobs=*/0);
  const std::vector<radix::BlobKey> keys = PutChain(3, 100);
  ASSERT_EQ(keys.size(), 3u);
  // A fourth blob of another sequence needs room: only the chain's leaf may go.
  const BlobContent other = MakeBlob(ns_, kPages, 900);
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, other));
  EXPECT_THAT(TiersOf(keys[2]), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kDram));

  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, Sequence(3)));
  EXPECT_EQ(match.matched_pages, 3 * kPages);  // TEXT pages are still in the index
  ASSERT_EQ(match.segments.size(), 3u);
  EXPECT_EQ(match.segments[1].tier, Tier::kDram);
  EXPECT_TRUE(match.segments[1].tokens.empty());
  EXPECT_EQ(match.segments[2].tier, Tier::kText);
  EXPECT_EQ(match.segments[2].tokens, blobs_[2].tokens);

  // A TEXT blob is a miss, never garbage.
  EXPECT_CODE(ReadAll(keys[2]), absl::StatusCode::kNotFound);
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.text.blobs, 1u);
  EXPECT_EQ(tiers.text.drops, 1u);
  EXPECT_GT(tiers.text.used_bytes, 0u);
}

TEST_F(TiersTest, FailedMetadataWritesAreReported) {
  Start(/*dram_blobs=*/3, /*ssd_blobs=*/0);
  EXPECT_EQ(engine_->Tiers().engine.meta_write_errors, 0u);
  meta_->FailNextApplies(absl::UnavailableError("disk gone"));
  const BlobContent blob = MakeBlob(ns_, kPages, 700);
  ASSERT_OK_AND_ASSIGN(CommitPutReply put, PutBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_EQ(engine_->Tiers().engine.meta_write_errors, 1u);
  // Only its durability was lost: the blob is cached and reads back whole.
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(put.key));
  EXPECT_EQ(bytes, blob.bytes);
}

TEST_F(TiersTest, LeasedAndPinnedBlobsKeepTheirBytes) {
  Start(/*dram_blobs=*/2, /*ssd_blobs=*/0);
  const BlobContent a = MakeBlob(ns_, kPages, 1);
  const BlobContent b = MakeBlob(ns_, kPages, 2);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, std::nullopt, b));
  const ReadRange range = WholeBlob(ca.key, kPages);
  ASSERT_OK_AND_ASSIGN(ReadReply lease, engine_->Read(ns_, {&range, 1}));
  ASSERT_OK(engine_->Pin(cb.key));
  // Nothing may go: the third put finds the tier full.
  EXPECT_CODE(PutBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, kPages, 3)),
              absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kDram));
  EXPECT_THAT(TiersOf(cb.key), ElementsAre(Tier::kDram));
  ASSERT_OK(engine_->Release(lease.lease_id));
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, kPages, 3)));
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(cb.key), ElementsAre(Tier::kDram));
}

TEST_F(TiersTest, RebuildTaskRefillsTheTextBlobByteIdentically) {
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/0);
  const std::vector<radix::BlobKey> keys = PutChain(3, 200);
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_dropped, 3u);
  for (const auto& key : keys) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kText));

  ASSERT_OK_AND_ASSIGN(RebuildRequestReply requested, engine_->RequestRebuild(keys[2], true));
  EXPECT_EQ(requested.queued, 3u);
  ASSERT_OK_AND_ASSIGN(requested, engine_->RequestRebuild(keys[2], true));
  EXPECT_EQ(requested.already_queued, 3u);

  ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> tasks,
                       engine_->PullRebuildTasks(10, absl::ZeroDuration()));
  ASSERT_EQ(tasks.size(), 3u);
  // Parents first, each with its whole sequence and the original checksums.
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(tasks[i].key, keys[i]);
    EXPECT_EQ(tasks[i].first_page, kPages * i);
    EXPECT_EQ(tasks[i].sequence_tokens, Sequence(i + 1));
    EXPECT_EQ(tasks[i].checksums, blobs_[i].checksums);
    ASSERT_TRUE(tasks[i].ns.has_value());
    EXPECT_EQ(*tasks[i].ns, ns_);
  }
  EXPECT_EQ(engine_->Tiers().rebuild.in_flight, 3u);

  // A put of other bytes is refused; the blob stays TEXT.
  BlobContent wrong = MakeBlob(ns_, kPages, 999);
  wrong.tokens = blobs_[0].tokens;
  EXPECT_CODE(PutBlob(*engine_, ns_, std::nullopt, wrong), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kText));

  // The original bytes refill it: byte-identical, same checksum.
  for (size_t i = 0; i < 3; ++i) {
    std::optional<BlobParent> parent = tasks[i].parent;
    ASSERT_OK_AND_ASSIGN(CommitPutReply commit, PutBlob(*engine_, ns_, parent, blobs_[i]));
    EXPECT_EQ(commit.key, keys[i]);
    EXPECT_THAT(TiersOf(keys[i]), ElementsAre(Tier::kDram));
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[i]));
    EXPECT_EQ(bytes, blobs_[i].bytes);
  }
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.rebuild.completed, 3u);
  EXPECT_EQ(tiers.rebuild.in_flight, 0u);
  EXPECT_EQ(tiers.text.rebuilds, 3u);
  EXPECT_EQ(tiers.text.blobs, 0u);
}

TEST_F(TiersTest, UnfilledRebuildTasksReturnToTheQueueAndAreGivenUp) {
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/0);
  const std::vector<radix::BlobKey> keys = PutChain(1, 300);
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  ASSERT_OK(engine_->RequestRebuild(keys[0], false));
  EXPECT_CODE(engine_->PullRebuildTasks(0, absl::ZeroDuration()),
              absl::StatusCode::kInvalidArgument);
  for (uint32_t attempt = 0; attempt < 3; ++attempt) {  // max_rebuild_attempts = 3
    ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> tasks,
                         engine_->PullRebuildTasks(1, absl::ZeroDuration()));
    ASSERT_EQ(tasks.size(), 1u) << "attempt " << attempt;
    ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> none,
                         engine_->PullRebuildTasks(1, absl::ZeroDuration()));
    EXPECT_TRUE(none.empty());  // in flight, not handed out twice
    clock_.Advance(absl::Minutes(1));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> none,
                       engine_->PullRebuildTasks(1, absl::ZeroDuration()));
  EXPECT_TRUE(none.empty());
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.rebuild.expired, 3u);
  EXPECT_EQ(tiers.rebuild.dropped, 1u);
}

TEST_F(TiersTest, TextBudgetDeletesTextLeavesFirst) {
  // Room for the text of about two blobs of 48 tokens and 24 checksums.
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/0, /*text_bytes=*/1000);
  const std::vector<radix::BlobKey> keys = PutChain(3, 400);
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_dropped, 3u);
  // The leaf's text went first; the prefix is kept.
  EXPECT_CODE(engine_->Stat(keys[2]), absl::StatusCode::kNotFound);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kText));
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_LE(tiers.text.used_bytes, 1000u);
  EXPECT_GE(tiers.text.deletions, 1u);
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, Sequence(3)));
  EXPECT_EQ(match.matched_pages, (3 - tiers.text.deletions) * kPages);
}

TEST_F(TiersTest, WithoutTextTierDroppedBlobsLeaveTheIndex) {
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/0, /*text_bytes=*/0);
  const std::vector<radix::BlobKey> keys = PutChain(2, 500);
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_CODE(engine_->Stat(keys[0]), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, Sequence(2)));
  EXPECT_EQ(match.matched_pages, 0u);
}

TEST_F(TiersTest, DemotedBlobsArePromotedOnReadWithTheirBytesIntact) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(3, 600);
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_demoted, 3u);
  EXPECT_EQ(evicted.blobs_dropped, 0u);
  for (const auto& key : keys) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kSsd));
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, Sequence(3)));
  ASSERT_EQ(match.segments.size(), 3u);
  EXPECT_EQ(match.segments[0].tier, Tier::kSsd);
  EXPECT_TRUE(match.segments[0].tokens.empty());

  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[1]));
  EXPECT_EQ(bytes, blobs_[1].bytes);
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kDram, Tier::kSsd));
  const NodeTiers tiers = engine_->Tiers();
  ASSERT_TRUE((tiers.Find(Tier::kSsd) != nullptr));
  EXPECT_EQ(tiers.Find(Tier::kDram)->demotions, 3u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->promotions, 1u);
  EXPECT_EQ(tiers.Find(Tier::kSsd)->blobs, 3u);

  // Dropping the DRAM copy again costs no I/O: the SSD copy is kept.
  const uint64_t writes = file_->Stats().writes;
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(file_->Stats().writes, writes);
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kSsd));
}

TEST_F(TiersTest, CorruptSsdCopyIsDataLossAndTheBlobBecomesText) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(2, 700);
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  ASSERT_OK_AND_ASSIGN(BlobInfo info, engine_->Stat(keys[1]));
  file_->FlipBits(info.ssd_extent.offset + 100);
  EXPECT_CODE(ReadAll(keys[1]), absl::StatusCode::kDataLoss);
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kText));
  // The node keeps serving: the parent is intact.
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[0]));
  EXPECT_EQ(bytes, blobs_[0].bytes);
}

TEST_F(TiersTest, ReadErrorsOfTheSsdCopy) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(2, 750);
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  // A transient error (EBUSY: UNAVAILABLE) fails the read but keeps the SSD copy.
  file_->InjectFault({.kind = tiering::io::BlockIoKind::kRead, .error_number = EBUSY});
  EXPECT_CODE(ReadAll(keys[0]), absl::StatusCode::kUnavailable);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kSsd));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[0]));
  EXPECT_EQ(bytes, blobs_[0].bytes);
  // EIO loses the bytes: DATA_LOSS, and the leaf becomes TEXT.
  file_->InjectFault({.kind = tiering::io::BlockIoKind::kRead, .error_number = EIO});
  EXPECT_CODE(ReadAll(keys[1]), absl::StatusCode::kDataLoss);
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kText));
  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->used_bytes,
            4096u);  // keys[0]'s copy; failed targets freed
}

TEST_F(TiersTest, FullSsdDropsOlderSsdBlobsToText) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/2);
  const BlobContent a = MakeBlob(ns_, kPages, 1);
  const BlobContent b = MakeBlob(ns_, kPages, 2);
  const BlobContent c = MakeBlob(ns_, kPages, 3);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, std::nullopt, b));
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, PutBlob(*engine_, ns_, std::nullopt, c));
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_demoted, 1u);
  EXPECT_THAT(TiersOf(cc.key), ElementsAre(Tier::kSsd));
  // One of the older SSD blobs (LRU: a) made room.
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(cb.key), ElementsAre(Tier::kSsd));
}

TEST_F(TiersTest, FailedDemotionWritesKeepTheBlobInDram) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(1, 800);
  file_->SetWriteBudget(0);  // ENOSPC from now on
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_demoted, 0u);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kDram));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[0]));
  EXPECT_EQ(bytes, blobs_[0].bytes);
  const NodeTiers tiers = engine_->Tiers();
  ASSERT_TRUE((tiers.Find(Tier::kSsd) != nullptr));
  EXPECT_EQ(tiers.Find(Tier::kSsd)->used_bytes, 0u);  // the failed extent was given back
}

TEST_F(TiersTest, PrefetchPromotesSsdBlobsAndQueuesTextRebuilds) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(2, 900);
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));  // both on SSD
  ASSERT_OK(engine_->Evict(Tier::kSsd, 4096));      // the leaf to TEXT
  EXPECT_THAT(TiersOf(keys[1]), ElementsAre(Tier::kText));
  ASSERT_OK_AND_ASSIGN(PrefetchReply prefetch, engine_->Prefetch(ns_, Sequence(2)));
  EXPECT_EQ(prefetch.matched_pages, 2 * kPages);
  EXPECT_EQ(prefetch.resident_pages, kPages);
  EXPECT_EQ(prefetch.promotions, 1u);
  EXPECT_EQ(prefetch.rebuilds_queued, 1u);
  EXPECT_THAT(TiersOf(keys[0]), ElementsAre(Tier::kDram, Tier::kSsd));
  EXPECT_EQ(engine_->Tiers().rebuild.queued, 1u);
}

TEST_F(TiersTest, EvictNamesOnlyTiersTheNodeHas) {
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/0);
  EXPECT_CODE(engine_->Evict(Tier::kSsd, 1), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(engine_->Evict(Tier::kHbm, 1), absl::StatusCode::kInvalidArgument);
  EXPECT_OK(engine_->Evict(Tier::kText, 1));
}

TEST_F(TiersTest, ReuseAdmissionSkipsSsdWritesOfUnreadBlobsAndKeepsOneOffReadsOutOfDram) {
  admission_ = "reuse";
  Start(/*dram_blobs=*/4, /*ssd_blobs=*/8);
  const BlobContent a = MakeBlob(ns_, kPages, 1);
  const BlobContent b = MakeBlob(ns_, kPages, 2);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, std::nullopt, b));
  blobs_ = {a, b};
  ASSERT_OK(ReadAll(ca.key));  // read once: worth an SSD write; b never read: not
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_demoted, 1u);
  EXPECT_EQ(evicted.blobs_dropped, 1u);
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kSsd));
  EXPECT_THAT(TiersOf(cb.key), ElementsAre(Tier::kText));
  // An SSD hit long (in reads) after the previous read of the blob: served through a
  // DRAM copy that is dropped once the read's lease ends.
  const BlobContent c = MakeBlob(ns_, kPages, 3);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, PutBlob(*engine_, ns_, std::nullopt, c));
  const ReadRange rc = WholeBlob(cc.key, kPages);
  for (int i = 0; i < 70000; ++i) {  // more reads than ReuseAdmission's promote window
    ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, {&rc, 1}));
    ASSERT_OK(engine_->Release(read.lease_id));
  }
  const ReadRange ra = WholeBlob(ca.key, kPages);
  ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, {&ra, 1}));
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kDram, Tier::kSsd));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes,
                       ReadBytes(*engine_, read.lease_id, ca.key, 0, a.bytes.size()));
  EXPECT_EQ(bytes, a.bytes);
  ASSERT_OK(engine_->Release(read.lease_id));
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kSsd));
  // A second read soon after: this copy stays.
  ASSERT_OK_AND_ASSIGN(read, engine_->Read(ns_, {&ra, 1}));
  ASSERT_OK(engine_->Release(read.lease_id));
  EXPECT_THAT(TiersOf(ca.key), ElementsAre(Tier::kDram, Tier::kSsd));
}

TEST_F(TiersTest, RestartServesSsdBlobsAndTurnsDramOnlyBlobsIntoText) {
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(3, 1000);
  // The chain goes to SSD; a fourth blob stays in DRAM only; the root is pinned.
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  const BlobContent extra = MakeBlob(ns_, kPages, 1099);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cx, PutBlob(*engine_, ns_, std::nullopt, extra));
  ASSERT_OK(engine_->Pin(keys[0]));

  Start(/*dram_blobs=*/8, /*ssd_blobs=*/8, 1 << 20, /*restart=*/true);
  const RestoreReport report = engine_->restored();
  EXPECT_EQ(report.restored, 4u);
  EXPECT_EQ(report.on_ssd, 3u);
  EXPECT_EQ(report.text, 1u);
  EXPECT_EQ(report.dropped, 0u);
  EXPECT_THAT(TiersOf(cx.key), ElementsAre(Tier::kText));
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, Sequence(3)));
  EXPECT_EQ(match.matched_pages, 3 * kPages);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_THAT(TiersOf(keys[i]), ElementsAre(Tier::kSsd));
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[i]));
    EXPECT_EQ(bytes, blobs_[i].bytes) << i;
  }
  ASSERT_OK_AND_ASSIGN(BlobInfo pinned, engine_->Stat(keys[0]));
  EXPECT_TRUE(pinned.pinned);
  // New blobs do not land on the restored extents.
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  for (size_t i = 1; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[i]));
    EXPECT_EQ(bytes, blobs_[i].bytes) << i;
  }
}

TEST_F(TiersTest, RestartDropsRecordsThatFailTheirChecks) {
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/8);
  const std::vector<radix::BlobKey> keys = PutChain(3, 1100);
  ASSERT_OK(engine_->Evict(Tier::kDram, 1 << 30));
  // The middle record's tokens are damaged (its key no longer matches them): it and the
  // blob continuing it are dropped; the first comes back.
  ASSERT_OK_AND_ASSIGN(meta::BlobMeta middle, meta_->GetBlob(keys[1]));
  middle.tokens[0] ^= 1;
  meta::MetaBatch batch;
  batch.PutBlob(middle);
  ASSERT_OK(meta_->Apply(batch));
  Start(/*dram_blobs=*/8, /*ssd_blobs=*/8, 1 << 20, /*restart=*/true);
  const RestoreReport report = engine_->restored();
  EXPECT_EQ(report.restored, 1u);
  EXPECT_EQ(report.dropped, 2u);
  EXPECT_OK(engine_->Stat(keys[0]));
  EXPECT_CODE(engine_->Stat(keys[1]), absl::StatusCode::kNotFound);
  EXPECT_CODE(meta_->GetBlob(keys[2]), absl::StatusCode::kNotFound);  // deleted from the store
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ReadAll(keys[0]));
  EXPECT_EQ(bytes, blobs_[0].bytes);
}

namespace quota_test {

// What Tiers() reports of tenant label `label` (a default value when it lists none).
report::TenantUsage UsageOf(NodeEngine& engine, const std::string& label) {
  for (const report::TenantUsage& u : engine.Tiers().tenants) {
    if (u.tenant == label) return u;
  }
  return report::TenantUsage{};
}

// Puts `n` root blobs (kPages pages: one 4 KiB extent each) of `ns`; returns their keys.
std::vector<radix::BlobKey> PutRoots(NodeEngine& engine, const radix::Namespace& ns, int n,
                                     uint64_t seed) {
  std::vector<radix::BlobKey> keys;
  for (int i = 0; i < n; ++i) {
    auto commit = PutBlob(engine, ns, std::nullopt, MakeBlob(ns, kPages, seed + i));
    EXPECT_OK(commit) << "blob " << i;
    if (commit.ok()) keys.push_back(commit->key);
  }
  return keys;
}

}  // namespace quota_test

// Issue 12, item 9: a label at its DRAM quota evicts its own blobs, oldest first, though
// other labels' blobs are older and the tier has room.
TEST_F(TiersTest, ALabelAtItsDramQuotaEvictsItsOwnBlobsFirst) {
  quotas_["acme"] = TenantQuota{.dram_bytes = 4 * 4096};
  Start(/*dram_blobs=*/16, /*ssd_blobs=*/0);
  const radix::Namespace globex = SmallNamespace("globex");
  const std::vector<radix::BlobKey> g = quota_test::PutRoots(*engine_, globex, 3, 100);
  const std::vector<radix::BlobKey> a = quota_test::PutRoots(*engine_, ns_, 5, 200);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_THAT(TiersOf(a[0]), ElementsAre(Tier::kText));  // acme's oldest went
  for (size_t i = 1; i < a.size(); ++i) EXPECT_THAT(TiersOf(a[i]), ElementsAre(Tier::kDram));
  for (const radix::BlobKey& key : g) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kDram));
  const report::TenantUsage acme = quota_test::UsageOf(*engine_, "acme");
  EXPECT_EQ(acme.dram_charged_bytes, 4u * 4096);
  EXPECT_EQ(acme.dram_bytes, 4u * 4096);
  EXPECT_EQ(acme.dram_quota_bytes, 4u * 4096);
  EXPECT_EQ(acme.quota_evictions, 1u);
  EXPECT_EQ(acme.quota_refusals, 0u);
  const report::TenantUsage other = quota_test::UsageOf(*engine_, "globex");
  EXPECT_EQ(other.dram_charged_bytes, 3u * 4096);
  EXPECT_EQ(other.dram_quota_bytes, 0u);
  EXPECT_EQ(other.quota_evictions, 0u);
}

// A put larger than the label's quota can never fit: refused before anything is evicted.
TEST_F(TiersTest, APutLargerThanTheQuotaIsRefusedBeforeAnythingIsEvicted) {
  quotas_["acme"] = TenantQuota{.dram_bytes = 2 * 4096};
  Start(/*dram_blobs=*/16, /*ssd_blobs=*/0);
  const std::vector<radix::BlobKey> a = quota_test::PutRoots(*engine_, ns_, 2, 300);
  const BlobContent big = MakeBlob(ns_, 3 * kPages, 310);  // 9 KiB: three extents
  const absl::StatusOr<BeginPutReply> refused =
      testing::BeginBlob(*engine_, ns_, std::nullopt, big);
  EXPECT_CODE(refused.status(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("can never fit"));
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("\"acme\""));
  for (const radix::BlobKey& key : a) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kDram));
  EXPECT_EQ(quota_test::UsageOf(*engine_, "acme").quota_refusals, 1u);
}

// Pending puts count against the quota and cannot be evicted: a label whose quota is full
// of them is refused, other labels are not, and an abandoned put gives its charge back.
TEST_F(TiersTest, PendingPutsCountAgainstTheQuota) {
  quotas_["acme"] = TenantQuota{.dram_bytes = 2 * 4096};
  Start(/*dram_blobs=*/16, /*ssd_blobs=*/0);
  std::vector<uint64_t> puts;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(BeginPutReply put, testing::BeginBlob(*engine_, ns_, std::nullopt,
                                                               MakeBlob(ns_, kPages, 400 + i)));
    puts.push_back(put.put_id);
  }
  report::TenantUsage acme = quota_test::UsageOf(*engine_, "acme");
  EXPECT_EQ(acme.dram_charged_bytes, 2u * 4096);
  EXPECT_EQ(acme.dram_bytes, 0u);  // nothing committed
  const absl::StatusOr<BeginPutReply> third =
      testing::BeginBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, kPages, 402));
  EXPECT_CODE(third.status(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.status().message(), ::testing::HasSubstr("at its DRAM quota"));
  const radix::Namespace globex = SmallNamespace("globex");
  EXPECT_OK(PutBlob(*engine_, globex, std::nullopt, MakeBlob(globex, kPages, 403)).status());
  ASSERT_OK(engine_->AbortPut(puts[0]));
  acme = quota_test::UsageOf(*engine_, "acme");
  EXPECT_EQ(acme.dram_charged_bytes, 4096u);
  EXPECT_OK(PutBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, kPages, 404)).status());
}

// The SSD quota: a demotion that would pass it drops the label's own older SSD copies
// first; one that cannot fit (the label's copies are all in flight) drops to TEXT;
// other labels keep demoting into the room the tier has.
TEST_F(TiersTest, ALabelAtItsSsdQuotaDropsItsOwnSsdCopiesFirst) {
  quotas_["acme"] = TenantQuota{.ssd_bytes = 2 * 4096};
  Start(/*dram_blobs=*/16, /*ssd_blobs=*/16);
  const radix::Namespace globex = SmallNamespace("globex");
  const std::vector<radix::BlobKey> g = quota_test::PutRoots(*engine_, globex, 3, 500);
  const std::vector<radix::BlobKey> a = quota_test::PutRoots(*engine_, ns_, 4, 600);
  ASSERT_OK(engine_->Evict(Tier::kDram, 16 * 4096).status());
  for (const radix::BlobKey& key : g) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kSsd));
  // One round demotes all four at once: two fit the quota, two drop to TEXT.
  EXPECT_THAT(TiersOf(a[0]), ElementsAre(Tier::kSsd));
  EXPECT_THAT(TiersOf(a[1]), ElementsAre(Tier::kSsd));
  EXPECT_THAT(TiersOf(a[2]), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(a[3]), ElementsAre(Tier::kText));
  report::TenantUsage acme = quota_test::UsageOf(*engine_, "acme");
  EXPECT_EQ(acme.ssd_charged_bytes, 2u * 4096);
  EXPECT_EQ(acme.quota_refusals, 2u);
  // Two newer blobs: their demotions drop the two older SSD copies.
  const std::vector<radix::BlobKey> b = quota_test::PutRoots(*engine_, ns_, 2, 700);
  ASSERT_OK(engine_->Evict(Tier::kDram, 16 * 4096).status());
  EXPECT_THAT(TiersOf(a[0]), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(a[1]), ElementsAre(Tier::kText));
  EXPECT_THAT(TiersOf(b[0]), ElementsAre(Tier::kSsd));
  EXPECT_THAT(TiersOf(b[1]), ElementsAre(Tier::kSsd));
  for (const radix::BlobKey& key : g) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kSsd));
  acme = quota_test::UsageOf(*engine_, "acme");
  EXPECT_EQ(acme.ssd_charged_bytes, 2u * 4096);
  EXPECT_EQ(acme.ssd_bytes, 2u * 4096);
  EXPECT_EQ(acme.quota_evictions, 2u);
  EXPECT_EQ(quota_test::UsageOf(*engine_, "globex").ssd_charged_bytes, 3u * 4096);
}

// The mover keeps a label under its quota's high watermark: at 10 of 10 extents it
// demotes the label's blobs (not others') down to the low watermark (85%) in the
// background, so the next puts do not have to evict synchronously.
TEST_F(TiersTest, TheMoverDemotesALabelAboveItsQuotasHighWatermark) {
  quotas_["acme"] = TenantQuota{.dram_bytes = 10 * 4096};
  background_demotion_ = true;
  Start(/*dram_blobs=*/64, /*ssd_blobs=*/64);
  const radix::Namespace globex = SmallNamespace("globex");
  const std::vector<radix::BlobKey> g = quota_test::PutRoots(*engine_, globex, 10, 700);
  quota_test::PutRoots(*engine_, ns_, 10, 800);
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  report::TenantUsage acme = quota_test::UsageOf(*engine_, "acme");
  while (acme.dram_charged_bytes > 8 * 4096 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
    acme = quota_test::UsageOf(*engine_, "acme");
  }
  EXPECT_LE(acme.dram_charged_bytes, 8u * 4096);
  EXPECT_EQ(acme.dram_charged_bytes + acme.ssd_charged_bytes, 10u * 4096);  // moved, not lost
  EXPECT_GE(acme.quota_evictions, 2u);
  EXPECT_GE(acme.ssd_charged_bytes, 2u * 4096);
  for (const radix::BlobKey& key : g) EXPECT_THAT(TiersOf(key), ElementsAre(Tier::kDram));
}

}  // namespace
}  // namespace strata::store::core
