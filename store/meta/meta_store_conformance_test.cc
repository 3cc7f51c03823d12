// One contract, every MetaStore: this suite runs against MemoryMetaStore and RocksMetaStore.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

#include "store/meta/meta_records.h"
#include "store/meta/rocks_test_util.h"
#include "store/meta/test_records.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/meta/blob_meta_codec.h"
#include "strata/store/meta/memory_meta_store.h"
#include "strata/store/meta/rocks_meta_store.h"

namespace strata::store::meta {
namespace {

struct StoreKind {
  std::string name;
  // A store in `dir` (empty when the test starts), or the same store reopened.
  std::function<std::unique_ptr<MetaStore>(const std::string& dir)> open;
  // Plants `bytes` as the record of `key` in family "blobs" or "namespaces", bypassing every
  // check; may reopen *store.
  std::function<void(std::unique_ptr<MetaStore>* store, const std::string& dir,
                     const std::string& family, const radix::PrefixHash& key, std::string bytes)>
      put_raw;
};

StoreKind MemoryKind() {
  return StoreKind{"Memory", [](const std::string&) { return std::make_unique<MemoryMetaStore>(); },
                   [](std::unique_ptr<MetaStore>* store, const std::string&,
                      const std::string& family, const radix::PrefixHash& key, std::string bytes) {
                     auto* memory = static_cast<MemoryMetaStore*>(store->get());
                     if (family == "blobs") {
                       memory->PutRawBlobForTest(radix::BlobKey{key}, std::move(bytes));
                     } else {
                       memory->PutRawNamespaceForTest(key, std::move(bytes));
                     }
                   }};
}

std::unique_ptr<MetaStore> OpenRocks(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> store =
      RocksMetaStore::Open(RocksMetaStoreOptions{.path = dir});
  CHECK(store.ok()) << store.status();
  return *std::move(store);
}

StoreKind RocksKind() {
  return StoreKind{"Rocks", OpenRocks,
                   [](std::unique_ptr<MetaStore>* store, const std::string& dir,
                      const std::string& family, const radix::PrefixHash& key, std::string bytes) {
                     store->reset();
                     PutRawRocksRecord(dir, family, StoredKey(key), bytes);
                     *store = OpenRocks(dir);
                   }};
}

class MetaStoreConformanceTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    store_ = GetParam().open(dir_.path());
    ns_ = radix::NamespaceHash(TestNamespace(0));
  }

  // Puts namespace 0 and blobs [first, first + n) of it.
  void PutBlobs(uint64_t first, uint64_t n, bool with_namespace = true) {
    MetaBatch batch(/*sync=*/true);
    if (with_namespace) batch.PutNamespace(TestNamespace(0));
    for (uint64_t s = first; s < first + n; ++s) batch.PutBlob(TestBlob(s, ns_));
    ASSERT_OK(store_->Apply(batch));
  }

  struct Loaded {
    std::vector<radix::PrefixHash> namespaces;
    std::vector<BlobMeta> blobs;
    std::vector<CorruptMetaRecord> corrupt;
    MetaLoadSummary summary;
  };
  Loaded LoadEverything() {
    Loaded loaded;
    MetaLoadCallbacks callbacks{
        .on_namespace =
            [&](const radix::PrefixHash& hash, radix::Namespace ns) {
              EXPECT_EQ(radix::NamespaceHash(ns), hash);
              EXPECT_TRUE(loaded.blobs.empty()) << "namespaces come first";
              loaded.namespaces.push_back(hash);
              return absl::OkStatus();
            },
        .on_blob =
            [&](BlobMeta meta) {
              loaded.blobs.push_back(std::move(meta));
              return absl::OkStatus();
            },
        .on_corrupt = [&](const CorruptMetaRecord& r) { loaded.corrupt.push_back(r); }};
    absl::StatusOr<MetaLoadSummary> summary = store_->LoadAll(callbacks);
    EXPECT_OK(summary);
    if (summary.ok()) loaded.summary = *summary;
    return loaded;
  }

  ScopedTempDir dir_;
  std::unique_ptr<MetaStore> store_;
  radix::PrefixHash ns_;
};

TEST_P(MetaStoreConformanceTest, PutThenGetReturnsEveryField) {
  PutBlobs(0, 20);
  for (uint64_t s = 0; s < 20; ++s) {
    ASSERT_OK_AND_ASSIGN(BlobMeta meta, store_->GetBlob(TestBlobKey(s)));
    EXPECT_EQ(meta, TestBlob(s, ns_));
  }
  ASSERT_OK_AND_ASSIGN(radix::Namespace ns, store_->GetNamespace(ns_));
  EXPECT_EQ(ns, TestNamespace(0));
  EXPECT_CODE(store_->GetBlob(TestBlobKey(99)), absl::StatusCode::kNotFound);
  EXPECT_CODE(store_->GetNamespace(radix::PrefixHash{1, 2}), absl::StatusCode::kNotFound);
}

TEST_P(MetaStoreConformanceTest, BlobOfAnUnknownNamespaceFailsTheWholeBatch) {
  MetaBatch batch;
  batch.PutBlob(TestBlob(1, ns_));
  absl::Status status = store_->Apply(batch);
  EXPECT_CODE(status, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), ns_.ToHex())) << status;

  // The namespace must come before the blob in the batch.
  batch.PutNamespace(TestNamespace(0));
  EXPECT_CODE(store_->Apply(batch), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(store_->GetBlob(TestBlobKey(1)), absl::StatusCode::kNotFound);
  EXPECT_CODE(store_->GetNamespace(ns_), absl::StatusCode::kNotFound);

  MetaBatch ordered;
  ordered.PutNamespace(TestNamespace(0));
  ordered.PutBlob(TestBlob(1, ns_));
  ASSERT_OK(store_->Apply(ordered));
  EXPECT_OK(store_->GetBlob(TestBlobKey(1)));

  // A deleted namespace takes no new blobs, in the same batch or later.
  MetaBatch drop;
  drop.DeleteNamespace(ns_);
  drop.PutBlob(TestBlob(2, ns_));
  EXPECT_CODE(store_->Apply(drop), absl::StatusCode::kFailedPrecondition);
  MetaBatch only_drop;
  only_drop.DeleteNamespace(ns_);
  ASSERT_OK(store_->Apply(only_drop));
  MetaBatch late;
  late.PutBlob(TestBlob(3, ns_));
  EXPECT_CODE(store_->Apply(late), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->Stats().failed_applies, 4u);
}

TEST_P(MetaStoreConformanceTest, LaterOpsOnOneKeyWinWithinABatch) {
  PutBlobs(0, 3);
  MetaBatch batch;
  batch.DeleteBlob(TestBlobKey(0));  // delete, then put again: present
  BlobMeta changed = TestBlob(0, ns_);
  changed.hits = 12345;
  batch.PutBlob(changed);
  batch.PutBlob(TestBlob(1, ns_));  // put, then delete: absent
  batch.DeleteBlob(TestBlobKey(1));
  batch.DeleteBlob(TestBlobKey(77));  // deleting an absent key is fine
  ASSERT_OK(store_->Apply(batch));
  ASSERT_OK_AND_ASSIGN(BlobMeta meta, store_->GetBlob(TestBlobKey(0)));
  EXPECT_EQ(meta.hits, 12345u);
  EXPECT_CODE(store_->GetBlob(TestBlobKey(1)), absl::StatusCode::kNotFound);
  EXPECT_OK(store_->GetBlob(TestBlobKey(2)));
}

TEST_P(MetaStoreConformanceTest, EmptyBatchIsOk) {
  ASSERT_OK(store_->Apply(MetaBatch(/*sync=*/true)));
  EXPECT_EQ(LoadEverything().summary, MetaLoadSummary{});
}

TEST_P(MetaStoreConformanceTest, LoadAllStreamsNamespacesThenBlobsInKeyOrder) {
  MetaBatch batch;
  for (int i = 0; i < 5; ++i) batch.PutNamespace(TestNamespace(i));
  ASSERT_OK(store_->Apply(batch));
  PutBlobs(0, 50, /*with_namespace=*/false);
  const Loaded loaded = LoadEverything();
  EXPECT_EQ(loaded.summary, (MetaLoadSummary{.namespaces = 5, .blobs = 50}));
  ASSERT_EQ(loaded.namespaces.size(), 5u);
  EXPECT_TRUE(std::is_sorted(loaded.namespaces.begin(), loaded.namespaces.end()));
  ASSERT_EQ(loaded.blobs.size(), 50u);
  for (size_t i = 1; i < loaded.blobs.size(); ++i) {
    EXPECT_LT(loaded.blobs[i - 1].key, loaded.blobs[i].key);
  }
  for (const BlobMeta& meta : loaded.blobs) EXPECT_EQ(meta, TestBlob(meta.generation, ns_));
}

TEST_P(MetaStoreConformanceTest, LoadAllSkipsCountsAndReportsCorruptRecords) {
  PutBlobs(0, 10);
  std::string torn = EncodeBlobMeta(TestBlob(3, ns_));
  torn.resize(torn.size() - 5);
  GetParam().put_raw(&store_, dir_.path(), "blobs", TestBlobKey(3).hash, torn);
  // A namespace record whose encoding hashes to another key.
  const radix::PrefixHash wrong{7, 7};
  GetParam().put_raw(&store_, dir_.path(), "namespaces", wrong,
                     TestNamespace(1).CanonicalEncoding());

  const Loaded loaded = LoadEverything();
  EXPECT_EQ(
      loaded.summary,
      (MetaLoadSummary{.namespaces = 1, .blobs = 9, .corrupt_namespaces = 1, .corrupt_blobs = 1}));
  ASSERT_EQ(loaded.corrupt.size(), 2u);
  EXPECT_EQ(loaded.corrupt[0].kind, MetaRecordKind::kNamespace);
  EXPECT_EQ(loaded.corrupt[0].key, wrong);
  EXPECT_EQ(loaded.corrupt[1].kind, MetaRecordKind::kBlob);
  EXPECT_EQ(loaded.corrupt[1].key, TestBlobKey(3).hash);
  EXPECT_EQ(loaded.corrupt[1].raw_key, StoredKey(TestBlobKey(3).hash));
  EXPECT_EQ(loaded.corrupt[1].status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(loaded.corrupt[1].status.message(), TestBlobKey(3).ToHex()));
  EXPECT_EQ(store_->Stats().corrupt_records, 2u);

  absl::StatusOr<BlobMeta> get = store_->GetBlob(TestBlobKey(3));
  EXPECT_CODE(get, absl::StatusCode::kDataLoss);
  EXPECT_CODE(store_->GetNamespace(wrong), absl::StatusCode::kDataLoss);

  // The node's repair: delete what does not decode.
  MetaBatch repair;
  repair.DeleteBlob(TestBlobKey(3));
  repair.DeleteNamespace(wrong);
  ASSERT_OK(store_->Apply(repair));
  EXPECT_EQ(LoadEverything().summary, (MetaLoadSummary{.namespaces = 1, .blobs = 9}));
}

TEST_P(MetaStoreConformanceTest, LoadAllStopsAtACallbackError) {
  PutBlobs(0, 10);
  int seen = 0;
  MetaLoadCallbacks callbacks{
      .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
      .on_blob =
          [&](BlobMeta) { return ++seen == 4 ? absl::AbortedError("enough") : absl::OkStatus(); }};
  EXPECT_CODE(store_->LoadAll(callbacks), absl::StatusCode::kAborted);
  EXPECT_EQ(seen, 4);
}

TEST_P(MetaStoreConformanceTest, LoadAllReadsASnapshotAndCallbacksMayWrite) {
  PutBlobs(0, 10);
  int blobs = 0;
  MetaLoadCallbacks callbacks{
      .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
      .on_blob =
          [&](BlobMeta meta) {
            ++blobs;
            // Deleting every blob and adding new ones changes nothing in this scan.
            MetaBatch batch;
            batch.DeleteBlob(meta.key);
            batch.PutBlob(TestBlob(1000 + meta.generation, ns_));
            return store_->Apply(batch);
          }};
  ASSERT_OK_AND_ASSIGN(MetaLoadSummary summary, store_->LoadAll(callbacks));
  EXPECT_EQ(summary.blobs, 10u);
  EXPECT_EQ(blobs, 10);
  const Loaded after = LoadEverything();
  ASSERT_EQ(after.blobs.size(), 10u);
  for (const BlobMeta& meta : after.blobs) EXPECT_GE(meta.generation, 1000u);
}

TEST_P(MetaStoreConformanceTest, StatsCountApplies) {
  PutBlobs(0, 5);  // sync, 6 ops
  MetaBatch batch;
  batch.DeleteBlob(TestBlobKey(0));
  ASSERT_OK(store_->Apply(batch));
  const MetaStoreStats stats = store_->Stats();
  EXPECT_EQ(stats.applies, 2u);
  EXPECT_EQ(stats.synced_applies, 1u);
  EXPECT_EQ(stats.failed_applies, 0u);
  EXPECT_EQ(stats.ops_applied, 7u);
  EXPECT_GT(stats.bytes_applied, 5 * kBlobMetaMinSize);
  EXPECT_EQ(stats.namespaces, 1u);
  EXPECT_GE(stats.blobs, 4u);  // RocksDB's count is an estimate (deletes are not subtracted)
  EXPECT_GT(stats.bytes_on_disk, 0u);
}

TEST_P(MetaStoreConformanceTest, ConcurrentAppliesAndLoadsAreAtomic) {
  PutBlobs(0, 1);
  constexpr int kThreads = 4;
  constexpr int kBatches = 25;
  constexpr int kPerBatch = 4;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        MetaBatch batch(/*sync=*/b % 2 == 0);
        for (int i = 0; i < kPerBatch; ++i) {
          batch.PutBlob(TestBlob(100000 * (t + 1) + b * kPerBatch + i, ns_));
        }
        EXPECT_OK(store_->Apply(batch));
      }
    });
  }
  // Every snapshot holds whole batches only: 1 + a multiple of kPerBatch blobs.
  for (int i = 0; i < 5; ++i) {
    const Loaded loaded = LoadEverything();
    EXPECT_EQ((loaded.blobs.size() - 1) % kPerBatch, 0u) << loaded.blobs.size();
  }
  for (std::thread& w : writers) w.join();
  EXPECT_EQ(LoadEverything().summary.blobs, 1u + kThreads * kBatches * kPerBatch);
  EXPECT_EQ(store_->Stats().applies, 1u + kThreads * kBatches);
}

INSTANTIATE_TEST_SUITE_P(AllStores, MetaStoreConformanceTest,
                         ::testing::Values(MemoryKind(), RocksKind()),
                         [](const ::testing::TestParamInfo<StoreKind>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace strata::store::meta
