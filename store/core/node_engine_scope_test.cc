// NodeEngine under an AccessScope (issue 12, item 9): a caller outside a namespace's tenant
// label gets, from every call, exactly the status an engine that never held the data gives
// (code and message) — no existence oracle — and sees none of it in List or
// PullRebuildTasks; a label listed by several scopes is shared.
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/core/access_scope.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

using testing::BeginBlob;
using testing::BlobContent;
using testing::MakeBlob;
using testing::PutBlob;
using testing::SmallNamespace;
using testing::SmallOptions;
using testing::WholeBlob;

// Code and message of a result.
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}
absl::Status StatusOf(const absl::Status& status) { return status; }

class NodeEngineScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NodeEngineOptions options = SmallOptions(&clock_);
    options.text_bytes = uint64_t{1} << 20;  // dropped bytes leave TEXT blobs to rebuild
    engine_ = NodeEngine::Create(options).value();
    // The reference: an engine that never held anything.
    empty_ = NodeEngine::Create(options).value();
  }

  FakeClock clock_;
  std::unique_ptr<NodeEngine> engine_;
  std::unique_ptr<NodeEngine> empty_;
  const radix::Namespace acme_ = SmallNamespace("acme");
  const radix::Namespace shared_ = SmallNamespace("shared-prompts");
  const AccessScope acme_scope_ = AccessScope::Of({"acme", "shared-prompts"});
  const AccessScope globex_scope_ = AccessScope::Of({"globex", "shared-prompts"});
};

TEST_F(NodeEngineScopeTest, AnotherTenantsNamespaceBlobsLeasesAndPutsAnswerAsAbsent) {
  const BlobContent blob = MakeBlob(acme_, 3, 1);
  ASSERT_OK_AND_ASSIGN(const CommitPutReply put, PutBlob(*engine_, acme_, std::nullopt, blob));
  const radix::BlobKey key = put.key;
  const ReadRange range = WholeBlob(key, 3);
  ASSERT_OK_AND_ASSIGN(const ReadReply lease, engine_->Read(acme_, {&range, 1}, {}, acme_scope_));
  const BlobContent pending_blob = MakeBlob(acme_, 2, 2);
  ASSERT_OK_AND_ASSIGN(const BeginPutReply pending,
                       BeginBlob(*engine_, acme_, std::nullopt, pending_blob));
  const uint64_t put_id = pending.put_id;

  // Each call by globex against acme's data, next to the same call on an engine that never
  // held it (same namespace, key, lease id, put id).
  auto same = [&](const absl::Status& scoped, const absl::Status& absent, const char* call) {
    EXPECT_FALSE(scoped.ok()) << call;
    EXPECT_EQ(scoped.code(), absent.code()) << call << ": " << scoped << " vs " << absent;
    EXPECT_EQ(scoped.message(), absent.message()) << call;
  };
  same(StatusOf(engine_->Match(acme_, blob.tokens, LookupPhase::kUnspecified, globex_scope_)),
       StatusOf(empty_->Match(acme_, blob.tokens)), "Match");
  same(StatusOf(engine_->Prefetch(acme_, blob.tokens, globex_scope_)),
       StatusOf(empty_->Prefetch(acme_, blob.tokens)), "Prefetch");
  same(StatusOf(engine_->Read(acme_, {&range, 1}, {}, globex_scope_)),
       StatusOf(empty_->Read(acme_, {&range, 1})), "Read");
  same(StatusOf(engine_->Stat(key, true, globex_scope_)), StatusOf(empty_->Stat(key, true)),
       "Stat");
  same(StatusOf(engine_->Pin(key, globex_scope_)), StatusOf(empty_->Pin(key)), "Pin");
  same(StatusOf(engine_->Unpin(key, globex_scope_)), StatusOf(empty_->Unpin(key)), "Unpin");
  same(StatusOf(engine_->RequestRebuild(key, true, globex_scope_)),
       StatusOf(empty_->RequestRebuild(key, true)), "RequestRebuild");
  same(StatusOf(engine_->Delete(key, globex_scope_)), StatusOf(empty_->Delete(key)), "Delete");
  same(StatusOf(engine_->ReadSource(lease.lease_id, key, 0, 16, globex_scope_)),
       StatusOf(empty_->ReadSource(lease.lease_id, key, 0, 16)), "ReadSource");
  same(StatusOf(engine_->RenewLease(lease.lease_id, absl::Seconds(5), globex_scope_)),
       StatusOf(empty_->RenewLease(lease.lease_id, absl::Seconds(5))), "RenewLease");
  same(StatusOf(engine_->Release(lease.lease_id, globex_scope_)),
       StatusOf(empty_->Release(lease.lease_id)), "Release");
  same(StatusOf(engine_->PutTarget(put_id, globex_scope_)), StatusOf(empty_->PutTarget(put_id)),
       "PutTarget");
  same(StatusOf(engine_->PutReceived(put_id, 0, 1, globex_scope_)),
       StatusOf(empty_->PutReceived(put_id, 0, 1)), "PutReceived");
  same(StatusOf(engine_->CommitPut(put_id, globex_scope_)), StatusOf(empty_->CommitPut(put_id)),
       "CommitPut");
  same(StatusOf(engine_->AbortPut(put_id, globex_scope_)), StatusOf(empty_->AbortPut(put_id)),
       "AbortPut");
  // Writing into acme's namespace is refused outright (that tells nothing either).
  EXPECT_CODE(engine_->BeginPut(acme_, testing::PutRequestOf(std::nullopt, MakeBlob(acme_, 1, 9)),
                                globex_scope_),
              absl::StatusCode::kPermissionDenied);
  ASSERT_OK_AND_ASSIGN(const ListReply listed, engine_->List(ListRequest{}, globex_scope_));
  EXPECT_TRUE(listed.blobs.empty());

  // Nothing was touched: acme still has its blob, lease and put, unpinned and whole.
  ASSERT_OK_AND_ASSIGN(const BlobInfo info, engine_->Stat(key, false, acme_scope_));
  EXPECT_FALSE(info.pinned);
  EXPECT_OK(engine_->RenewLease(lease.lease_id, absl::Seconds(5), acme_scope_));
  EXPECT_OK(engine_->Release(lease.lease_id, acme_scope_));
  EXPECT_OK(engine_->AbortPut(put_id, acme_scope_));
  ASSERT_OK_AND_ASSIGN(const ListReply mine, engine_->List(ListRequest{}, acme_scope_));
  EXPECT_EQ(mine.blobs.size(), 1u);
  EXPECT_EQ(engine_->Match(acme_, blob.tokens, LookupPhase::kUnspecified, acme_scope_)
                .value()
                .matched_pages,
            3u);
}

TEST_F(NodeEngineScopeTest, ASharedLabelIsReadByEveryTenantListingIt) {
  const BlobContent blob = MakeBlob(shared_, 2, 3);
  ASSERT_OK_AND_ASSIGN(const CommitPutReply put, PutBlob(*engine_, shared_, std::nullopt, blob));
  const ReadRange range = WholeBlob(put.key, 2);
  for (const AccessScope* scope : {&acme_scope_, &globex_scope_}) {
    ASSERT_OK_AND_ASSIGN(const ReadReply read, engine_->Read(shared_, {&range, 1}, {}, *scope));
    EXPECT_OK(engine_->Release(read.lease_id, *scope));
    EXPECT_OK(engine_->Stat(put.key, false, *scope));
  }
  EXPECT_CODE(engine_->Stat(put.key, false, AccessScope::Of({"acme"})),
              absl::StatusCode::kNotFound);
  EXPECT_OK(engine_->Stat(put.key, false, AccessScope::Of({"*"})));
}

// Issue 12, item 9: what each tenant label's blobs hold, per tier (Tiers().tenants).
TEST_F(NodeEngineScopeTest, TiersCountEachTenantLabelsBlobsAndBytes) {
  const radix::Namespace globex = SmallNamespace("globex");
  ASSERT_OK(PutBlob(*engine_, acme_, std::nullopt, MakeBlob(acme_, 3, 6)).status());
  ASSERT_OK(PutBlob(*engine_, acme_, std::nullopt, MakeBlob(acme_, 1, 7)).status());
  ASSERT_OK_AND_ASSIGN(const CommitPutReply g,
                       PutBlob(*engine_, globex, std::nullopt, MakeBlob(globex, 2, 8)));
  NodeTiers tiers = engine_->Tiers();
  ASSERT_EQ(tiers.tenants.size(), 2u);
  EXPECT_EQ(tiers.tenants[0].tenant, "acme");
  EXPECT_EQ(tiers.tenants[0].blobs, 2u);
  EXPECT_EQ(tiers.tenants[0].dram_bytes, 2u * 4096);  // extents are whole 4 KiB granules
  EXPECT_EQ(tiers.tenants[1].tenant, "globex");
  EXPECT_EQ(tiers.tenants[1].dram_bytes, 4096u);
  // Dropped to TEXT: no bytes, one TEXT blob.
  ASSERT_OK(engine_->Evict(Tier::kDram, uint64_t{1} << 20).status());
  tiers = engine_->Tiers();
  ASSERT_EQ(tiers.tenants.size(), 2u);
  EXPECT_EQ(tiers.tenants[1].dram_bytes, 0u);
  EXPECT_EQ(tiers.tenants[1].text_blobs, 1u);
  ASSERT_OK(engine_->Delete(g.key).status());
  tiers = engine_->Tiers();
  ASSERT_EQ(tiers.tenants.size(), 1u);
  EXPECT_EQ(tiers.tenants[0].tenant, "acme");
}

// Past kMaxReportedTenants labels, the rest are summed under "(other)" (an open node's
// clients may make any number of labels; a metrics scrape must stay bounded).
TEST_F(NodeEngineScopeTest, TiersListAtMostTheReportedTenantsAndSumTheRest) {
  constexpr int kLabels = static_cast<int>(report::kMaxReportedTenants) + 44;
  for (int i = 0; i < kLabels; ++i) {
    const radix::Namespace ns = SmallNamespace(absl::StrFormat("t%03d", i));
    ASSERT_OK(PutBlob(*engine_, ns, std::nullopt, MakeBlob(ns, 1, 100 + i)).status());
  }
  const NodeTiers tiers = engine_->Tiers();
  ASSERT_EQ(tiers.tenants.size(), report::kMaxReportedTenants + 1);
  EXPECT_EQ(tiers.tenants.front().tenant, "t000");
  EXPECT_EQ(tiers.tenants.back().tenant, report::kOtherTenants);
  EXPECT_EQ(tiers.tenants.back().blobs, 44u);
}

TEST_F(NodeEngineScopeTest, RebuildTasksGoOnlyToWorkersWhoseScopeHasThem) {
  const radix::Namespace globex = SmallNamespace("globex");
  const BlobContent a = MakeBlob(acme_, 1, 4), g = MakeBlob(globex, 1, 5);
  ASSERT_OK_AND_ASSIGN(const CommitPutReply pa, PutBlob(*engine_, acme_, std::nullopt, a));
  ASSERT_OK_AND_ASSIGN(const CommitPutReply pg, PutBlob(*engine_, globex, std::nullopt, g));
  ASSERT_OK(engine_->Evict(Tier::kDram, uint64_t{1} << 20).status());  // both to TEXT
  ASSERT_OK(engine_->RequestRebuild(pa.key, false, acme_scope_).status());
  ASSERT_OK(engine_->RequestRebuild(pg.key, false, globex_scope_).status());
  // globex's worker gets globex's task though acme's was queued first; acme's stays queued.
  ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> taken,
                       engine_->PullRebuildTasks(8, absl::ZeroDuration(), globex_scope_));
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].key, pg.key);
  ASSERT_OK_AND_ASSIGN(taken, engine_->PullRebuildTasks(8, absl::Milliseconds(50), globex_scope_));
  EXPECT_TRUE(taken.empty());
  ASSERT_OK_AND_ASSIGN(taken, engine_->PullRebuildTasks(8, absl::ZeroDuration(), acme_scope_));
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].key, pa.key);
}

}  // namespace
}  // namespace strata::store::core
