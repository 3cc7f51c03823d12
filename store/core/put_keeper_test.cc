// PutKeeper on its own: puts begun, found, aborted and committed over a BlobTable, a
// PutTable, a TierLedger and a TierMover on a small DRAM arena, a real radix tree, and
// the RecordKeeper (no SSD tier).
#include "strata/store/core/put_keeper.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/memory_meta_store.h"

namespace strata::store::core {
namespace {

constexpr uint64_t kGranule = 4096;

class PutKeeperTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kPages = 2;

  // A NewPut of blob `seed` at page 0; `content` keeps what its request points at.
  NewPut Prepare(uint64_t seed, testing::BlobContent* content, PutRequest* request) {
    *content = testing::MakeBlob(ns_, kPages, seed);
    request->tokens = content->tokens;
    request->bytes = content->bytes.size();
    request->checksums = content->checksums;
    NewPut put;
    put.ns = &ns_;
    put.namespace_hash = radix::NamespaceHash(ns_);
    put.request = request;
    put.start_hash = put.namespace_hash;
    put.key = radix::BlobKey{radix::PrefixHashAt(put.start_hash, content->tokens, 4)};
    put.pages = kPages;
    put.sequence = content->tokens;
    put.now = absl::UnixEpoch() + absl::Seconds(10);
    return put;
  }
  absl::StatusOr<BeginPutReply> Begin(NewPut put) {
    return put_keeper_.Begin(mu_, std::move(put), [this] { return ++next_id_; });
  }

  absl::Mutex mu_;
  const radix::Namespace ns_ = testing::SmallNamespace();
  NamespaceRegistry registry_;
  BlobTable table_;
  PutTable puts_{absl::Seconds(5)};
  std::unique_ptr<tiering::DramArena> dram_ = testing::SmallArena("put-keeper", 2 * kGranule);
  TierLedger ledger_{&table_, dram_.get(), nullptr, testing::LruTierPolicies(), 1 << 20};
  std::shared_ptr<meta::MemoryMetaStore> store_ = std::make_shared<meta::MemoryMetaStore>();
  MetaJournal journal_{store_};
  RebuildQueue rebuild_{RebuildQueueOptions{}};
  RecordKeeper keeper_{RecordKeeper::Deps{.table = &table_,
                                          .ledger = &ledger_,
                                          .journal = &journal_,
                                          .rebuild = &rebuild_,
                                          .dram = dram_.get(),
                                          .ssd = nullptr,
                                          .index_mu = &mu_}};
  TierMover mover_{TierMoverOptions{.text_bytes = 1 << 20}, TierMover::Deps{.table = &table_,
                                                                            .ledger = &ledger_,
                                                                            .journal = &journal_,
                                                                            .dram = dram_.get(),
                                                                            .ssd = nullptr,
                                                                            .records = &keeper_,
                                                                            .index_mu = &mu_,
                                                                            .lock_hold = nullptr}};
  PutKeeper put_keeper_{PutKeeper::Deps{.registry = &registry_,
                                        .table = &table_,
                                        .puts = &puts_,
                                        .ledger = &ledger_,
                                        .journal = &journal_,
                                        .keeper = &keeper_,
                                        .rebuild = &rebuild_,
                                        .mover = &mover_,
                                        .dram = dram_.get(),
                                        .index_mu = &mu_}};
  tiering::BlobId next_id_ = 0;
};

TEST_F(PutKeeperTest, BeginAddsAPendingRecordAndCommitLinksItIntoTheIndex) {
  testing::BlobContent content;
  PutRequest request;
  NewPut put = Prepare(1, &content, &request);
  const radix::BlobKey key = put.key;
  absl::MutexLock lock(&mu_);
  ASSERT_OK_AND_ASSIGN(const BeginPutReply begun, Begin(std::move(put)));
  EXPECT_EQ(begun.key, key);
  EXPECT_EQ(begun.deadline, absl::UnixEpoch() + absl::Seconds(15));
  ASSERT_OK_AND_ASSIGN(PendingPut * pending,
                       put_keeper_.Find(mu_, begun.put_id, absl::UnixEpoch()));
  EXPECT_EQ(pending->record->state, BlobState::kPending);
  EXPECT_TRUE(puts_.Filling(key));
  EXPECT_EQ(dram_->Stats().used_bytes, kGranule);
  EXPECT_EQ(table_.FindLinked(key), nullptr);  // invisible until committed

  ASSERT_OK_AND_ASSIGN(const CommitPutReply committed,
                       put_keeper_.Commit(mu_, begun.put_id, absl::UnixEpoch()));
  EXPECT_EQ(committed.indexed_pages, kPages);
  const BlobRecord* linked = table_.FindLinked(key);
  ASSERT_NE(linked, nullptr);
  EXPECT_TRUE(linked->in_dram());
  EXPECT_EQ(linked->pages_in_index, kPages);
  EXPECT_EQ(puts_.size(), 0u);
  EXPECT_TRUE(journal_.pending());  // its record is queued for the store
  const NamespaceEntry* entry = registry_.Find(radix::NamespaceHash(ns_));
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->tree->Match(radix::NamespaceHash(ns_), content.tokens, false).matched_pages,
            kPages);
}

TEST_F(PutKeeperTest, AnExpiredPutIsAbortedWhenFoundAndItsBytesFreed) {
  testing::BlobContent content;
  PutRequest request;
  absl::MutexLock lock(&mu_);
  ASSERT_OK_AND_ASSIGN(const BeginPutReply begun, Begin(Prepare(1, &content, &request)));
  const absl::StatusOr<PendingPut*> found =
      put_keeper_.Find(mu_, begun.put_id, absl::UnixEpoch() + absl::Seconds(15));
  EXPECT_TRUE(absl::IsNotFound(found.status())) << found.status();
  EXPECT_EQ(puts_.size(), 0u);
  EXPECT_EQ(table_.Find(begun.put_id), nullptr);
  EXPECT_EQ(dram_->Stats().used_bytes, 0u);
  EXPECT_TRUE(absl::IsNotFound(put_keeper_.Find(mu_, begun.put_id, absl::UnixEpoch()).status()));
}

TEST_F(PutKeeperTest, ACommitOntoATextBlobRefillsItOnlyWithTheOriginalBytes) {
  testing::BlobContent content;
  PutRequest request;
  absl::MutexLock lock(&mu_);
  ASSERT_OK_AND_ASSIGN(const BeginPutReply first, Begin(Prepare(1, &content, &request)));
  ASSERT_OK(put_keeper_.Commit(mu_, first.put_id, absl::UnixEpoch()).status());
  BlobRecord* text = table_.FindLinked(first.key);
  EvictReply dropped;
  mover_.DropToText(mu_, text, &dropped);
  ASSERT_FALSE(text->has_bytes());

  // Other bytes than the original's: refused, the blob stays TEXT.
  testing::BlobContent other;
  PutRequest other_request;
  NewPut wrong = Prepare(1, &other, &other_request);
  std::vector<uint64_t> bad = other.checksums;
  bad[1] ^= 1;
  other_request.checksums = bad;
  ASSERT_OK_AND_ASSIGN(const BeginPutReply refused, Begin(std::move(wrong)));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      put_keeper_.Commit(mu_, refused.put_id, absl::UnixEpoch()).status()));
  EXPECT_FALSE(text->has_bytes());
  EXPECT_EQ(dram_->Stats().used_bytes, 0u);

  testing::BlobContent again;
  PutRequest again_request;
  ASSERT_OK_AND_ASSIGN(const BeginPutReply refill, Begin(Prepare(1, &again, &again_request)));
  ASSERT_OK_AND_ASSIGN(const CommitPutReply refilled,
                       put_keeper_.Commit(mu_, refill.put_id, absl::UnixEpoch()));
  EXPECT_EQ(refilled.indexed_pages, kPages);
  EXPECT_EQ(table_.FindLinked(first.key), text);  // the same record, its bytes back
  EXPECT_TRUE(text->in_dram());
  EXPECT_FALSE(text->text_tracked);
  EXPECT_EQ(puts_.size(), 0u);
}

TEST_F(PutKeeperTest, BeginFailsWhenNothingMayBeEvictedAndGivesTheParentBack) {
  testing::BlobContent a, b, c;
  PutRequest ra, rb, rc;
  absl::MutexLock lock(&mu_);
  ASSERT_OK_AND_ASSIGN(const BeginPutReply pa, Begin(Prepare(1, &a, &ra)));
  ASSERT_OK(put_keeper_.Commit(mu_, pa.put_id, absl::UnixEpoch()).status());
  BlobRecord* parent = table_.FindLinked(pa.key);
  parent->leases = 1;                              // may not be evicted
  ASSERT_OK(Begin(Prepare(2, &b, &rb)).status());  // the second granule, pending
  NewPut child = Prepare(3, &c, &rc);
  child.parent = parent;
  ++parent->children;  // as the engine does before Begin
  EXPECT_TRUE(absl::IsResourceExhausted(Begin(std::move(child)).status()));
  EXPECT_EQ(parent->children, 0u);
  EXPECT_EQ(puts_.size(), 1u);
}

}  // namespace
}  // namespace strata::store::core
