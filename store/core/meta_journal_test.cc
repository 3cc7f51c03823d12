// MetaJournal on its own, over the in-memory meta store.
#include "strata/store/core/meta_journal.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/meta/memory_meta_store.h"

namespace strata::store::core {
namespace {

using testing::kPageTokens;

class MetaJournalTest : public ::testing::Test {
 protected:
  // A consistent linked record of `pages` pages, continuing `parent` (all its pages) if set.
  BlobRecord* Linked(uint32_t pages, uint32_t seed, const BlobRecord* parent = nullptr,
                     const radix::Namespace* ns = nullptr) {
    if (ns == nullptr) ns = &ns_;
    auto r = std::make_unique<BlobRecord>();
    r->id = ++next_id_;
    r->ns = ns;
    r->namespace_hash = radix::NamespaceHash(*ns);
    r->start_hash = r->namespace_hash;
    if (parent != nullptr) {
      r->parent = BlobParent{parent->key, parent->end_page()};
      r->parent_id = parent->id;
      r->first_page = parent->end_page();
      r->start_hash = radix::PrefixHashAt(parent->start_hash, parent->tokens, kPageTokens);
    }
    r->pages = pages;
    r->bytes = pages * ns->layout().BytesPerPage();
    r->tokens.resize(size_t{pages} * kPageTokens);
    for (size_t i = 0; i < r->tokens.size(); ++i) {
      r->tokens[i] = static_cast<radix::TokenId>(seed * 131 + i);
    }
    r->checksums.assign(size_t{pages} * ns->layout().num_layers, seed);
    r->key = radix::BlobKey{radix::PrefixHashAt(r->start_hash, r->tokens, kPageTokens)};
    r->ssd_extent = tiering::Extent{4096 * seed, 4096};
    r->hits = seed;
    BlobRecord* record = table_.Add(std::move(r));
    table_.Link(record);
    record->state = BlobState::kLinked;
    return record;
  }
  static int NamespaceOps(const meta::MetaBatch& batch) {
    int n = 0;
    for (const meta::MetaBatch::Op& op : batch.ops()) {
      n += op.kind == meta::MetaBatch::OpKind::kPutNamespace;
    }
    return n;
  }

  const radix::Namespace ns_ = testing::SmallNamespace("t", "m", kPageTokens);
  std::shared_ptr<meta::MemoryMetaStore> store_ = std::make_shared<meta::MemoryMetaStore>();
  BlobTable table_;
  tiering::BlobId next_id_ = 0;
};

TEST_F(MetaJournalTest, PersistWritesTheRecordAndItsNamespaceOnce) {
  MetaJournal journal(store_);
  EXPECT_TRUE(journal.enabled());
  BlobRecord* a = Linked(2, 1);
  BlobRecord* b = Linked(1, 2, a);
  journal.Persist(*a);
  journal.Persist(*b);
  journal.Flush();
  ASSERT_OK_AND_ASSIGN(const meta::BlobMeta stored, store_->GetBlob(b->key));
  EXPECT_EQ(stored.key, b->key);
  EXPECT_EQ(stored.first_page, 2u);
  ASSERT_TRUE(stored.parent.has_value());
  EXPECT_EQ(stored.parent->key, a->key);
  ASSERT_TRUE(stored.ssd.has_value());
  EXPECT_EQ(stored.ssd->offset, 4096u * 2);
  EXPECT_EQ(stored.hits, 2u);
  EXPECT_EQ(store_->Stats().namespaces, 1u);
  // The namespace is stored: a further batch does not carry it.
  meta::MetaBatch batch(/*sync=*/false);
  journal.Add(*a, &batch);
  EXPECT_EQ(NamespaceOps(batch), 0);
  EXPECT_EQ(batch.size(), 1u);

  // Only linked records are written; Forget deletes.
  BlobRecord* pending = Linked(1, 3);
  pending->state = BlobState::kPending;
  journal.Persist(*pending);
  EXPECT_FALSE(journal.pending());  // nothing queued
  journal.Forget(a->key);
  journal.Flush();
  EXPECT_FALSE(store_->GetBlob(pending->key).ok());
  EXPECT_FALSE(store_->GetBlob(a->key).ok());
  EXPECT_EQ(journal.errors(), 0u);
}

TEST_F(MetaJournalTest, AFailedWriteIsCountedAndItsNamespaceWrittenAgain) {
  MetaJournal journal(store_);
  BlobRecord* a = Linked(1, 1);
  store_->FailNextApplies(absl::UnavailableError("disk gone"));
  journal.Persist(*a);
  journal.Flush();  // fails: logged and counted
  EXPECT_EQ(journal.errors(), 1u);
  EXPECT_FALSE(store_->GetBlob(a->key).ok());
  meta::MetaBatch batch(/*sync=*/true);
  journal.Add(*a, &batch);
  EXPECT_EQ(NamespaceOps(batch), 1);  // not stored after all
  ASSERT_OK(journal.Apply(batch));
  ASSERT_OK(store_->GetNamespace(a->namespace_hash).status());
  EXPECT_EQ(store_->Stats().synced_applies, 1u);
}

TEST_F(MetaJournalTest, WithoutAStoreNothingIsWrittenOrLoaded) {
  MetaJournal journal(nullptr);
  EXPECT_FALSE(journal.enabled());
  journal.Persist(*Linked(1, 1));
  meta::MetaBatch batch(/*sync=*/false);
  batch.DeleteBlob(radix::BlobKey{});
  EXPECT_OK(journal.Apply(batch));
  ASSERT_OK_AND_ASSIGN(const MetaJournal::Loaded loaded, journal.Load());
  EXPECT_TRUE(loaded.blobs.empty());
  EXPECT_EQ(journal.errors(), 0u);
}

TEST_F(MetaJournalTest, LoadPutsParentsFirstAndKnowsTheNamespaces) {
  {
    MetaJournal writer(store_);
    BlobRecord* a = Linked(2, 1);
    BlobRecord* b = Linked(2, 2, a);
    BlobRecord* c = Linked(1, 3, b);
    // Children first, so the store's key order is the only order.
    for (const BlobRecord* r : {c, b, a}) writer.Persist(*r);
    writer.Flush();
  }
  MetaJournal journal(store_);
  ASSERT_OK_AND_ASSIGN(const MetaJournal::Loaded loaded, journal.Load());
  ASSERT_EQ(loaded.blobs.size(), 3u);
  EXPECT_EQ(loaded.blobs[0].first_page, 0u);
  EXPECT_EQ(loaded.blobs[1].first_page, 2u);
  EXPECT_EQ(loaded.blobs[2].first_page, 4u);
  EXPECT_EQ(loaded.namespaces.size(), 1u);
  EXPECT_EQ(loaded.corrupt, 0u);
  meta::MetaBatch batch(/*sync=*/false);
  journal.Add(*table_.Find(1), &batch);
  EXPECT_EQ(NamespaceOps(batch), 0);  // loaded namespaces count as stored
}

TEST_F(MetaJournalTest, CheckRestoredAcceptsConsistentRecordsOnly) {
  BlobTable restored;  // what is restored so far: nothing
  BlobRecord* a = Linked(2, 1);
  BlobRecord* b = Linked(1, 2, a);
  BlobRecord* parent = a;
  // A root is fine on its own.
  EXPECT_OK(MetaJournal::CheckRestored(MetaJournal::MetaOf(*a), ns_, restored, &parent));
  EXPECT_EQ(parent, nullptr);
  // A child needs its parent restored first...
  EXPECT_CODE(MetaJournal::CheckRestored(MetaJournal::MetaOf(*b), ns_, restored, &parent),
              absl::StatusCode::kFailedPrecondition);
  // ... which table_ has.
  EXPECT_OK(MetaJournal::CheckRestored(MetaJournal::MetaOf(*b), ns_, table_, &parent));
  EXPECT_EQ(parent, a);

  meta::BlobMeta bad_key = MetaJournal::MetaOf(*b);
  bad_key.tokens[0] ^= 1;
  EXPECT_CODE(MetaJournal::CheckRestored(bad_key, ns_, table_, &parent),
              absl::StatusCode::kDataLoss);
  meta::BlobMeta bad_size = MetaJournal::MetaOf(*a);
  bad_size.bytes += 1;
  EXPECT_CODE(MetaJournal::CheckRestored(bad_size, ns_, table_, &parent),
              absl::StatusCode::kDataLoss);
  meta::BlobMeta no_parent = MetaJournal::MetaOf(*b);
  no_parent.parent.reset();
  EXPECT_CODE(MetaJournal::CheckRestored(no_parent, ns_, table_, &parent),
              absl::StatusCode::kDataLoss);
  // The same record marked as a segment's first blob stands on its own: its start hash is
  // the client's, and its key follows from it.
  meta::BlobMeta segment = no_parent;
  segment.segment_start = true;
  EXPECT_OK(MetaJournal::CheckRestored(segment, ns_, restored, &parent));
  EXPECT_EQ(parent, nullptr);
  segment.tokens[0] ^= 1;
  EXPECT_CODE(MetaJournal::CheckRestored(segment, ns_, restored, &parent),
              absl::StatusCode::kDataLoss);
  meta::BlobMeta segment_with_parent = MetaJournal::MetaOf(*b);
  segment_with_parent.segment_start = true;
  EXPECT_CODE(MetaJournal::CheckRestored(segment_with_parent, ns_, table_, &parent),
              absl::StatusCode::kDataLoss);
  meta::BlobMeta segment_at_zero = MetaJournal::MetaOf(*a);
  segment_at_zero.segment_start = true;
  EXPECT_CODE(MetaJournal::CheckRestored(segment_at_zero, ns_, table_, &parent),
              absl::StatusCode::kDataLoss);
  meta::BlobMeta bad_start = MetaJournal::MetaOf(*a);
  bad_start.start_hash.lo ^= 1;
  EXPECT_CODE(MetaJournal::CheckRestored(bad_start, ns_, table_, &parent),
              absl::StatusCode::kDataLoss);
  // A parent of another namespace is not this blob's parent.
  const radix::Namespace other = testing::SmallNamespace("t", "other", kPageTokens);
  BlobRecord* foreign = Linked(2, 5, nullptr, &other);
  meta::BlobMeta cross = MetaJournal::MetaOf(*b);
  cross.parent->key = foreign->key;
  EXPECT_CODE(MetaJournal::CheckRestored(cross, ns_, table_, &parent),
              absl::StatusCode::kFailedPrecondition);
}

TEST_F(MetaJournalTest, PersistAndForgetAreQueuedUntilFlushInOrder) {
  MetaJournal journal(store_);
  BlobRecord* a = Linked(1, 1);
  BlobRecord* b = Linked(1, 2);
  journal.Persist(*a);
  journal.Persist(*b);
  journal.Forget(a->key);
  EXPECT_TRUE(journal.pending());
  EXPECT_FALSE(store_->GetBlob(b->key).ok());  // nothing written yet
  journal.Flush();
  EXPECT_FALSE(journal.pending());
  EXPECT_FALSE(store_->GetBlob(a->key).ok());  // put, then deleted: in order
  EXPECT_TRUE(store_->GetBlob(b->key).ok());
  // Apply writes what was queued before its own batch.
  journal.Forget(b->key);
  meta::MetaBatch batch(/*sync=*/true);
  journal.Add(*b, &batch);
  ASSERT_OK(journal.Apply(batch));
  EXPECT_FALSE(journal.pending());
  EXPECT_TRUE(store_->GetBlob(b->key).ok());  // deleted, then put again
  // FlushOnExit flushes at the end of its scope.
  {
    const MetaJournal::FlushOnExit flush(&journal);
    journal.Forget(b->key);
  }
  EXPECT_FALSE(store_->GetBlob(b->key).ok());
}

TEST_F(MetaJournalTest, ConcurrentQueuesAndFlushesKeepEachWritersOrder) {
  MetaJournal journal(store_);
  std::vector<BlobRecord*> records;
  for (uint32_t i = 0; i < 4; ++i) records.push_back(Linked(1, 10 + i));
  std::vector<std::thread> threads;
  for (BlobRecord* r : records) {
    threads.emplace_back([&journal, r] {
      for (int i = 0; i < 50; ++i) {
        journal.Persist(*r);
        journal.Flush();
        journal.Forget(r->key);
        if (i % 3 == 0) journal.Flush();
      }
      journal.Persist(*r);  // last: present
      journal.Flush();
    });
  }
  for (std::thread& t : threads) t.join();
  for (BlobRecord* r : records) EXPECT_TRUE(store_->GetBlob(r->key).ok());
  EXPECT_EQ(journal.errors(), 0u);
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

TEST_F(MetaJournalTest, AQueuedBatchKeepsItsPlaceAndItsWaiterLearnsItsOutcome) {
  MetaJournal journal(store_);
  BlobRecord* a = Linked(2, 1);
  a->ssd_extent.reset();
  journal.Persist(*a);  // queued before the demotion's record: written before it
  meta::MetaBatch demoted(/*sync=*/true);
  journal.AddDemoted(*a, tiering::Extent{8192, 4096}, &demoted);
  const MetaJournal::Ticket ticket = journal.Queue(std::move(demoted));
  journal.Forget(a->key);  // queued after it: written after it
  journal.Flush();         // another caller's flush applies the ticket's batch
  EXPECT_OK(journal.Await(ticket));
  EXPECT_TRUE(absl::IsNotFound(store_->GetBlob(a->key).status()));  // the deletion came last

  // The extent is the one given, not the record's; a failed write is the waiter's error.
  BlobRecord* b = Linked(1, 2);
  b->ssd_extent.reset();
  meta::MetaBatch first(/*sync=*/true);
  journal.AddDemoted(*b, tiering::Extent{12288, 4096}, &first);
  store_->FailNextApplies(absl::UnavailableError("store down"));
  const MetaJournal::Ticket failed = journal.Queue(std::move(first));
  EXPECT_TRUE(absl::IsUnavailable(journal.Await(failed)));
  EXPECT_EQ(journal.errors(), 1u);
  meta::MetaBatch second(/*sync=*/true);
  journal.AddDemoted(*b, tiering::Extent{12288, 4096}, &second);
  EXPECT_OK(journal.Await(journal.Queue(std::move(second))));
  ASSERT_OK_AND_ASSIGN(const meta::BlobMeta stored, store_->GetBlob(b->key));
  ASSERT_TRUE(stored.ssd.has_value());
  EXPECT_EQ(stored.ssd->offset, 12288u);
  // Without a store, or for an empty batch, a ticket is OK at once.
  MetaJournal none(nullptr);
  EXPECT_OK(none.Await(none.Queue(meta::MetaBatch(/*sync=*/true))));
}

}  // namespace
}  // namespace strata::store::core
