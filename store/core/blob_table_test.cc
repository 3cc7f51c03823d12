#include "strata/store/core/blob_table.h"

#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"

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

TEST(BlobTableTest, ListPagesInKeyOrderByNamespace) {
  const radix::Namespace ns = testing::SmallNamespace();
  BlobTable table;
  for (uint64_t key = 1; key <= 5; ++key) {
    BlobRecord* r = table.Add(Record(key, key * 10));
    r->ns = &ns;
    r->namespace_hash = radix::PrefixHash{key % 2, 0};  // odd keys: namespace {1, 0}
    table.Link(r);
  }
  ListRequest request;
  request.limit = 2;
  absl::StatusOr<ListReply> page = table.List(request);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->blobs.size(), 2u);
  EXPECT_EQ(page->blobs[1].key.hash.hi, 20u);
  ASSERT_FALSE(page->next_page_token.empty());
  request.page_token = page->next_page_token;
  request.namespace_hash = radix::PrefixHash{1, 0};
  page = table.List(request);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->blobs.size(), 2u);  // 30 and 50: the odd ones after 20
  EXPECT_EQ(page->blobs[0].key.hash.hi, 30u);
  EXPECT_EQ(page->blobs[1].key.hash.hi, 50u);
  EXPECT_TRUE(page->next_page_token.empty());  // the last page
  request.page_token = "v2:nonsense";
  EXPECT_EQ(table.List(request).status().code(), absl::StatusCode::kInvalidArgument);
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
