// Restorer on its own: stored records written by hand into a MemoryMetaStore, loaded by a
// MetaJournal and restored into an empty registry, table and ledger (no SSD tier: every
// record comes back TEXT).
#include "strata/store/core/restorer.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/memory_meta_store.h"

namespace strata::store::core {
namespace {

class RestorerTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kPages = 2;

  // Everything a restore needs, with a TEXT budget of `text_bytes`.
  void Make(uint64_t text_bytes) {
    ledger_ = std::make_unique<TierLedger>(&table_, dram_.get(), nullptr,
                                           testing::LruTierPolicies(), text_bytes);
    keeper_ = std::make_unique<RecordKeeper>(RecordKeeper::Deps{.table = &table_,
                                                                .ledger = ledger_.get(),
                                                                .journal = &journal_,
                                                                .rebuild = &rebuild_,
                                                                .dram = dram_.get(),
                                                                .ssd = nullptr,
                                                                .index_mu = &mu_});
    mover_ = std::make_unique<TierMover>(TierMoverOptions{.text_bytes = text_bytes},
                                         TierMover::Deps{.table = &table_,
                                                         .ledger = ledger_.get(),
                                                         .journal = &journal_,
                                                         .dram = dram_.get(),
                                                         .ssd = nullptr,
                                                         .records = keeper_.get(),
                                                         .index_mu = &mu_,
                                                         .lock_hold = nullptr});
    restorer_ = std::make_unique<Restorer>(Restorer::Deps{.registry = &registry_,
                                                          .table = &table_,
                                                          .ledger = ledger_.get(),
                                                          .journal = &journal_,
                                                          .keeper = keeper_.get(),
                                                          .mover = mover_.get(),
                                                          .ssd = nullptr,
                                                          .text_bytes = text_bytes});
  }

  // The stored record of blob `seed`, continuing `parent` from its end (nullptr: page 0).
  meta::BlobMeta Stored(uint64_t seed, const meta::BlobMeta* parent) const {
    const testing::BlobContent content = testing::MakeBlob(ns_, kPages, seed);
    meta::BlobMeta m;
    m.namespace_hash = radix::NamespaceHash(ns_);
    m.start_hash = m.namespace_hash;
    if (parent != nullptr) {
      m.first_page = parent->first_page + parent->pages;
      m.parent = meta::BlobMetaParent{parent->key, m.first_page};
      m.start_hash = radix::PrefixHashAt(parent->start_hash, parent->tokens, 4);
    }
    m.pages = kPages;
    m.bytes = content.bytes.size();
    m.tokens = content.tokens;
    m.checksums = content.checksums;
    m.key = radix::BlobKey{radix::PrefixHashAt(m.start_hash, m.tokens, 4)};
    return m;
  }

  void Store(const std::vector<meta::BlobMeta>& blobs) {
    meta::MetaBatch batch;
    batch.PutNamespace(ns_);
    for (const meta::BlobMeta& m : blobs) batch.PutBlob(m);
    ASSERT_TRUE(store_->Apply(batch).ok());
  }

  absl::StatusOr<RestoreReport> Restore() {
    absl::StatusOr<MetaJournal::Loaded> loaded = journal_.Load();
    if (!loaded.ok()) return loaded.status();
    absl::MutexLock lock(&mu_);
    return restorer_->Restore(mu_, *std::move(loaded), [this] { return ++next_id_; });
  }

  absl::Mutex mu_;
  const radix::Namespace ns_ = testing::SmallNamespace();
  NamespaceRegistry registry_;
  BlobTable table_;
  std::unique_ptr<tiering::DramArena> dram_ = testing::SmallArena("restorer-dram", 16 * 4096);
  std::shared_ptr<meta::MemoryMetaStore> store_ = std::make_shared<meta::MemoryMetaStore>();
  MetaJournal journal_{store_};
  RebuildQueue rebuild_{RebuildQueueOptions{}};
  std::unique_ptr<TierLedger> ledger_;
  std::unique_ptr<RecordKeeper> keeper_;
  std::unique_ptr<TierMover> mover_;
  std::unique_ptr<Restorer> restorer_;
  tiering::BlobId next_id_ = 0;
};

TEST_F(RestorerTest, RestoresParentsFirstAsTextAndDropsWhatFailsItsChecks) {
  Make(/*text_bytes=*/1 << 20);
  const meta::BlobMeta parent = Stored(1, nullptr);
  meta::BlobMeta child = Stored(2, &parent);
  child.pinned = true;
  const meta::BlobMeta missing_parent = Stored(3, nullptr);
  const meta::BlobMeta orphan = Stored(4, &missing_parent);  // its parent is not stored
  meta::BlobMeta bad_key = Stored(5, nullptr);
  bad_key.tokens[0] ^= 1;  // the key no longer follows from the tokens
  Store({child, orphan, bad_key, parent});

  const absl::StatusOr<RestoreReport> report = Restore();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->restored, 2u);
  EXPECT_EQ(report->text, 2u);
  EXPECT_EQ(report->on_ssd, 0u);
  EXPECT_EQ(report->dropped, 2u);

  absl::MutexLock lock(&mu_);
  BlobRecord* p = table_.FindLinked(parent.key);
  BlobRecord* c = table_.FindLinked(child.key);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->parent_id, p->id);
  EXPECT_EQ(c->root_id, p->id);
  EXPECT_EQ(p->children, 1u);
  EXPECT_TRUE(c->text_tracked);
  EXPECT_FALSE(c->has_bytes());
  // Back in the index, the child under its parent, and pinned again with its path.
  const NamespaceEntry* entry = registry_.Find(radix::NamespaceHash(ns_));
  ASSERT_NE(entry, nullptr);
  std::vector<radix::TokenId> sequence = parent.tokens;
  sequence.insert(sequence.end(), child.tokens.begin(), child.tokens.end());
  EXPECT_EQ(entry->tree->Match(radix::NamespaceHash(ns_), sequence, false).matched_pages,
            2 * kPages);
  EXPECT_TRUE(c->pinned);
  EXPECT_EQ(p->path_pins, 1u);
  // The dropped records are deleted from the store.
  EXPECT_TRUE(absl::IsNotFound(store_->GetBlob(orphan.key).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetBlob(bad_key.key).status()));
  EXPECT_TRUE(store_->GetBlob(child.key).ok());
}

TEST_F(RestorerTest, ASegmentStartAndItsChildComeBackUnderTheSegmentsRoot) {
  Make(/*text_bytes=*/1 << 20);
  // A segment of some sequence starting at page 8, whose prefix hash the client computed.
  const radix::PrefixHash h8{0x1234, 0x5678};
  meta::BlobMeta root = Stored(1, nullptr);
  root.segment_start = true;
  root.first_page = 8;
  root.start_hash = h8;
  root.key = radix::BlobKey{radix::PrefixHashAt(h8, root.tokens, 4)};
  const meta::BlobMeta child = Stored(2, &root);
  meta::BlobMeta unmarked = Stored(3, nullptr);  // the same shape, not marked: corrupt
  unmarked.first_page = 8;
  unmarked.start_hash = h8;
  unmarked.key = radix::BlobKey{radix::PrefixHashAt(h8, unmarked.tokens, 4)};
  Store({child, root, unmarked});

  const absl::StatusOr<RestoreReport> report = Restore();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->restored, 2u);
  EXPECT_EQ(report->dropped, 1u);
  absl::MutexLock lock(&mu_);
  BlobRecord* r = table_.FindLinked(root.key);
  BlobRecord* c = table_.FindLinked(child.key);
  ASSERT_NE(r, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(r->root_hash, h8);
  EXPECT_EQ(r->root_page, 8u);
  EXPECT_EQ(c->root_hash, h8);
  EXPECT_EQ(c->root_page, 8u);
  EXPECT_EQ(c->parent_id, r->id);
  // Indexed under h8, pages counted from the segment's start; nothing under h_0.
  const NamespaceEntry* entry = registry_.Find(radix::NamespaceHash(ns_));
  ASSERT_NE(entry, nullptr);
  std::vector<radix::TokenId> sequence = root.tokens;
  sequence.insert(sequence.end(), child.tokens.begin(), child.tokens.end());
  EXPECT_EQ(entry->tree->Match(h8, sequence, false).matched_pages, 2 * kPages);
  EXPECT_EQ(entry->tree->Match(radix::NamespaceHash(ns_), sequence, false).matched_pages, 0u);
  // Written back, the record keeps its mark.
  EXPECT_TRUE(MetaJournal::MetaOf(*r).segment_start);
  EXPECT_FALSE(MetaJournal::MetaOf(*c).segment_start);
}

TEST_F(RestorerTest, BringsTheTextTierBackUnderItsBudgetLeafFirst) {
  const meta::BlobMeta a = Stored(1, nullptr);
  const meta::BlobMeta b = Stored(2, &a);
  Store({a, b});
  // A budget that holds one record's tokens and checksums but not two.
  BlobRecord probe;
  probe.tokens = a.tokens;
  probe.checksums = a.checksums;
  Make(/*text_bytes=*/TierLedger::TextBytes(probe) + 1);
  const absl::StatusOr<RestoreReport> report = Restore();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->restored, 2u);
  absl::MutexLock lock(&mu_);
  EXPECT_NE(table_.FindLinked(a.key), nullptr);  // the parent stays: leaf-first
  EXPECT_EQ(table_.FindLinked(b.key), nullptr);
  EXPECT_LE(ledger_->text().used_bytes, TierLedger::TextBytes(probe) + 1);
}

}  // namespace
}  // namespace strata::store::core
