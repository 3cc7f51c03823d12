// What only RocksMetaStore does: durability across reopen, its own files, options, and the
// errors of opening. (The shared contract is in meta_store_conformance_test.cc; killed
// writers and other processes in rocks_meta_store_process_test.cc.)
#include "strata/store/meta/rocks_meta_store.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

#include "store/meta/meta_records.h"
#include "store/meta/rocks_test_util.h"
#include "store/meta/test_records.h"
#include "strata/base/status_test_macros.h"

namespace strata::store::meta {
namespace {

class RocksMetaStoreTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> Open(RocksMetaStoreOptions options = {}) {
    options.path = dir_.path();
    return RocksMetaStore::Open(options);
  }

  // Namespace 0 and blobs [first, first + n), in one batch.
  static MetaBatch Blobs(uint64_t first, uint64_t n, bool sync = true) {
    MetaBatch batch(sync);
    batch.PutNamespace(TestNamespace(0));
    for (uint64_t s = first; s < first + n; ++s) batch.PutBlob(TestBlob(s, Ns()));
    return batch;
  }
  static radix::PrefixHash Ns() { return radix::NamespaceHash(TestNamespace(0)); }

  // Every blob's seed (its generation), in key order; EXPECTs no corrupt record.
  static std::vector<uint64_t> LoadSeeds(MetaStore& store) {
    std::vector<uint64_t> seeds;
    MetaLoadCallbacks callbacks{
        .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
        .on_blob =
            [&](BlobMeta meta) {
              EXPECT_EQ(meta, TestBlob(meta.generation, Ns()));
              seeds.push_back(meta.generation);
              return absl::OkStatus();
            }};
    absl::StatusOr<MetaLoadSummary> summary = store.LoadAll(callbacks);
    EXPECT_OK(summary);
    if (summary.ok()) {
      EXPECT_EQ(summary->corrupt_blobs + summary->corrupt_namespaces, 0u);
    }
    std::sort(seeds.begin(), seeds.end());
    return seeds;
  }

  static std::vector<uint64_t> Range(uint64_t first, uint64_t n) {
    std::vector<uint64_t> v;
    for (uint64_t s = first; s < first + n; ++s) v.push_back(s);
    return v;
  }

  ScopedTempDir dir_;
};

TEST_F(RocksMetaStoreTest, ReopenKeepsEverythingWithAndWithoutFlush) {
  for (bool flush_on_close : {true, false}) {
    SCOPED_TRACE(flush_on_close ? "flush on close" : "WAL replay");
    ScopedTempDir dir;
    RocksMetaStoreOptions options{.path = dir.path(), .flush_on_close = flush_on_close};
    {
      ASSERT_OK_AND_ASSIGN(auto store, RocksMetaStore::Open(options));
      ASSERT_OK(store->Apply(Blobs(0, 100)));
      ASSERT_OK(store->Apply(Blobs(100, 100, /*sync=*/false)));
      ASSERT_OK(store->Close());
      EXPECT_CODE(store->Apply(Blobs(0, 1)), absl::StatusCode::kFailedPrecondition);
      EXPECT_CODE(store->GetBlob(TestBlobKey(0)), absl::StatusCode::kFailedPrecondition);
      ASSERT_OK(store->Close());  // idempotent
    }
    ASSERT_OK_AND_ASSIGN(auto store, RocksMetaStore::Open(options));
    EXPECT_EQ(LoadSeeds(*store), Range(0, 200));
    ASSERT_OK_AND_ASSIGN(radix::Namespace ns, store->GetNamespace(Ns()));
    EXPECT_EQ(ns, TestNamespace(0));
    // The reopened store knows the namespace: blob-only batches pass its check.
    MetaBatch more;
    more.PutBlob(TestBlob(200, Ns()));
    ASSERT_OK(store->Apply(more));
  }
}

TEST_F(RocksMetaStoreTest, BatchesAreAllOrNothingAcrossReopen) {
  {
    ASSERT_OK_AND_ASSIGN(auto store, Open());
    ASSERT_OK(store->Apply(Blobs(0, 10)));
    // Deletes 0..4 and puts 10..14 together.
    MetaBatch swap(/*sync=*/true);
    for (uint64_t s = 0; s < 5; ++s) swap.DeleteBlob(TestBlobKey(s));
    for (uint64_t s = 10; s < 15; ++s) swap.PutBlob(TestBlob(s, Ns()));
    ASSERT_OK(store->Apply(swap));
    // Deletes 5..9 and puts a blob of an unknown namespace: refused, nothing applied.
    MetaBatch refused(/*sync=*/true);
    for (uint64_t s = 5; s < 10; ++s) refused.DeleteBlob(TestBlobKey(s));
    refused.PutBlob(TestBlob(20, radix::PrefixHash{1, 1}));
    EXPECT_CODE(store->Apply(refused), absl::StatusCode::kFailedPrecondition);
  }
  ASSERT_OK_AND_ASSIGN(auto store, Open());
  EXPECT_EQ(LoadSeeds(*store), Range(5, 10));
}

TEST_F(RocksMetaStoreTest, SecondOpenOfADirectoryInUseIsFailedPrecondition) {
  ASSERT_OK_AND_ASSIGN(auto first, Open());
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> second = Open();
  EXPECT_CODE(second, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "another strata-node"))
      << second.status();
  first.reset();
  EXPECT_OK(Open());
}

TEST_F(RocksMetaStoreTest, OpenErrors) {
  EXPECT_CODE(RocksMetaStore::Open({}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(Open({.create_if_missing = false}), absl::StatusCode::kNotFound);
  EXPECT_CODE(Open({.max_background_jobs = 0}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(Open({.bloom_bits_per_key = -1}), absl::StatusCode::kInvalidArgument);
  // A path under a regular file cannot be created.
  const std::string file = dir_.path() + "/file";
  std::ofstream(file) << "x";
  EXPECT_CODE(RocksMetaStore::Open({.path = file + "/db"}), absl::StatusCode::kUnavailable);
}

TEST_F(RocksMetaStoreTest, ForeignOrNewerDatabasesAreFailedPrecondition) {
  { ASSERT_OK(Open()); }
  PutRawRocksRecord(dir_.path(), "default", RocksMetaStore::kFormatKey, "2");
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> newer = Open();
  EXPECT_CODE(newer, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(newer.status().message(), "format")) << newer.status();

  PutRawRocksRecord(dir_.path(), "default", RocksMetaStore::kFormatKey, "1");
  PutRawRocksRecord(dir_.path(), "someone_elses", "k", "v");
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> foreign = Open();
  EXPECT_CODE(foreign, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(foreign.status().message(), "not a strata metadata store"))
      << foreign.status();
}

TEST_F(RocksMetaStoreTest, EveryCompressionRoundTrips) {
  for (MetaCompression c : {MetaCompression::kAuto, MetaCompression::kNone, MetaCompression::kLz4,
                            MetaCompression::kZstd}) {
    ScopedTempDir dir;
    RocksMetaStoreOptions options{.path = dir.path(), .compression = c, .bloom_bits_per_key = 0};
    {
      ASSERT_OK_AND_ASSIGN(auto store, RocksMetaStore::Open(options));
      ASSERT_OK(store->Apply(Blobs(0, 50)));
    }
    ASSERT_OK_AND_ASSIGN(auto store, RocksMetaStore::Open(options));
    EXPECT_EQ(LoadSeeds(*store), Range(0, 50));
    EXPECT_OK(store->GetBlob(TestBlobKey(7)));
    EXPECT_CODE(store->GetBlob(TestBlobKey(70)), absl::StatusCode::kNotFound);
  }
}

TEST_F(RocksMetaStoreTest, DamagedTableFileIsDataLoss) {
  {
    ASSERT_OK_AND_ASSIGN(auto store, Open({.compression = MetaCompression::kNone}));
    ASSERT_OK(store->Apply(Blobs(0, 300)));
  }  // flushed into one table file
  std::string sst;
  uintmax_t largest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    if (entry.path().extension() == ".sst" && entry.file_size() > largest) {
      largest = entry.file_size();
      sst = entry.path();
    }
  }
  ASSERT_FALSE(sst.empty());
  {
    std::fstream f(sst, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(largest / 3));
    f.put('\xA5').put('\x5A').put('\xA5');
  }
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> store = Open();
  if (!store.ok()) {
    EXPECT_CODE(store, absl::StatusCode::kDataLoss);
    return;
  }
  MetaLoadCallbacks callbacks{
      .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
      .on_blob = [](BlobMeta) { return absl::OkStatus(); }};
  absl::StatusOr<MetaLoadSummary> summary = (*store)->LoadAll(callbacks);
  EXPECT_CODE(summary, absl::StatusCode::kDataLoss);
}

TEST_F(RocksMetaStoreTest, StatsSeeTheFiles) {
  ASSERT_OK_AND_ASSIGN(auto store, Open());
  ASSERT_OK(store->Apply(Blobs(0, 100)));
  const MetaStoreStats stats = store->Stats();
  EXPECT_EQ(stats.blobs, 100u);
  EXPECT_EQ(stats.namespaces, 1u);
  EXPECT_GE(stats.bytes_on_disk, stats.bytes_applied) << "all of it is in the WAL";
  EXPECT_EQ(store->path(), dir_.path());
}

TEST_F(RocksMetaStoreTest, StatsSeeTheMemoryItHolds) {
  {
    ASSERT_OK_AND_ASSIGN(auto store, Open());
    const uint64_t empty = store->Stats().memtable_bytes;
    ASSERT_OK(store->Apply(Blobs(0, 200)));
    EXPECT_GT(store->Stats().memtable_bytes, empty) << "the records are in the memtable";
    ASSERT_OK(store->Close());  // flushes them into an SST file
  }
  ASSERT_OK_AND_ASSIGN(auto store, Open());
  uint64_t loaded = 0;
  MetaLoadCallbacks callbacks{
      .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
      .on_blob =
          [&](BlobMeta) {
            ++loaded;
            return absl::OkStatus();
          }};
  ASSERT_OK(store->LoadAll(callbacks).status());
  EXPECT_EQ(loaded, 200u);
  const MetaStoreStats stats = store->Stats();
  EXPECT_GT(stats.table_reader_bytes, 0u) << "the SST file's index and filter are open";
  EXPECT_GT(stats.block_cache_bytes, 0u) << "LoadAll read its data blocks through the cache";
}

}  // namespace
}  // namespace strata::store::meta
