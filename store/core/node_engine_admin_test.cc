// NodeEngine: Delete, Pin/Unpin, Stat, List, Tiers, Evict (admin and under pressure),
// namespaces, Drain and the reaper thread.
#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

using testing::BeginBlob;
using testing::BlobContent;
using testing::MakeBlob;
using testing::PutBlob;
using testing::ReadBytes;
using testing::SendBlob;
using testing::SmallNamespace;
using testing::SmallOptions;
using testing::WholeBlob;

class NodeEngineAdminTest : public ::testing::Test {
 protected:
  void SetUp() override { engine_ = NodeEngine::Create(SmallOptions(&clock_)).value(); }
  uint64_t UsedBytes() const { return engine_->Tiers().Find(Tier::kDram)->used_bytes; }
  uint32_t Matched(const radix::Namespace& ns, absl::Span<const radix::TokenId> tokens) {
    return engine_->Match(ns, tokens).value().matched_pages;
  }

  FakeClock clock_;
  std::unique_ptr<NodeEngine> engine_;
  const radix::Namespace ns_ = SmallNamespace();
};

TEST_F(NodeEngineAdminTest, DeleteRemovesTheBlobAndEverythingBelow) {
  const BlobContent a = MakeBlob(ns_, 4, 1), b = MakeBlob(ns_, 2, 2), c = MakeBlob(ns_, 1, 3);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, BlobParent{ca.key, 4}, b));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, PutBlob(*engine_, ns_, BlobParent{ca.key, 2}, c));
  ASSERT_OK_AND_ASSIGN(DeleteReply del_b, engine_->Delete(cb.key));
  EXPECT_EQ(del_b.pages_removed, 2u);
  EXPECT_EQ(del_b.blobs_unlinked, 1u);
  EXPECT_EQ(Matched(ns_, a.tokens), 4u);
  ASSERT_OK_AND_ASSIGN(DeleteReply del_a, engine_->Delete(ca.key));
  EXPECT_EQ(del_a.pages_removed, 5u);  // a's 4 pages and c's branch
  EXPECT_EQ(del_a.blobs_unlinked, 2u);
  EXPECT_EQ(Matched(ns_, a.tokens), 0u);
  EXPECT_CODE(engine_->Stat(cc.key), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->Delete(ca.key), absl::StatusCode::kNotFound);
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.engine.blobs, 0u);
  EXPECT_EQ(tiers.engine.token_only_blobs, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->used_bytes, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->evictions, 0u);  // deletes are not evictions
  EXPECT_EQ(tiers.index.pages, 0u);
}

TEST_F(NodeEngineAdminTest, PinnedBlobsResistDeleteAndEviction) {
  const BlobContent a = MakeBlob(ns_, 2, 4), b = MakeBlob(ns_, 2, 5);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, BlobParent{ca.key, 2}, b));
  ASSERT_OK(engine_->Pin(cb.key));
  ASSERT_OK(engine_->Pin(cb.key));  // idempotent
  EXPECT_CODE(engine_->Delete(cb.key), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(engine_->Delete(ca.key), absl::StatusCode::kFailedPrecondition);  // above a pin
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.pages_evicted, 0u);
  ASSERT_OK_AND_ASSIGN(BlobInfo info, engine_->Stat(cb.key));
  EXPECT_TRUE(info.pinned);
  EXPECT_EQ(engine_->Tiers().index.pinned_nodes, 2u);
  ASSERT_OK(engine_->Unpin(cb.key));
  ASSERT_OK(engine_->Unpin(cb.key));  // idempotent
  EXPECT_EQ(engine_->Tiers().index.pinned_nodes, 0u);
  ASSERT_OK_AND_ASSIGN(evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.pages_evicted, 4u);
  EXPECT_EQ(evicted.blobs_unlinked, 2u);
  EXPECT_CODE(engine_->Pin(cb.key), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->Unpin(cb.key), absl::StatusCode::kNotFound);
}

TEST_F(NodeEngineAdminTest, StatShowsTheRecord) {
  const BlobContent a = MakeBlob(ns_, 3, 6), b = MakeBlob(ns_, 2, 7);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  clock_.Advance(absl::Seconds(3));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, BlobParent{ca.key, 2}, b));
  ASSERT_OK_AND_ASSIGN(BlobInfo info, engine_->Stat(cb.key, /*with_tokens=*/true));
  EXPECT_EQ(info.key, cb.key);
  EXPECT_EQ(info.namespace_hash, radix::NamespaceHash(ns_));
  EXPECT_EQ(info.tenant, "acme");
  EXPECT_EQ(info.model, "tiny");
  EXPECT_EQ(info.layout, ns_.layout());
  EXPECT_EQ(info.parent, (BlobParent{ca.key, 2}));
  EXPECT_EQ(info.start_hash, radix::PrefixHashAt(radix::NamespaceHash(ns_),
                                                 absl::MakeConstSpan(a.tokens).first(8), 4));
  EXPECT_EQ(info.first_page, 2u);
  EXPECT_EQ(info.pages, 2u);
  EXPECT_EQ(info.bytes, 512u);
  EXPECT_EQ(info.blob_checksum, BlobChecksum(b.checksums));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kDram});
  EXPECT_GE(info.extent.length, 512u);
  EXPECT_EQ(info.pages_in_index, 2u);
  EXPECT_EQ(info.created, clock_.Now());
  EXPECT_EQ(info.hits, 0u);
  EXPECT_EQ(info.tokens, b.tokens);
  ASSERT_OK_AND_ASSIGN(BlobInfo no_tokens, engine_->Stat(ca.key));
  EXPECT_TRUE(no_tokens.tokens.empty());
  EXPECT_FALSE(no_tokens.parent.has_value());
  EXPECT_EQ(no_tokens.created, clock_.Now() - absl::Seconds(3));
  clock_.Advance(absl::Seconds(1));
  const ReadRange range = WholeBlob(ca.key, 3);
  ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, {&range, 1}));
  ASSERT_OK_AND_ASSIGN(info, engine_->Stat(ca.key));
  EXPECT_EQ(info.hits, 1u);
  EXPECT_EQ(info.last_access, clock_.Now());
  EXPECT_CODE(engine_->Stat(radix::BlobKey{}), absl::StatusCode::kNotFound);
}

TEST_F(NodeEngineAdminTest, ListPagesInKeyOrderWithANamespaceFilter) {
  const radix::Namespace other = SmallNamespace("globex", "tiny");
  std::set<radix::BlobKey> mine, theirs;
  for (uint64_t i = 0; i < 25; ++i) {
    const radix::Namespace& ns = i % 3 == 0 ? other : ns_;
    ASSERT_OK_AND_ASSIGN(CommitPutReply c, PutBlob(*engine_, ns, std::nullopt, MakeBlob(ns, 1, i)));
    (i % 3 == 0 ? theirs : mine).insert(c.key);
  }
  auto list_all = [&](std::optional<radix::PrefixHash> filter) {
    std::vector<radix::BlobKey> keys;
    ListRequest request{filter, "", 4};
    int pages = 0;
    while (true) {
      absl::StatusOr<ListReply> reply = engine_->List(request);
      EXPECT_OK(reply);
      ++pages;
      EXPECT_LE(reply->blobs.size(), 4u);
      for (const BlobInfo& b : reply->blobs) keys.push_back(b.key);
      if (reply->next_page_token.empty()) break;
      request.page_token = reply->next_page_token;
    }
    return std::make_pair(keys, pages);
  };
  auto [all, all_pages] = list_all(std::nullopt);
  EXPECT_EQ(all.size(), 25u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(all_pages, 7);
  auto [mine_listed, mine_pages] = list_all(radix::NamespaceHash(ns_));
  EXPECT_EQ(std::set<radix::BlobKey>(mine_listed.begin(), mine_listed.end()), mine);
  EXPECT_EQ(mine_listed.size(), mine.size());
  ASSERT_OK_AND_ASSIGN(ListReply def, engine_->List({}));
  EXPECT_EQ(def.blobs.size(), 25u);  // default limit 100
  EXPECT_TRUE(def.next_page_token.empty());
  EXPECT_CODE(engine_->List({std::nullopt, "garbage", 0}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(engine_->List({std::nullopt, "v1:0123", 0}), absl::StatusCode::kInvalidArgument);
}

TEST_F(NodeEngineAdminTest, NamespacesAreIsolated) {
  const radix::Namespace other = SmallNamespace("globex", "tiny");
  const radix::Namespace unknown = SmallNamespace("initech", "tiny");
  const BlobContent blob = MakeBlob(ns_, 2, 8);
  EXPECT_CODE(engine_->Match(ns_, blob.tokens), absl::StatusCode::kNotFound);  // cold node
  ASSERT_OK_AND_ASSIGN(CommitPutReply mine, PutBlob(*engine_, ns_, std::nullopt, blob));
  ASSERT_OK_AND_ASSIGN(CommitPutReply theirs, PutBlob(*engine_, other, std::nullopt, blob));
  EXPECT_NE(mine.key, theirs.key);
  EXPECT_EQ(theirs.indexed_pages, 2u);  // same tokens, own pages
  ASSERT_OK_AND_ASSIGN(MatchResult m, engine_->Match(other, blob.tokens));
  ASSERT_EQ(m.segments.size(), 1u);
  EXPECT_EQ(m.segments[0].blob, theirs.key);
  EXPECT_CODE(engine_->Match(unknown, blob.tokens), absl::StatusCode::kNotFound);
  // A parent from another namespace is refused.
  EXPECT_CODE(BeginBlob(*engine_, other, BlobParent{mine.key, 2}, MakeBlob(other, 1, 9)),
              absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(engine_->Delete(mine.key));
  ASSERT_OK_AND_ASSIGN(m, engine_->Match(other, blob.tokens));
  EXPECT_EQ(m.matched_pages, 2u);
  EXPECT_EQ(engine_->Tiers().engine.namespaces, 2u);
}

TEST_F(NodeEngineAdminTest, NamespacesOfDifferentPageSizesUseTheirOwnTrees) {
  const radix::Namespace wide = SmallNamespace("acme", "tiny", 8);
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, 2, 10)));
  ASSERT_OK(PutBlob(*engine_, wide, std::nullopt, MakeBlob(wide, 3, 11)));
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.index.pages, 5u);
  EXPECT_EQ(tiers.index.roots, 2u);
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.pages_evicted, 5u);
  EXPECT_EQ(evicted.blobs_unlinked, 2u);
}

TEST_F(NodeEngineAdminTest, EvictFreesTheRequestedBytesOldestFirst) {
  std::vector<BlobContent> blobs;
  std::vector<radix::BlobKey> keys;
  for (uint64_t i = 0; i < 6; ++i) {
    blobs.push_back(MakeBlob(ns_, 2, 20 + i));
    keys.push_back(PutBlob(*engine_, ns_, std::nullopt, blobs.back()).value().key);
  }
  // Read blob 0 so it is the most recently used.
  const ReadRange r0 = WholeBlob(keys[0], 2);
  ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, {&r0, 1}));
  ASSERT_OK(engine_->Release(read.lease_id));
  const uint64_t used = UsedBytes();
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 4096));
  EXPECT_GE(evicted.bytes_freed, 4096u);
  EXPECT_EQ(UsedBytes(), used - evicted.bytes_freed);
  EXPECT_CODE(engine_->Stat(keys[1]), absl::StatusCode::kNotFound);  // least recent
  EXPECT_OK(engine_->Stat(keys[0]));
  EXPECT_CODE(engine_->Evict(Tier::kSsd, 1), absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(evicted, engine_->Evict(Tier::kDram, 0));
  EXPECT_EQ(evicted.pages_evicted, 0u);
}

TEST(NodeEngineEvictionTest, PressureEvictsButNeverLeasedOrPinnedBytes) {
  FakeClock clock;
  // 16 extents of 4 KiB; each blob of 2 pages takes one.
  NodeEngineOptions options = SmallOptions(&clock, 64 << 10);
  ASSERT_OK_AND_ASSIGN(auto engine, NodeEngine::Create(options));
  const radix::Namespace ns = SmallNamespace();
  std::vector<BlobContent> blobs;
  std::vector<radix::BlobKey> keys;
  for (uint64_t i = 0; i < 16; ++i) {
    blobs.push_back(MakeBlob(ns, 2, 100 + i));
    keys.push_back(PutBlob(*engine, ns, std::nullopt, blobs.back()).value().key);
  }
  EXPECT_EQ(engine->Tiers().Find(Tier::kDram)->free_bytes(), 0u);
  // Blob 0 (oldest) is leased and then deleted from under the lease; blob 1 is leased;
  // blob 2 is pinned.
  const ReadRange r0 = WholeBlob(keys[0], 2), r1 = WholeBlob(keys[1], 2);
  ASSERT_OK_AND_ASSIGN(ReadReply lease0, engine->Read(ns, {&r0, 1}));
  ASSERT_OK_AND_ASSIGN(ReadReply lease1, engine->Read(ns, {&r1, 1}));
  ASSERT_OK(engine->Delete(keys[0]));
  ASSERT_OK(engine->Pin(keys[2]));
  // 13 more puts: each needs an eviction. The 13 unheld blobs go, oldest first.
  for (uint64_t i = 0; i < 13; ++i) {
    ASSERT_OK(PutBlob(*engine, ns, std::nullopt, MakeBlob(ns, 2, 200 + i))) << i;
  }
  NodeTiers tiers = engine->Tiers();
  EXPECT_EQ(tiers.Find(Tier::kDram)->evictions, 13u);
  EXPECT_OK(engine->Stat(keys[1]));
  EXPECT_OK(engine->Stat(keys[2]));
  for (uint64_t i = 3; i < 16; ++i) EXPECT_CODE(engine->Stat(keys[i]), absl::StatusCode::kNotFound);
  // Leased bytes are intact, including those of the deleted blob.
  for (const auto& [lease, i] : {std::pair{lease0.lease_id, 0}, std::pair{lease1.lease_id, 1}}) {
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> got,
                         ReadBytes(*engine, lease, keys[i], 0, blobs[i].bytes.size()));
    EXPECT_EQ(got, blobs[i].bytes) << i;
  }
  // Now only the 13 new blobs can go; the leased blob's node is taken last. Put 13
  // more, which evicts all the new ones: still nothing held is freed.
  for (uint64_t i = 0; i < 13; ++i) {
    ASSERT_OK(PutBlob(*engine, ns, std::nullopt, MakeBlob(ns, 2, 300 + i))) << i;
  }
  EXPECT_OK(engine->Stat(keys[1]));
  EXPECT_OK(engine->Stat(keys[2]));
  // A put that needs more than can go fails with RESOURCE_EXHAUSTED; the leased blob
  // is never touched.
  ASSERT_OK(engine->Pin(PutBlob(*engine, ns, std::nullopt, MakeBlob(ns, 2, 400)).value().key));
  // 210 pages = 53760 B = 14 extents; only 12 can be freed (4 of 16 are held).
  EXPECT_CODE(BeginBlob(*engine, ns, std::nullopt, MakeBlob(ns, 210, 401)),
              absl::StatusCode::kResourceExhausted);
  EXPECT_OK(engine->Stat(keys[1]));
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> got,
                       ReadBytes(*engine, lease1.lease_id, keys[1], 0, blobs[1].bytes.size()));
  EXPECT_EQ(got, blobs[1].bytes);
  EXPECT_OK(engine->Stat(keys[2]));
  ASSERT_OK(engine->Release(lease0.lease_id));
  ASSERT_OK(engine->Release(lease1.lease_id));
  tiers = engine->Tiers();
  EXPECT_EQ(tiers.engine.unlinked_blobs, 0u);
  EXPECT_EQ(tiers.engine.pending_puts, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->blobs, tiers.engine.blobs);
  EXPECT_EQ(tiers.Find(Tier::kDram)->blobs,
            3u);  // only the leased blob 1, the pinned 2 and 400 are left
}

TEST_F(NodeEngineAdminTest, DrainWaitsForPutsAndLeases) {
  const BlobContent a = MakeBlob(ns_, 1, 30), b = MakeBlob(ns_, 1, 31);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(BeginPutReply pending, BeginBlob(*engine_, ns_, std::nullopt, b));
  const ReadRange range = WholeBlob(ca.key, 1);
  ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, {&range, 1}));
  EXPECT_CODE(engine_->Drain(absl::Milliseconds(1)), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(engine_->Tiers().engine.draining);
  EXPECT_CODE(BeginBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, 1, 32)),
              absl::StatusCode::kUnavailable);
  // In-flight work still completes while draining.
  ASSERT_OK(SendBlob(*engine_, pending.put_id, b));
  ASSERT_OK(engine_->CommitPut(pending.put_id));
  absl::Status drained;
  std::thread drainer([&] { drained = engine_->Drain(absl::Seconds(20)); });
  absl::SleepFor(absl::Milliseconds(5));
  ASSERT_OK(engine_->Release(read.lease_id));
  drainer.join();
  EXPECT_OK(drained);
}

TEST(NodeEngineReaperTest, BackgroundThreadReclaimsExpiredLeasesAndPuts) {
  FakeClock clock;
  NodeEngineOptions options = SmallOptions(&clock);
  options.reap_interval = absl::Milliseconds(1);
  ASSERT_OK_AND_ASSIGN(auto engine, NodeEngine::Create(options));
  const radix::Namespace ns = SmallNamespace();
  const BlobContent a = MakeBlob(ns, 1, 40);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine, ns, std::nullopt, a));
  const ReadRange range = WholeBlob(ca.key, 1);
  ASSERT_OK(engine->Read(ns, {&range, 1}));
  ASSERT_OK(BeginBlob(*engine, ns, std::nullopt, MakeBlob(ns, 1, 41)));
  ASSERT_OK(engine->Delete(ca.key));
  clock.Advance(absl::Minutes(2));
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  NodeTiers tiers = engine->Tiers();
  while ((tiers.engine.leases > 0 || tiers.engine.pending_puts > 0) && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
    tiers = engine->Tiers();
  }
  EXPECT_EQ(tiers.engine.leases, 0u);
  EXPECT_EQ(tiers.engine.pending_puts, 0u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->used_bytes, 0u);
}

}  // namespace
}  // namespace strata::store::core
