// TierLedger on its own: two small DRAM arenas stand in for the DRAM and SSD tiers.
#include "strata/store/core/tier_ledger.h"

#include <memory>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/tiering/dram_arena.h"

namespace strata::store::core {
namespace {

class TierLedgerTest : public ::testing::Test {
 protected:
  BlobRecord* Linked(tiering::BlobId id, tiering::BlobId parent_id = 0) {
    auto r = std::make_unique<BlobRecord>();
    r->id = id;
    r->key = radix::BlobKey{radix::PrefixHash{id, 3}};
    r->ns = &ns_;
    r->parent_id = parent_id;
    r->root_id = parent_id == 0 ? id : parent_id;
    r->pages = 2;
    r->bytes = 2 * ns_.layout().BytesPerPage();
    r->tokens.resize(2 * ns_.layout().page_tokens);
    r->checksums.resize(2 * ns_.layout().num_layers);
    BlobRecord* record = table_.Add(std::move(r));
    table_.Link(record);
    record->state = BlobState::kLinked;
    return record;
  }
  // Extents for records of ns_, charged to its label as the mover's allocations are.
  tiering::Extent Dram(uint64_t bytes) {
    const tiering::Extent extent = dram_->Allocate(bytes).value();
    ledger_.Charge(ns_.tenant(), Tier::kDram, extent.length);
    return extent;
  }
  tiering::Extent Ssd(uint64_t bytes) {
    const tiering::Extent extent = ssd_->Allocate(bytes).value();
    ledger_.Charge(ns_.tenant(), Tier::kSsd, extent.length);
    return extent;
  }

  const radix::Namespace ns_ = testing::SmallNamespace();
  BlobTable table_;
  std::unique_ptr<tiering::DramArena> dram_ = testing::SmallArena("ledger-dram", 1 << 20);
  std::unique_ptr<tiering::DramArena> ssd_ = testing::SmallArena("ledger-ssd", 1 << 20);
  TierLedger ledger_{&table_, dram_.get(), ssd_.get(), testing::LruTierPolicies(),
                     /*text=*/1 << 20};
};

TEST_F(TierLedgerTest, ExtentsKeepTheParentsChildCountsAndPoliciesInStep) {
  BlobRecord* parent = Linked(1);
  BlobRecord* child = Linked(2, 1);
  ledger_.AttachDram(parent, Dram(4096));
  ledger_.AttachDram(child, Dram(4096));
  EXPECT_EQ(parent->children_in_dram, 1u);
  EXPECT_EQ(parent->children_with_bytes, 1u);
  EXPECT_EQ(ledger_.dram_policy().size(), 2u);
  EXPECT_EQ(dram_->Stats().used_bytes, 8192u);

  // On SSD too, then out of DRAM: the child still has bytes.
  ledger_.AttachSsd(child, Ssd(4096));
  ledger_.DetachDram(child);
  EXPECT_EQ(parent->children_in_dram, 0u);
  EXPECT_EQ(parent->children_with_bytes, 1u);
  EXPECT_EQ(dram_->Stats().used_bytes, 4096u);  // freed in its tier
  EXPECT_EQ(ledger_.ssd_policy().size(), 1u);
  EXPECT_FALSE(child->text_tracked);

  // Out of SSD as well: TEXT, counted in the TEXT tier and its policy.
  ledger_.DetachSsd(child);
  EXPECT_EQ(parent->children_with_bytes, 0u);
  EXPECT_EQ(ssd_->Stats().used_bytes, 0u);
  EXPECT_TRUE(child->text_tracked);
  EXPECT_EQ(ledger_.text().blobs, 1u);
  EXPECT_EQ(ledger_.text().used_bytes, TierLedger::TextBytes(*child));
  EXPECT_EQ(ledger_.text_policy().size(), 1u);

  // Bytes again (a rebuild): out of the TEXT tier.
  ledger_.AttachDram(child, Dram(4096));
  EXPECT_FALSE(child->text_tracked);
  EXPECT_EQ(ledger_.text().used_bytes, 0u);
  EXPECT_EQ(ledger_.text_policy().size(), 0u);
  EXPECT_EQ(parent->children_in_dram, 1u);
}

TEST_F(TierLedgerTest, UnlinkingLeavesTheCountsAndPolicies) {
  BlobRecord* parent = Linked(1);
  BlobRecord* child = Linked(2, 1);
  ledger_.AttachDram(parent, Dram(4096));
  ledger_.AttachDram(child, Dram(4096));
  ledger_.AttachSsd(child, Ssd(4096));
  ledger_.Unlinking(*child);
  table_.Unlink(child);
  ledger_.SyncText(child);
  EXPECT_EQ(parent->children_in_dram, 0u);
  EXPECT_EQ(parent->children_with_bytes, 0u);
  EXPECT_EQ(ledger_.dram_policy().size(), 1u);  // the parent
  EXPECT_EQ(ledger_.ssd_policy().size(), 0u);
  EXPECT_FALSE(child->text_tracked);  // unlinked: never TEXT
  EXPECT_EQ(ledger_.text().blobs, 0u);
}

TEST_F(TierLedgerTest, DramEvictableIsLeafFirstAndUnheld) {
  BlobRecord* parent = Linked(1);
  BlobRecord* child = Linked(2, 1);
  EXPECT_FALSE(TierLedger::DramEvictable(*parent));  // no DRAM copy
  ledger_.AttachDram(parent, Dram(4096));
  EXPECT_TRUE(TierLedger::DramEvictable(*parent));
  ledger_.AttachDram(child, Dram(4096));
  EXPECT_FALSE(TierLedger::DramEvictable(*parent));  // a child in DRAM continues it
  EXPECT_TRUE(TierLedger::DramEvictable(*child));
  child->leases = 1;
  EXPECT_FALSE(TierLedger::DramEvictable(*child));
  child->leases = 0;
  child->moving = true;
  EXPECT_FALSE(TierLedger::DramEvictable(*child));
  child->moving = false;
  child->path_pins = 1;
  EXPECT_FALSE(TierLedger::DramEvictable(*child));
}

TEST_F(TierLedgerTest, ReadsTickAndFeedTheAdmissionStats) {
  BlobRecord* a = Linked(1);
  ledger_.AttachDram(a, Dram(4096));
  a->insert_tick = ledger_.NextTick();  // 1
  ledger_.Accessed(a);                  // 2
  ledger_.Accessed(a);                  // 3
  a->hits = 2;
  EXPECT_EQ(a->read_tick, 3u);
  const tiering::BlobAccessStats stats = ledger_.AccessStats(*a);
  EXPECT_EQ(stats.reads, 2u);
  EXPECT_EQ(stats.insert_tick, 1u);
  EXPECT_EQ(stats.previous_read_tick, 3u);
  EXPECT_EQ(stats.now_tick, 3u);
  EXPECT_TRUE(ledger_.ShouldDemote(*a));  // "always"
  EXPECT_TRUE(ledger_.ShouldPromote(*a));
  ledger_.CountTextDrop();
  ledger_.CountTextDeletion();
  ledger_.CountRebuild();
  EXPECT_EQ(ledger_.text().drops, 1u);
  EXPECT_EQ(ledger_.text().deletions, 1u);
  EXPECT_EQ(ledger_.text().rebuilds, 1u);
  EXPECT_EQ(ledger_.text().capacity_bytes, uint64_t{1} << 20);
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

TEST_F(TierLedgerTest, CountRecordsByTier) {
  BlobRecord* both = Linked(1);
  ledger_.AttachDram(both, Dram(4096));
  ledger_.AttachSsd(both, Ssd(4096));
  BlobRecord* text = Linked(2);
  ledger_.SyncText(text);
  auto held = std::make_unique<BlobRecord>();  // unlinked, bytes kept for a lease
  held->id = 3;
  held->key = radix::BlobKey{radix::PrefixHash{3, 3}};
  held->extent = Dram(4096);
  table_.Unlink(table_.Add(std::move(held)));
  auto token_only = std::make_unique<BlobRecord>();
  token_only->id = 4;
  token_only->key = radix::BlobKey{radix::PrefixHash{4, 3}};
  table_.Unlink(table_.Add(std::move(token_only)));
  NodeTiers tiers;
  tiers.tiers = {report::TierStats{.tier = Tier::kDram}, report::TierStats{.tier = Tier::kSsd}};
  ledger_.CountRecords(&tiers);
  EXPECT_EQ(tiers.Find(Tier::kDram)->pages, 2u);
  EXPECT_EQ(tiers.Find(Tier::kSsd)->pages, 2u);
  EXPECT_EQ(tiers.text.pages, 2u);
  EXPECT_EQ(tiers.engine.unlinked_blobs, 1u);
  EXPECT_EQ(tiers.engine.token_only_blobs, 1u);
  dram_->Free(*table_.Find(3)->extent);
}

}  // namespace
}  // namespace strata::store::core
