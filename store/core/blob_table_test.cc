#include "strata/store/core/blob_table.h"

#include <vector>

#include "gtest/gtest.h"

namespace strata::store::core {
namespace {

std::unique_ptr<BlobRecord> Record(tiering::BlobId id, uint64_t key) {
  auto r = std::make_unique<BlobRecord>();
  r->id = id;
  r->key = radix::BlobKey{radix::PrefixHash{key, 0}};
  return r;
}

TEST(BlobTableTest, LinkMakesVisibleByKeyInKeyOrder) {
  BlobTable table;
  BlobRecord* a = table.Add(Record(1, 30));
  BlobRecord* b = table.Add(Record(2, 10));
  BlobRecord* c = table.Add(Record(3, 20));
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.FindLinked(a->key), nullptr);  // pending: invisible
  table.Link(a);
  table.Link(b);
  table.Link(c);
  EXPECT_EQ(table.FindLinked(b->key), b);
  EXPECT_EQ(table.Find(3), c);
  std::vector<uint64_t> order;
  table.ForEachLinkedAfter(nullptr, [&](const BlobRecord& r) {
    order.push_back(r.key.hash.hi);
    return true;
  });
  EXPECT_EQ(order, (std::vector<uint64_t>{10, 20, 30}));
  order.clear();
  table.ForEachLinkedAfter(&b->key, [&](const BlobRecord& r) {
    order.push_back(r.key.hash.hi);
    return false;  // stops after one
  });
  EXPECT_EQ(order, (std::vector<uint64_t>{20}));
}

TEST(BlobTableTest, UnlinkHidesAndAllowsANewIncarnation) {
  BlobTable table;
  BlobRecord* old = table.Add(Record(1, 5));
  table.Link(old);
  table.Unlink(old);
  EXPECT_EQ(old->state, BlobState::kUnlinked);
  EXPECT_EQ(table.FindLinked(old->key), nullptr);
  BlobRecord* fresh = table.Add(Record(2, 5));
  table.Link(fresh);
  EXPECT_EQ(table.FindLinked(fresh->key), fresh);
  EXPECT_EQ(table.linked(), 1u);
  table.Erase(1);
  EXPECT_EQ(table.Find(1), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(BlobTableDeathTest, ErasingALinkedRecordIsABug) {
  BlobTable table;
  BlobRecord* r = table.Add(Record(1, 5));
  table.Link(r);
  EXPECT_DEATH(table.Erase(1), "linked");
}

}  // namespace
}  // namespace strata::store::core
