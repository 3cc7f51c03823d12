// NodeEngine: reads under leases (Read, ReadSource, RenewLease, Release) and expiry.
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

using testing::BlobContent;
using testing::MakeBlob;
using testing::PutBlob;
using testing::ReadBytes;
using testing::SmallLayout;
using testing::SmallNamespace;
using testing::SmallOptions;
using testing::WholeBlob;

class NodeEngineReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = NodeEngine::Create(SmallOptions(&clock_)).value();
    blob_ = MakeBlob(ns_, 3, 100);
    key_ = PutBlob(*engine_, ns_, std::nullopt, blob_).value().key;
  }
  uint64_t UsedBytes() const { return engine_->Tiers().Find(Tier::kDram)->used_bytes; }
  absl::StatusOr<ReadReply> ReadWhole(absl::Duration ttl = absl::ZeroDuration()) {
    const ReadRange range = WholeBlob(key_, 3);
    return engine_->Read(ns_, {&range, 1}, ttl);
  }

  FakeClock clock_;
  std::unique_ptr<NodeEngine> engine_;
  const radix::Namespace ns_ = SmallNamespace();
  BlobContent blob_;
  radix::BlobKey key_;
};

TEST_F(NodeEngineReadTest, ReadReturnsLayerRangesAndChecksumsThatMatchTheBytes) {
  // Pages [1, 3) of layer 1 only, and page 0 of both layers.
  const ReadRange ranges[] = {{key_, 1, 2, 1, 2}, {key_, 0, 1, 0, 2}};
  ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, ranges));
  EXPECT_NE(read.lease_id, 0u);
  EXPECT_EQ(read.expiry, clock_.Now() + absl::Seconds(30));
  ASSERT_EQ(read.ranges.size(), 2u);
  const radix::BlobLayout layout = radix::BlobLayout::Create(SmallLayout(), 3).value();

  const ReadRangeReply& r0 = read.ranges[0];
  ASSERT_EQ(r0.layer_ranges.size(), 1u);
  EXPECT_EQ(r0.layer_ranges[0], layout.LayerPageRange(1, 1, 2).value());
  EXPECT_EQ(r0.checksums, (std::vector<uint64_t>{blob_.checksums[4], blob_.checksums[5]}));
  EXPECT_EQ(r0.blob_bytes, blob_.bytes.size());

  const ReadRangeReply& r1 = read.ranges[1];
  ASSERT_EQ(r1.layer_ranges.size(), 2u);
  EXPECT_EQ(r1.checksums, (std::vector<uint64_t>{blob_.checksums[0], blob_.checksums[3]}));

  // Every byte range read through the lease holds the written bytes, chunk by chunk
  // verifiable against the returned checksums.
  for (const ReadRangeReply& r : read.ranges) {
    size_t chunk = 0;
    for (const radix::ByteRange& br : r.layer_ranges) {
      ASSERT_OK_AND_ASSIGN(std::vector<std::byte> got,
                           ReadBytes(*engine_, read.lease_id, key_, br.offset, br.length));
      ASSERT_EQ(0, std::memcmp(got.data(), blob_.bytes.data() + br.offset, br.length));
      for (uint64_t off = 0; off < br.length; off += 128) {
        EXPECT_EQ(ChunkChecksum(absl::MakeConstSpan(got).subspan(off, 128)), r.checksums[chunk++]);
      }
    }
  }
  // The arena offset is where the bytes are for a same-host client.
  EXPECT_EQ(0, std::memcmp(engine_->dram().base() + r0.arena_offset, blob_.bytes.data(),
                           blob_.bytes.size()));
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->hits, 2u);
  ASSERT_OK(engine_->Release(read.lease_id));
}

TEST_F(NodeEngineReadTest, ReadValidatesRanges) {
  auto read = [&](ReadRange range) { return engine_->Read(ns_, {&range, 1}).status(); };
  EXPECT_CODE(engine_->Read(ns_, {}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(ReadWhole(absl::Seconds(-1)), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(read({key_, 0, 0, 0, 2}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(read({key_, 0, 1, 1, 1}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(read({key_, 2, 2, 0, 2}), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(read({key_, 0, 1, 0, 3}), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(read({radix::BlobKey{radix::PrefixHash{1, 1}}, 0, 1, 0, 1}),
              absl::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);  // no lease granted on error
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->misses, 1u);
}

TEST_F(NodeEngineReadTest, NamespacesAreIsolatedAndLayoutsChecked) {
  const radix::Namespace other_tenant = SmallNamespace("globex", "tiny");
  const ReadRange range = WholeBlob(key_, 3);
  EXPECT_CODE(engine_->Read(other_tenant, {&range, 1}), absl::StatusCode::kNotFound);
  radix::KvLayout other_layout = SmallLayout();
  other_layout.tp_world = 2;
  const radix::Namespace same_model_other_layout =
      radix::Namespace::Create("acme", "tiny", other_layout).value();
  EXPECT_CODE(engine_->Read(same_model_other_layout, {&range, 1}),
              absl::StatusCode::kFailedPrecondition);
}

TEST_F(NodeEngineReadTest, ReadSourceChecksTheLease) {
  ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole());
  const BlobContent other = MakeBlob(ns_, 1, 101);
  ASSERT_OK_AND_ASSIGN(CommitPutReply put, PutBlob(*engine_, ns_, std::nullopt, other));
  EXPECT_CODE(engine_->ReadSource(read.lease_id + 1, key_, 0, 1), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->ReadSource(read.lease_id, put.key, 0, 1),
              absl::StatusCode::kPermissionDenied);
  EXPECT_CODE(engine_->ReadSource(read.lease_id, key_, 0, blob_.bytes.size() + 1),
              absl::StatusCode::kOutOfRange);
  EXPECT_CODE(engine_->ReadSource(read.lease_id, key_, blob_.bytes.size() + 1, 0),
              absl::StatusCode::kOutOfRange);
  ASSERT_OK_AND_ASSIGN(HeldSpan empty, engine_->ReadSource(read.lease_id, key_, 5, 0));
  EXPECT_EQ(empty.size(), 0u);
}

TEST_F(NodeEngineReadTest, ReleaseEndsTheLease) {
  ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole());
  EXPECT_EQ(engine_->Tiers().engine.leases, 1u);
  ASSERT_OK_AND_ASSIGN(BlobInfo info, engine_->Stat(key_));
  EXPECT_EQ(info.leases, 1u);
  ASSERT_OK(engine_->Release(read.lease_id));
  EXPECT_CODE(engine_->Release(read.lease_id), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->ReadSource(read.lease_id, key_, 0, 1), absl::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);
  ASSERT_OK_AND_ASSIGN(info, engine_->Stat(key_));
  EXPECT_EQ(info.leases, 0u);
  EXPECT_EQ(info.hits, 1u);
}

TEST_F(NodeEngineReadTest, LeasesExpireAndRenew) {
  ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole(absl::Seconds(10)));
  EXPECT_EQ(read.expiry, clock_.Now() + absl::Seconds(10));
  clock_.Advance(absl::Seconds(8));
  ASSERT_OK_AND_ASSIGN(absl::Time expiry, engine_->RenewLease(read.lease_id, absl::Seconds(10)));
  EXPECT_EQ(expiry, clock_.Now() + absl::Seconds(10));
  EXPECT_CODE(engine_->RenewLease(read.lease_id, absl::Seconds(-1)),
              absl::StatusCode::kInvalidArgument);
  clock_.Advance(absl::Seconds(9));
  ASSERT_OK(engine_->ReadSource(read.lease_id, key_, 0, 1));
  clock_.Advance(absl::Seconds(1));
  EXPECT_CODE(engine_->ReadSource(read.lease_id, key_, 0, 1), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->RenewLease(read.lease_id, absl::Seconds(10)), absl::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);  // reclaimed by the call that found it expired
}

// Issue 12, item 12: leases are bounded in all and per tenant; past a bound Read is
// RESOURCE_EXHAUSTED naming it, another tenant still reads, and a released or reaped lease
// makes room again.
TEST_F(NodeEngineReadTest, LeasesAreBoundedInAllAndPerTenant) {
  NodeEngineOptions options = SmallOptions(&clock_);
  options.max_leases = 5;
  options.max_tenant_leases = 3;
  ASSERT_OK_AND_ASSIGN(engine_, NodeEngine::Create(options));
  key_ = PutBlob(*engine_, ns_, std::nullopt, blob_).value().key;
  const radix::Namespace other = SmallNamespace("other-tenant");
  const BlobContent theirs = MakeBlob(other, 3, 101);
  ASSERT_OK_AND_ASSIGN(const CommitPutReply put, PutBlob(*engine_, other, std::nullopt, theirs));
  const ReadRange their_range = WholeBlob(put.key, 3);

  std::vector<uint64_t> mine;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole());
    mine.push_back(read.lease_id);
  }
  const absl::Status tenant_full = ReadWhole().status();
  EXPECT_CODE(tenant_full, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(tenant_full.message().find("max_tenant_leases"), absl::string_view::npos)
      << tenant_full;
  // Another tenant still reads, up to the total.
  EXPECT_OK(engine_->Read(other, {&their_range, 1}, absl::ZeroDuration()).status());
  EXPECT_OK(engine_->Read(other, {&their_range, 1}, absl::ZeroDuration()).status());
  const absl::Status full = engine_->Read(other, {&their_range, 1}, absl::ZeroDuration()).status();
  EXPECT_CODE(full, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("max_leases"), absl::string_view::npos) << full;
  EXPECT_EQ(engine_->Tiers().engine.leases, 5u);
  // A release makes room for its tenant; expiry and the reaper for everyone.
  ASSERT_OK(engine_->Release(mine[0]));
  EXPECT_OK(ReadWhole().status());
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(engine_->ReapExpired().leases_expired, 5u);
  EXPECT_OK(ReadWhole().status());
}

TEST_F(NodeEngineReadTest, TtlIsClampedAndDefaulted) {
  ASSERT_OK_AND_ASSIGN(ReadReply a, ReadWhole(absl::Hours(5)));
  EXPECT_EQ(a.expiry, clock_.Now() + absl::Minutes(10));
  ASSERT_OK_AND_ASSIGN(ReadReply b, ReadWhole());
  EXPECT_EQ(b.expiry, clock_.Now() + absl::Seconds(30));
  EXPECT_NE(a.lease_id, b.lease_id);
}

TEST_F(NodeEngineReadTest, ExpiredLeaseOfADeletedBlobIsReclaimedByTheReaper) {
  ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole());
  ASSERT_OK(engine_->Delete(key_));
  EXPECT_GT(UsedBytes(), 0u);
  EXPECT_EQ(engine_->Tiers().engine.unlinked_blobs, 1u);
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(engine_->ReapExpired().leases_expired, 0u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(engine_->ReapExpired().leases_expired, 1u);
  EXPECT_EQ(UsedBytes(), 0u);
  EXPECT_EQ(engine_->Tiers().engine.unlinked_blobs, 0u);
  EXPECT_CODE(engine_->Release(read.lease_id), absl::StatusCode::kNotFound);
}

TEST_F(NodeEngineReadTest, BlobEvictedBetweenMatchAndReadIsAMiss) {
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, blob_.tokens));
  ASSERT_EQ(match.matched_pages, 3u);
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1));
  EXPECT_EQ(evicted.blobs_unlinked, 1u);
  EXPECT_EQ(UsedBytes(), 0u);
  const ReadRange range{match.segments[0].blob, 0, 3, 0, 2};
  EXPECT_CODE(engine_->Read(ns_, {&range, 1}), absl::StatusCode::kNotFound);
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.Find(Tier::kDram)->misses, 1u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->evictions, 1u);
}

TEST_F(NodeEngineReadTest, DeleteWhileLeasedKeepsBytesReadableUntilRelease) {
  ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole());
  ASSERT_OK_AND_ASSIGN(DeleteReply deleted, engine_->Delete(key_));
  EXPECT_EQ(deleted.pages_removed, 3u);
  EXPECT_EQ(deleted.blobs_unlinked, 1u);
  // New readers miss it; the lease still reads the exact bytes.
  EXPECT_CODE(ReadWhole(), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->Stat(key_), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> got,
                       ReadBytes(*engine_, read.lease_id, key_, 0, blob_.bytes.size()));
  EXPECT_EQ(got, blob_.bytes);
  EXPECT_GT(UsedBytes(), 0u);
  // The key can be put again meanwhile: a new incarnation with its own extent.
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, blob_));
  ASSERT_OK_AND_ASSIGN(ReadReply fresh, ReadWhole());
  EXPECT_NE(fresh.ranges[0].arena_offset, read.ranges[0].arena_offset);
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->blobs, 2u);
  ASSERT_OK(engine_->Release(read.lease_id));
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->blobs, 1u);
  ASSERT_OK_AND_ASSIGN(got, ReadBytes(*engine_, fresh.lease_id, key_, 0, blob_.bytes.size()));
  EXPECT_EQ(got, blob_.bytes);
}

TEST_F(NodeEngineReadTest, HeldSourceOutlivesItsLease) {
  ASSERT_OK_AND_ASSIGN(ReadReply read, ReadWhole());
  ASSERT_OK_AND_ASSIGN(HeldSpan source, engine_->ReadSource(read.lease_id, key_, 0, 256));
  ASSERT_OK(engine_->Release(read.lease_id));
  ASSERT_OK(engine_->Delete(key_));
  EXPECT_GT(UsedBytes(), 0u);  // a send still in flight reads valid bytes
  EXPECT_EQ(0, std::memcmp(source.data(), blob_.bytes.data(), 256));
  HeldSpan moved = std::move(source);
  EXPECT_FALSE(source.held());  // NOLINT(bugprone-use-after-move)
  moved.Reset();
  EXPECT_EQ(UsedBytes(), 0u);
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

// A blob read options.hot_reads times is reported once; MarkReplicated shows in Match.
TEST(NodeEngineHotBlobsTest, TheReadThatReachesTheThresholdReportsTheBlobOnce) {
  FakeClock clock;
  NodeEngineOptions options = testing::SmallOptions(&clock);
  options.hot_reads = 3;
  std::unique_ptr<NodeEngine> engine = NodeEngine::Create(options).value();
  const radix::Namespace ns = testing::SmallNamespace();
  const testing::BlobContent blob = testing::MakeBlob(ns, 2, 7);
  const radix::BlobKey key = testing::PutBlob(*engine, ns, std::nullopt, blob).value().key;
  const ReadRange range = testing::WholeBlob(key, 2);
  for (int i = 0; i < 2; ++i) ASSERT_OK(engine->Read(ns, {&range, 1}).status());
  EXPECT_TRUE(engine->TakeHotBlobs().empty());
  ASSERT_OK(engine->Read(ns, {&range, 1}).status());
  EXPECT_EQ(engine->TakeHotBlobs(), std::vector<radix::BlobKey>{key});
  ASSERT_OK(engine->Read(ns, {&range, 1}).status());
  EXPECT_TRUE(engine->TakeHotBlobs().empty());  // once

  ASSERT_OK_AND_ASSIGN(MatchResult m, engine->Match(ns, blob.tokens));
  ASSERT_EQ(m.segments.size(), 1u);
  EXPECT_EQ(m.segments[0].replicas, 0u);
  engine->MarkReplicated(key, 2);
  engine->MarkReplicated(radix::BlobKey{radix::PrefixHash{1, 1}}, 2);  // unknown: ignored
  ASSERT_OK_AND_ASSIGN(m, engine->Match(ns, blob.tokens));
  EXPECT_EQ(m.segments[0].replicas, 2u);
  // Tiers counts it, and the blob as a segment's first (no parent); a child is neither.
  ASSERT_OK(testing::PutBlob(*engine, ns, BlobParent{key, 2}, testing::MakeBlob(ns, 1, 8)));
  const NodeTiers tiers = engine->Tiers();
  EXPECT_EQ(tiers.engine.blobs, 2u);
  EXPECT_EQ(tiers.engine.segments, 1u);
  EXPECT_EQ(tiers.engine.replicated_blobs, 1u);
}

}  // namespace
}  // namespace strata::store::core
