// TierMover on its own: a BlobTable, a TierLedger and hand-made records over two small
// DRAM arenas (the second one stands in for the SSD tier behind a wrapper that checks the
// index lock is free during its I/O and can fail writes), and a stand-in for the engine's
// record life cycle (TierMover::Records).
#include "strata/store/core/tier_mover.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/memory_meta_store.h"
#include "strata/tiering/dram_arena.h"

namespace strata::store::core {
namespace {

constexpr uint64_t kGranule = 4096;

// The SSD stand-in: a DRAM arena whose batch I/O and Flush check that `mu` is free (no
// thread holds it) and whose writes fail with `write_error` when it is set.
class WatchedTier : public tiering::Tier {
 public:
  WatchedTier(tiering::DramArena* arena, absl::Mutex* mu) : arena_(arena), mu_(mu) {}

  report::Tier kind() const override { return report::Tier::kSsd; }
  uint64_t capacity() const override { return arena_->capacity(); }
  absl::StatusOr<tiering::Extent> Allocate(uint64_t bytes) override {
    return arena_->Allocate(bytes);
  }
  void Free(const tiering::Extent& extent) override { arena_->Free(extent); }
  absl::Status Write(const tiering::Extent& extent, uint64_t offset,
                     absl::Span<const std::byte> src) override {
    return arena_->Write(extent, offset, src);
  }
  absl::Status Read(const tiering::Extent& extent, uint64_t offset,
                    absl::Span<std::byte> dst) const override {
    return arena_->Read(extent, offset, dst);
  }
  void ReadBatch(std::vector<tiering::TierRead> reads, tiering::TierIoDone done) const override {
    CheckLockFree();
    arena_->ReadBatch(std::move(reads), std::move(done));
  }
  void WriteBatch(std::vector<tiering::TierWrite> writes, tiering::TierIoDone done) override {
    CheckLockFree();
    if (!write_error.ok()) {
      std::move(done)(std::vector<absl::Status>(writes.size(), write_error));
      return;
    }
    if (!first_write_error.ok() && !writes.empty()) {
      // The batch's first write fails; the others land.
      writes.erase(writes.begin());
      arena_->WriteBatch(std::move(writes),
                         [this, done = std::move(done)](std::vector<absl::Status> results) mutable {
                           results.insert(results.begin(), first_write_error);
                           std::move(done)(std::move(results));
                         });
      return;
    }
    arena_->WriteBatch(std::move(writes), std::move(done));
  }
  absl::Status Flush() override {
    CheckLockFree();
    return absl::OkStatus();
  }
  report::TierStats Stats() const override { return arena_->Stats(); }
  tiering::TierCounters& counters() override { return counters_; }

  absl::Status write_error;
  absl::Status first_write_error;  // fails only the first write of each batch
  mutable int io_calls = 0;
  mutable int io_under_lock = 0;

 private:
  void CheckLockFree() const {
    ++io_calls;
    if (mu_->TryLock()) {
      mu_->Unlock();
    } else {
      ++io_under_lock;
    }
  }

  tiering::DramArena* const arena_;
  absl::Mutex* const mu_;
  tiering::TierCounters counters_;
};

// The metadata store behind the journal: a MemoryMetaStore whose synced writes (the
// demotion's record) check that `mu` is free.
class WatchedStore : public meta::MetaStore {
 public:
  WatchedStore(std::shared_ptr<meta::MemoryMetaStore> store, absl::Mutex* mu)
      : store_(std::move(store)), mu_(mu) {}
  absl::Status Apply(const meta::MetaBatch& batch) override {
    if (batch.sync()) {
      ++synced_writes;
      if (mu_->TryLock()) {
        mu_->Unlock();
      } else {
        ++synced_under_lock;
      }
    }
    return store_->Apply(batch);
  }
  absl::StatusOr<meta::MetaLoadSummary> LoadAll(const meta::MetaLoadCallbacks& callbacks) override {
    return store_->LoadAll(callbacks);
  }
  absl::StatusOr<meta::BlobMeta> GetBlob(const radix::BlobKey& key) const override {
    return store_->GetBlob(key);
  }
  absl::StatusOr<radix::Namespace> GetNamespace(const radix::PrefixHash& hash) const override {
    return store_->GetNamespace(hash);
  }
  meta::MetaStoreStats Stats() const override { return store_->Stats(); }

  int synced_writes = 0;
  int synced_under_lock = 0;

 private:
  const std::shared_ptr<meta::MemoryMetaStore> store_;
  absl::Mutex* const mu_;
};

// The engine's side of the record life cycle, reduced to what the mover can observe:
// holds counted, index removal unlinks (refused for ids in `pinned_in_index`), release
// frees an unlinked record's bytes and erases it once no child needs it.
class FakeRecords : public TierMover::Records {
 public:
  FakeRecords(BlobTable* table, TierLedger* ledger, tiering::Tier* dram, tiering::Tier* ssd)
      : table_(table), ledger_(ledger), dram_(dram), ssd_(ssd) {}

  void HoldRecord(BlobRecord* record) override {
    ++record->holds;
    max_holds = std::max(max_holds, ++holds);
  }
  void UnholdRecord(BlobRecord* record) override {
    --record->holds;
    --holds;
  }
  uint64_t ReleaseRecord(BlobRecord* record) override {
    if (record->state != BlobState::kUnlinked || record->holds > 0 || record->leases > 0) {
      return 0;
    }
    uint64_t freed = 0;
    if (record->extent.has_value()) {
      freed = record->extent->length;
      dram_->Free(*std::exchange(record->extent, std::nullopt));
    }
    if (record->ssd_extent.has_value()) {
      ssd_->Free(*std::exchange(record->ssd_extent, std::nullopt));
    }
    if (record->children == 0) {
      const tiering::BlobId parent = record->parent_id;
      table_->Erase(record->id);
      if (parent != 0) --table_->Find(parent)->children;
    }
    return freed;
  }
  absl::Status RemoveFromIndex(BlobRecord* record, uint32_t from_page,
                               DeleteReply* reply) override {
    if (std::count(pinned_in_index.begin(), pinned_in_index.end(), record->id) > 0) {
      return absl::FailedPreconditionError("pinned by a match");
    }
    removed.push_back(record->id);
    reply->pages_removed += record->end_page() - from_page;
    ++reply->blobs_unlinked;
    record->pages_in_index = 0;
    ledger_->Unlinking(*record);
    table_->Unlink(record);
    ledger_->SyncText(record);
    ReleaseRecord(record);
    return absl::OkStatus();
  }

  uint64_t holds = 0;
  uint64_t max_holds = 0;
  std::vector<tiering::BlobId> removed;
  std::vector<tiering::BlobId> pinned_in_index;

 private:
  BlobTable* const table_;
  TierLedger* const ledger_;
  tiering::Tier* const dram_;
  tiering::Tier* const ssd_;
};

class TierMoverTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kPages = 2;  // 512 bytes: one granule per blob

  // Creates the mover; `granules` of DRAM, as many of SSD.
  void Make(uint64_t text_bytes, uint64_t granules = 8, double high = 0.95, double low = 0.85) {
    dram_ = testing::SmallArena("mover-dram", granules * kGranule);
    ssd_arena_ = testing::SmallArena("mover-ssd", granules * kGranule);
    ssd_ = std::make_unique<WatchedTier>(ssd_arena_.get(), &mu_);
    ledger_ = std::make_unique<TierLedger>(&table_, dram_.get(), ssd_.get(),
                                           testing::LruTierPolicies(), text_bytes);
    records_ = std::make_unique<FakeRecords>(&table_, ledger_.get(), dram_.get(), ssd_.get());
    mover_ = std::make_unique<TierMover>(
        TierMoverOptions{
            .dram_high_watermark = high, .dram_low_watermark = low, .text_bytes = text_bytes},
        TierMover::Deps{.table = &table_,
                        .ledger = ledger_.get(),
                        .journal = &journal_,
                        .dram = dram_.get(),
                        .ssd = ssd_.get(),
                        .records = records_.get(),
                        .index_mu = &mu_,
                        .lock_hold = nullptr});
  }

  // A linked record of content `seed` with its bytes in DRAM (and on SSD if `on_ssd`;
  // there only if !in_dram).
  BlobRecord* Linked(tiering::BlobId id, tiering::BlobId parent_id = 0, bool in_dram = true,
                     bool on_ssd = false) {
    const testing::BlobContent content = testing::MakeBlob(ns_, kPages, id);
    auto r = std::make_unique<BlobRecord>();
    r->id = id;
    r->key = radix::BlobKey{radix::PrefixHash{id, 7}};
    r->ns = &ns_;
    r->namespace_hash = radix::NamespaceHash(ns_);
    r->parent_id = parent_id;
    r->root_id = parent_id == 0 ? id : parent_id;
    r->first_page = parent_id == 0 ? 0 : kPages;
    r->pages = kPages;
    r->bytes = content.bytes.size();
    r->tokens = content.tokens;
    r->checksums = content.checksums;
    BlobRecord* record = table_.Add(std::move(r));
    table_.Link(record);
    record->state = BlobState::kLinked;
    record->pages_in_index = kPages;
    if (parent_id != 0) ++table_.Find(parent_id)->children;
    if (in_dram) {
      const tiering::Extent extent = dram_->Allocate(record->bytes).value();
      std::copy(content.bytes.begin(), content.bytes.end(), dram_->Data(extent).begin());
      ledger_->Charge(TierLedger::LabelOf(*record), Tier::kDram, extent.length);
      ledger_->AttachDram(record, extent);
    }
    if (on_ssd) {
      const tiering::Extent extent = ssd_arena_->Allocate(record->bytes).value();
      std::copy(content.bytes.begin(), content.bytes.end(), ssd_arena_->Data(extent).begin());
      ledger_->Charge(TierLedger::LabelOf(*record), Tier::kSsd, extent.length);
      ledger_->AttachSsd(record, extent);
    }
    if (!in_dram && !on_ssd) ledger_->SyncText(record);
    return record;
  }

  // Links blob 1 (in DRAM only), then moves a granule out of DRAM without holding the
  // lock (MoveOutOfDram takes it) and expects `freed` bytes freed.
  BlobRecord* LinkAndMoveOut(EvictReply* reply, uint64_t freed) {
    BlobRecord* blob;
    {
      absl::MutexLock lock(&mu_);
      blob = Linked(1);
    }
    EXPECT_EQ(mover_->MoveOutOfDram(mu_, kGranule, reply), freed);
    return blob;
  }

  static bool Holds(absl::Span<const std::byte> bytes, tiering::BlobId id) {
    const std::vector<std::byte> want =
        testing::MakeBlob(testing::SmallNamespace(), kPages, id).bytes;
    return std::equal(want.begin(), want.end(), bytes.begin());
  }

  absl::Mutex mu_;
  const radix::Namespace ns_ = testing::SmallNamespace();
  BlobTable table_;
  std::shared_ptr<meta::MemoryMetaStore> store_ = std::make_shared<meta::MemoryMetaStore>();
  std::shared_ptr<WatchedStore> watched_store_ = std::make_shared<WatchedStore>(store_, &mu_);
  MetaJournal journal_{watched_store_};
  std::unique_ptr<tiering::DramArena> dram_;
  std::unique_ptr<tiering::DramArena> ssd_arena_;
  std::unique_ptr<WatchedTier> ssd_;
  std::unique_ptr<TierLedger> ledger_;
  std::unique_ptr<FakeRecords> records_;
  std::unique_ptr<TierMover> mover_;  // last: stopped before what it borrows goes
};

TEST_F(TierMoverTest, FreeDramDropsSsdCopiesFirstAndLeavesLeafFirst) {
  Make(/*text_bytes=*/1 << 20);
  absl::MutexLock lock(&mu_);
  BlobRecord* parent = Linked(1);
  BlobRecord* child = Linked(2, /*parent_id=*/1);
  BlobRecord* both = Linked(3, 0, /*in_dram=*/true, /*on_ssd=*/true);
  BlobRecord* leased = Linked(4);
  leased->leases = 1;
  EvictReply reply;
  EXPECT_EQ(mover_->FreeDram(mu_, 1 << 20, &reply), 3 * kGranule);
  EXPECT_TRUE(leased->in_dram());  // leased bytes never go
  EXPECT_FALSE(both->in_dram());
  EXPECT_TRUE(both->on_ssd());  // only its DRAM copy went
  EXPECT_TRUE(child->text_tracked);
  EXPECT_TRUE(parent->text_tracked);  // after its child: leaf-first
  EXPECT_EQ(reply.blobs_dropped, 2u);
  EXPECT_EQ(reply.bytes_freed, 3 * kGranule);
  EXPECT_EQ(dram_->Stats().used_bytes, kGranule);
  EXPECT_EQ(dram_->counters().Snapshot().evictions, 3u);
  EXPECT_TRUE(records_->removed.empty());  // a TEXT tier: nothing leaves the index
}

TEST_F(TierMoverTest, AllocateEvictsUnderPressureAndFailsWhenEverythingIsHeld) {
  Make(/*text_bytes=*/0, /*granules=*/4);  // no TEXT tier: dropped blobs leave the index
  absl::MutexLock lock(&mu_);
  std::vector<BlobRecord*> blobs;
  for (tiering::BlobId id = 1; id <= 4; ++id) {
    blobs.push_back(Linked(id));
    blobs.back()->leases = 1;
  }
  const absl::StatusOr<tiering::Extent> full = mover_->Allocate(mu_, kGranule, "");
  EXPECT_TRUE(absl::IsResourceExhausted(full.status())) << full.status();
  blobs[2]->leases = 0;
  const absl::StatusOr<tiering::Extent> extent = mover_->Allocate(mu_, kGranule, "");
  ASSERT_TRUE(extent.ok()) << extent.status();
  EXPECT_EQ(records_->removed, std::vector<tiering::BlobId>{3});  // out of the index
  EXPECT_EQ(table_.Find(3), nullptr);                             // and released
  EXPECT_EQ(dram_->Stats().used_bytes, 4 * kGranule);
  EXPECT_EQ(ledger_->charged("", Tier::kDram), kGranule);  // charged to the label given
  dram_->Free(*extent);
}

TEST_F(TierMoverTest, DemotionWritesTheBytesToSsdWithoutTheLock) {
  Make(/*text_bytes=*/1 << 20);
  EvictReply reply;
  BlobRecord* blob = LinkAndMoveOut(&reply, /*freed=*/kGranule);
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(reply.blobs_demoted, 1u);
  EXPECT_EQ(reply.demotions_failed, 0u);
  EXPECT_FALSE(blob->in_dram());
  ASSERT_TRUE(blob->on_ssd());
  EXPECT_TRUE(Holds(ssd_arena_->Data(*blob->ssd_extent), 1));
  EXPECT_FALSE(blob->moving);
  EXPECT_EQ(records_->max_holds, 1u);  // held during the I/O
  EXPECT_EQ(records_->holds, 0u);
  EXPECT_EQ(blob->holds, 0u);
  EXPECT_GE(ssd_->io_calls, 2);  // the write batch and the flush
  EXPECT_EQ(ssd_->io_under_lock, 0);
  EXPECT_EQ(dram_->counters().Snapshot().demotions, 1u);
  EXPECT_EQ(dram_->Stats().used_bytes, 0u);
  // Its SSD extent is in the metadata store (written synced, without the lock, before it
  // showed on SSD).
  EXPECT_EQ(watched_store_->synced_writes, 1);
  EXPECT_EQ(watched_store_->synced_under_lock, 0);
  const absl::StatusOr<meta::BlobMeta> stored = store_->GetBlob(blob->key);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(stored->ssd.has_value());
  EXPECT_EQ(stored->ssd->offset, blob->ssd_extent->offset);
}

TEST_F(TierMoverTest, ADemotionWhoseRecordIsNotWrittenDoesNotCount) {
  Make(/*text_bytes=*/1 << 20);
  store_->FailNextApplies(absl::UnavailableError("store down"));
  EvictReply reply;
  BlobRecord* blob = LinkAndMoveOut(&reply, /*freed=*/0);
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(reply.blobs_demoted, 0u);
  EXPECT_TRUE(blob->in_dram());
  EXPECT_FALSE(blob->on_ssd());  // as if never written
  EXPECT_EQ(ssd_arena_->Stats().used_bytes, 0u);
  EXPECT_EQ(dram_->counters().Snapshot().demotions, 0u);
}

// A blob whose demotion failed is not tried again in the same call, so it is counted once
// (a second round for the rest used to pick it, and count it, again).
TEST_F(TierMoverTest, AFailedDemotionIsCountedOncePerCall) {
  Make(/*text_bytes=*/1 << 20);
  ssd_->first_write_error = absl::DataLossError("EIO");
  {
    absl::MutexLock lock(&mu_);
    for (tiering::BlobId id = 1; id <= 3; ++id) Linked(id);
  }
  EvictReply reply;
  mover_->MoveOutOfDram(mu_, 3 * kGranule, &reply);
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(reply.demotions_failed, 1u);
  EXPECT_EQ(reply.blobs_demoted, 2u);
  EXPECT_TRUE(absl::IsDataLoss(reply.first_failure)) << reply.first_failure;
  EXPECT_EQ(records_->holds, 0u);
}

TEST_F(TierMoverTest, FailedDemotionLeavesTheBlobInDram) {
  Make(/*text_bytes=*/1 << 20);
  ssd_->write_error = absl::DataLossError("EIO");
  EvictReply reply;
  BlobRecord* blob = LinkAndMoveOut(&reply, /*freed=*/0);
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(reply.demotions_failed, 1u);
  EXPECT_TRUE(absl::IsDataLoss(reply.first_failure)) << reply.first_failure;
  EXPECT_TRUE(blob->in_dram());
  EXPECT_FALSE(blob->on_ssd());
  EXPECT_EQ(ssd_arena_->Stats().used_bytes, 0u);  // its SSD extent was given back
  EXPECT_EQ(records_->holds, 0u);
}

TEST_F(TierMoverTest, PromotionVerifiesEveryChunkAndDropsACorruptCopy) {
  Make(/*text_bytes=*/1 << 20);
  absl::MutexLock lock(&mu_);
  BlobRecord* good = Linked(1, 0, /*in_dram=*/false, /*on_ssd=*/true);
  BlobRecord* bad = Linked(2, 0, /*in_dram=*/false, /*on_ssd=*/true);
  ssd_arena_->Data(*bad->ssd_extent)[300] ^= std::byte{1};  // chunk 2 of 4
  const absl::Status status = mover_->Promote(mu_, {good, bad});
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  ASSERT_TRUE(good->in_dram());
  EXPECT_TRUE(Holds(dram_->Data(*good->extent), 1));
  EXPECT_TRUE(good->on_ssd());  // the copy stays
  EXPECT_FALSE(bad->has_bytes());
  EXPECT_TRUE(bad->text_tracked);
  EXPECT_EQ(dram_->counters().Snapshot().promotions, 1u);
  EXPECT_EQ(dram_->Stats().used_bytes, kGranule);  // the bad one's target was freed
  EXPECT_EQ(ssd_->io_under_lock, 0);
  EXPECT_EQ(records_->holds, 0u);
  EXPECT_FALSE(good->moving || bad->moving);
}

TEST_F(TierMoverTest, PromoteForReadResolvesAgainAfterEachRoundUntilAllAreInDram) {
  Make(/*text_bytes=*/1 << 20);
  absl::MutexLock lock(&mu_);
  BlobRecord* on_ssd = Linked(1, 0, /*in_dram=*/false, /*on_ssd=*/true);
  BlobRecord* in_dram = Linked(2);
  int rounds = 0;
  std::vector<BlobRecord*> records;
  const absl::Status status = mover_->PromoteForRead(
      mu_,
      [&](std::vector<BlobRecord*>* resolved) {
        ++rounds;
        resolved->assign({on_ssd, in_dram, on_ssd});  // a blob named twice is promoted once
        return absl::OkStatus();
      },
      &records);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(rounds, 2);  // resolved again after the promotion dropped the lock
  ASSERT_EQ(records.size(), 3u);
  ASSERT_TRUE(on_ssd->in_dram());
  EXPECT_TRUE(Holds(dram_->Data(*on_ssd->extent), 1));
  EXPECT_FALSE(on_ssd->transient_dram);  // admission "always" keeps the copy
  EXPECT_EQ(ssd_->counters().Snapshot().hits, 1u);
  EXPECT_EQ(dram_->counters().Snapshot().promotions, 1u);
  EXPECT_EQ(ssd_->io_under_lock, 0);
  // resolve's error is the call's, and nothing is promoted.
  std::vector<BlobRecord*> none;
  EXPECT_TRUE(absl::IsNotFound(mover_->PromoteForRead(
      mu_, [](std::vector<BlobRecord*>*) { return absl::NotFoundError("gone"); }, &none)));
}

TEST_F(TierMoverTest, EvictTakesTheLockAndRunsTheTiersMove) {
  Make(/*text_bytes=*/1 << 20);
  BlobRecord* both;
  {
    absl::MutexLock lock(&mu_);
    both = Linked(1, 0, /*in_dram=*/true, /*on_ssd=*/true);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(mover_->Evict(mu_, Tier::kHbm, 1).status()));
  const absl::StatusOr<EvictReply> ssd = mover_->Evict(mu_, Tier::kSsd, kGranule);
  ASSERT_TRUE(ssd.ok()) << ssd.status();
  absl::MutexLock lock(&mu_);
  EXPECT_FALSE(both->on_ssd());  // its SSD copy went, its DRAM copy stays
  EXPECT_TRUE(both->in_dram());
  EXPECT_EQ(ssd_arena_->Stats().used_bytes, 0u);
}

TEST_F(TierMoverTest, EvictTextDeletesLeavesFirstAndKeepsWhatTheIndexHolds) {
  Make(/*text_bytes=*/1 << 20);
  absl::MutexLock lock(&mu_);
  Linked(1, 0, /*in_dram=*/false);
  Linked(2, /*parent_id=*/1, /*in_dram=*/false);
  Linked(3, 0, /*in_dram=*/false);
  records_->pinned_in_index = {3};
  EXPECT_EQ(ledger_->text().blobs, 3u);
  EvictReply reply;
  mover_->EvictText(mu_, 1 << 20, &reply);
  EXPECT_EQ(records_->removed, (std::vector<tiering::BlobId>{2, 1}));  // the child first
  EXPECT_EQ(ledger_->text().blobs, 1u);                                // 3: held by a match
  EXPECT_EQ(ledger_->text().deletions, 2u);
  EXPECT_EQ(reply.blobs_unlinked, 2u);
}

TEST_F(TierMoverTest, TheThreadKeepsDramBetweenTheWatermarks) {
  Make(/*text_bytes=*/1 << 20, /*granules=*/16, /*high=*/0.5, /*low=*/0.25);
  mover_->Start();
  {
    absl::MutexLock lock(&mu_);
    for (tiering::BlobId id = 1; id <= 10; ++id) Linked(id);  // 10 of 16 granules
    EXPECT_TRUE(mover_->AbovePressure(mu_));
    mover_->SignalIfAbovePressure(mu_);
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  uint64_t used = 0;
  while (absl::Now() < deadline) {
    {
      absl::MutexLock lock(&mu_);
      used = dram_->Stats().used_bytes;
    }
    if (used <= 4 * kGranule) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  mover_->Stop();
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(used, 4 * kGranule);  // down to the low watermark, and no further
  EXPECT_FALSE(mover_->AbovePressure(mu_));
  EXPECT_EQ(dram_->counters().Snapshot().demotions, 6u);
  EXPECT_EQ(ssd_arena_->Stats().used_bytes, 6 * kGranule);
  EXPECT_EQ(ssd_->io_under_lock, 0);
}

}  // namespace
}  // namespace strata::store::core
