// RecordKeeper on its own: hand-made records in a BlobTable over a small DRAM arena, a
// real radix tree (NamespaceRegistry) for index removal and pins, a MetaJournal over a
// MemoryMetaStore.
#include "strata/store/core/record_keeper.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/namespace_registry.h"
#include "strata/store/meta/memory_meta_store.h"

namespace strata::store::core {
namespace {

class RecordKeeperTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kPages = 2;

  RecordKeeperTest()
      : dram_(testing::SmallArena("keeper-dram", 64 * 4096)),
        ledger_(&table_, dram_.get(), nullptr, testing::LruTierPolicies(), 1 << 20),
        keeper_(RecordKeeper::Deps{.table = &table_,
                                   .ledger = &ledger_,
                                   .journal = &journal_,
                                   .rebuild = &rebuild_,
                                   .dram = dram_.get(),
                                   .ssd = nullptr,
                                   .index_mu = &mu_}) {
    entry_ = &registry_.Register(ns_, radix::NamespaceHash(ns_));
  }

  // A record of blob `seed` continuing `parent` (nullptr: at page 0) from the parent's end,
  // with DRAM bytes, linked and inserted into the tree (unless !linked: then unlinked).
  BlobRecord* Make(uint64_t seed, BlobRecord* parent, bool linked = true) {
    const testing::BlobContent content = testing::MakeBlob(ns_, kPages, seed);
    auto r = std::make_unique<BlobRecord>();
    r->id = seed;
    r->ns = &entry_->ns;
    r->tree = entry_->tree;
    r->namespace_hash = radix::NamespaceHash(ns_);
    r->start_hash = r->namespace_hash;
    r->root_hash = r->namespace_hash;  // the index root: h_0, page 0
    if (parent != nullptr) {
      r->parent_id = parent->id;
      r->parent = BlobParent{parent->key, parent->end_page()};
      r->first_page = parent->end_page();
      r->start_hash = radix::PrefixHashAt(parent->start_hash, parent->tokens, 4);
      ++parent->children;
    }
    r->key = radix::BlobKey{radix::PrefixHashAt(r->start_hash, content.tokens, 4)};
    r->pages = kPages;
    r->bytes = content.bytes.size();
    r->tokens = content.tokens;
    r->checksums = content.checksums;
    BlobRecord* record = table_.Add(std::move(r));
    const tiering::Extent extent = dram_->Allocate(record->bytes).value();
    ledger_.Charge(TierLedger::LabelOf(*record), Tier::kDram, extent.length);
    if (!linked) {
      record->extent = extent;
      table_.Unlink(record);
      return record;
    }
    std::vector<radix::TokenId> sequence;
    if (parent != nullptr) {
      absl::MutexLock lock(&mu_);
      sequence = keeper_.SequenceTokens(mu_, *parent, parent->end_page());
    }
    sequence.insert(sequence.end(), record->tokens.begin(), record->tokens.end());
    record->pages_in_index =
        record->tree->Insert(record->namespace_hash, sequence, record->first_page, record->key)
            .value();
    table_.Link(record);
    ledger_.AttachDram(record, extent);
    return record;
  }

  absl::Mutex mu_;
  const radix::Namespace ns_ = testing::SmallNamespace();
  NamespaceRegistry registry_;
  const NamespaceEntry* entry_ = nullptr;
  BlobTable table_;
  std::unique_ptr<tiering::DramArena> dram_;
  TierLedger ledger_;
  std::shared_ptr<meta::MemoryMetaStore> store_ = std::make_shared<meta::MemoryMetaStore>();
  MetaJournal journal_{store_};
  RebuildQueue rebuild_{RebuildQueueOptions{}};
  RecordKeeper keeper_;
};

TEST_F(RecordKeeperTest, ChainAssemblesTheSequenceUpTheParents) {
  BlobRecord* a = Make(1, nullptr);
  BlobRecord* b = Make(2, a);
  BlobRecord* c = Make(3, b);
  TokenChain chain;
  {
    absl::MutexLock lock(&mu_);
    chain = keeper_.ChainOf(mu_, *c, c->first_page + 1);  // a, b, and c's first page
    EXPECT_TRUE(keeper_.SequenceTokens(mu_, *c, 0).empty());
  }
  ASSERT_EQ(chain.links.size(), 3u);
  EXPECT_EQ(chain.links[0].first, c);
  EXPECT_EQ(chain.links[0].second, 1u);
  EXPECT_EQ(chain.links[2].first, a);
  // Assembled after the lock is dropped.
  std::vector<radix::TokenId> want = a->tokens;
  want.insert(want.end(), b->tokens.begin(), b->tokens.end());
  want.insert(want.end(), c->tokens.begin(), c->tokens.begin() + 4);
  EXPECT_EQ(RecordKeeper::Assemble(chain), want);
}

TEST_F(RecordKeeperTest, ReleaseKeepsTokensWhileAChildNeedsThemThenCascades) {
  BlobRecord* parent = Make(1, nullptr, /*linked=*/false);
  BlobRecord* child = Make(2, parent, /*linked=*/false);
  absl::MutexLock lock(&mu_);
  // The parent's bytes go, its record stays: the child chains through it.
  EXPECT_EQ(keeper_.Release(mu_, parent), 4096u);
  EXPECT_EQ(table_.Find(1), parent);
  EXPECT_FALSE(parent->in_dram());
  EXPECT_FALSE(parent->tokens.empty());
  // A held child keeps its bytes.
  keeper_.Hold(mu_, child);
  EXPECT_EQ(keeper_.holds(mu_), 1u);
  EXPECT_EQ(keeper_.Release(mu_, child), 0u);
  EXPECT_TRUE(child->in_dram());
  keeper_.Unhold(mu_, child);
  EXPECT_EQ(keeper_.holds(mu_), 0u);
  EXPECT_TRUE(child->in_dram());  // Unhold does not release
  // Released: the child is erased, and the parent after it.
  EXPECT_EQ(keeper_.Release(mu_, child), 4096u);
  EXPECT_EQ(table_.Find(2), nullptr);
  EXPECT_EQ(table_.Find(1), nullptr);
  EXPECT_EQ(dram_->Stats().used_bytes, 0u);
}

TEST_F(RecordKeeperTest, StartLeaseCountsEachRecordOnce) {
  BlobRecord* a = Make(1, nullptr);
  BlobRecord* b = Make(2, a);
  const absl::Time now = absl::UnixEpoch() + absl::Seconds(5);
  absl::MutexLock lock(&mu_);
  const std::vector<BlobRecord*> records{a, b, a};
  const Lease lease = keeper_.StartLease(mu_, records, 77, now, now + absl::Seconds(30));
  EXPECT_EQ(lease.id, 77u);
  EXPECT_EQ(lease.expiry, now + absl::Seconds(30));
  ASSERT_EQ(lease.blobs.size(), 2u);
  EXPECT_EQ(a->leases, 1u);
  EXPECT_EQ(a->hits, 1u);
  EXPECT_EQ(b->leases, 1u);
  EXPECT_EQ(a->last_access, now);
  EXPECT_GT(a->read_tick, 0u);  // the ledger saw the read
  keeper_.EndLease(mu_, lease);
  EXPECT_EQ(a->leases, 0u);
  EXPECT_EQ(b->leases, 0u);
}

TEST_F(RecordKeeperTest, EndLeaseReleasesOnlyTheLastLease) {
  BlobRecord* r = Make(1, nullptr, /*linked=*/false);
  r->leases = 2;
  Lease lease;
  lease.id = 9;
  lease.blobs.emplace_back(r->key, r->id);
  absl::MutexLock lock(&mu_);
  keeper_.EndLease(mu_, lease);
  ASSERT_EQ(table_.Find(1), r);
  EXPECT_EQ(r->leases, 1u);
  EXPECT_TRUE(r->in_dram());
  keeper_.EndLease(mu_, lease);
  EXPECT_EQ(table_.Find(1), nullptr);
}

TEST_F(RecordKeeperTest, PinnedPathRefusesRemovalUntilUnpinned) {
  BlobRecord* a = Make(1, nullptr);
  BlobRecord* b = Make(2, a);
  const radix::BlobKey a_key = a->key;
  absl::MutexLock lock(&mu_);
  keeper_.Pin(mu_, b, keeper_.SequenceTokens(mu_, *b, b->end_page()));
  EXPECT_TRUE(b->pinned);
  EXPECT_EQ(a->path_pins, 1u);
  EXPECT_EQ(b->path_pins, 1u);
  DeleteReply reply;
  EXPECT_TRUE(absl::IsFailedPrecondition(
      keeper_.RemoveFromIndex(mu_, a, a->first_page, /*count_evictions=*/false, &reply)));
  EXPECT_EQ(a->state, BlobState::kLinked);
  keeper_.Unpin(mu_, b);
  EXPECT_EQ(a->path_pins, 0u);
  EXPECT_FALSE(b->pinned);
  // Removing a's first page takes the whole subtree: both blobs unlinked, bytes freed.
  ASSERT_TRUE(
      keeper_.RemoveFromIndex(mu_, a, a->first_page, /*count_evictions=*/true, &reply).ok());
  EXPECT_EQ(reply.blobs_unlinked, 2u);
  EXPECT_EQ(reply.pages_removed, 2 * kPages);
  EXPECT_EQ(table_.FindLinked(a_key), nullptr);
  EXPECT_EQ(table_.linked(), 0u);
  EXPECT_EQ(dram_->Stats().used_bytes, 0u);
  EXPECT_EQ(dram_->counters().Snapshot().evictions, 2u);
  EXPECT_TRUE(journal_.pending());  // the deletions are queued
}

TEST_F(RecordKeeperTest, RecordsInterfaceIsTheSameLifeCycle) {
  BlobRecord* r = Make(1, nullptr, /*linked=*/false);
  TierMover::Records& records = keeper_;
  absl::MutexLock lock(&mu_);
  records.HoldRecord(r);
  EXPECT_EQ(keeper_.holds(mu_), 1u);
  EXPECT_EQ(records.ReleaseRecord(r), 0u);  // held
  records.UnholdRecord(r);
  EXPECT_EQ(records.ReleaseRecord(r), 4096u);
  EXPECT_EQ(table_.Find(1), nullptr);
}

}  // namespace
}  // namespace strata::store::core
