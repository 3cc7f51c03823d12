// What only MemoryMetaStore does: fault injection. (The shared contract is in
// meta_store_conformance_test.cc.)
#include "strata/store/meta/memory_meta_store.h"

#include "gtest/gtest.h"

#include "store/meta/test_records.h"
#include "strata/base/status_test_macros.h"

namespace strata::store::meta {
namespace {

TEST(MemoryMetaStoreTest, FailNextAppliesFailsThatManyAndAppliesNothing) {
  MemoryMetaStore store;
  const radix::PrefixHash ns = radix::NamespaceHash(TestNamespace(0));
  MetaBatch batch(/*sync=*/true);
  batch.PutNamespace(TestNamespace(0));
  batch.PutBlob(TestBlob(1, ns));

  store.FailNextApplies(absl::UnavailableError("disk gone"), 2);
  EXPECT_CODE(store.Apply(batch), absl::StatusCode::kUnavailable);
  EXPECT_CODE(store.Apply(batch), absl::StatusCode::kUnavailable);
  EXPECT_CODE(store.GetBlob(TestBlobKey(1)), absl::StatusCode::kNotFound);
  EXPECT_CODE(store.GetNamespace(ns), absl::StatusCode::kNotFound);
  ASSERT_OK(store.Apply(batch));
  EXPECT_OK(store.GetBlob(TestBlobKey(1)));

  const MetaStoreStats stats = store.Stats();
  EXPECT_EQ(stats.failed_applies, 2u);
  EXPECT_EQ(stats.applies, 1u);
  EXPECT_EQ(stats.blobs, 1u);
  EXPECT_EQ(stats.namespaces, 1u);

  store.FailNextApplies(absl::DataLossError("bad sector"));
  EXPECT_CODE(store.Apply(MetaBatch()), absl::StatusCode::kDataLoss);
  EXPECT_OK(store.Apply(MetaBatch()));
}

TEST(MemoryMetaStoreTest, BytesHeldFollowPutsAndDeletes) {
  MemoryMetaStore store;
  const radix::PrefixHash ns = radix::NamespaceHash(TestNamespace(0));
  MetaBatch batch;
  batch.PutNamespace(TestNamespace(0));
  batch.PutBlob(TestBlob(1, ns));
  ASSERT_OK(store.Apply(batch));
  const uint64_t held = store.Stats().bytes_on_disk;
  EXPECT_EQ(held, 32 + batch.value_bytes());
  MetaBatch again;
  again.PutBlob(TestBlob(1, ns));  // overwrite: same size
  ASSERT_OK(store.Apply(again));
  EXPECT_EQ(store.Stats().bytes_on_disk, held);
  MetaBatch drop;
  drop.DeleteBlob(TestBlobKey(1));
  drop.DeleteNamespace(ns);
  ASSERT_OK(store.Apply(drop));
  EXPECT_EQ(store.Stats().bytes_on_disk, 0u);
}

}  // namespace
}  // namespace strata::store::meta
