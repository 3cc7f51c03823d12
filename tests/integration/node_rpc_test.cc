// Every Store and Admin RPC end to end: a real strata-node process on loopback (port 0), a
// real gRPC channel, generated stubs. No bytes are sent, so this file covers the control
// plane; node_server_blob_test.cc covers calls on committed blobs.
#include <memory>
#include <string>
#include <vector>

#include <signal.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/status_convert.h"
#include "strata/testing/node_process.h"
#include "strata/testing/shared_node_test.h"
#include "strata/testing/wire_requests.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_rpc_test {

using strata::testing::BeginPutFor;
using strata::testing::Call;
using strata::testing::ContextWithDeadline;
using strata::testing::FromWire;
using strata::testing::KeyFromRoot;
using strata::testing::NodeProcess;
using strata::testing::SharedNodeTest;
using strata::testing::TinyNamespace;
using strata::testing::TokenRun;
using strata::testing::ToWire;

namespace {

class NodeRpcTest : public SharedNodeTest {
 protected:
  absl::Status Match(const radix::Namespace& ns, const std::vector<uint32_t>& tokens,
                     v1::MatchResponse* response) {
    v1::MatchRequest request;
    *request.mutable_ns() = ToWire(ns);
    proto::TokensToProto(tokens, request.mutable_tokens());
    return Call(store_->Match(ContextWithDeadline().get(), request, response));
  }
  absl::Status BeginPut(const v1::BeginPutRequest& request, v1::BeginPutResponse* response) {
    return Call(store_->BeginPut(ContextWithDeadline().get(), request, response));
  }
  absl::Status CommitPut(uint64_t put_id) {
    v1::CommitPutRequest request;
    request.set_put_id(put_id);
    v1::CommitPutResponse response;
    return Call(store_->CommitPut(ContextWithDeadline().get(), request, &response));
  }
  absl::Status AbortPut(uint64_t put_id) {
    v1::AbortPutRequest request;
    request.set_put_id(put_id);
    v1::AbortPutResponse response;
    return Call(store_->AbortPut(ContextWithDeadline().get(), request, &response));
  }
  absl::StatusOr<v1::TiersResponse> Tiers() {
    v1::TiersResponse response;
    absl::Status s =
        Call(admin_->Tiers(ContextWithDeadline().get(), v1::TiersRequest(), &response));
    if (!s.ok()) return s;
    return response;
  }
};

TEST_F(NodeRpcTest, HealthReportsServingVersionAndDataPlane) {
  v1::HealthResponse health;
  ASSERT_OK(Call(store_->Health(ContextWithDeadline().get(), v1::HealthRequest(), &health)));
  EXPECT_EQ(health.state(), v1::SERVING_STATE_SERVING);
  EXPECT_EQ(health.version(), STRATA_VERSION);
  EXPECT_TRUE(absl::StartsWith(health.data_plane().ucx_address(), "127.0.0.1:"));
  EXPECT_EQ(health.data_plane().ucx_address(), node_->data_plane_address());
  EXPECT_LT(health.uptime_ms(), 10u * 60 * 1000);
}

TEST_F(NodeRpcTest, MatchUnknownNamespaceIsNotFoundThenKnownAfterBeginPut) {
  const radix::Namespace ns = TinyNamespace("match-tenant");
  const std::vector<uint32_t> tokens = TokenRun(100, 8);
  v1::MatchResponse match;
  const absl::Status cold = Match(ns, tokens, &match);
  EXPECT_CODE(cold, absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(cold.message(), "namespace")) << cold;

  v1::BeginPutResponse put;
  ASSERT_OK(BeginPut(BeginPutFor(ns, tokens), &put));
  ASSERT_OK(Match(ns, tokens, &match));  // known now; nothing committed
  EXPECT_EQ(match.matched_pages(), 0u);
  EXPECT_EQ(match.segments_size(), 0);
  EXPECT_FALSE(match.truncated());
  ASSERT_OK(AbortPut(put.put_id()));
}

TEST_F(NodeRpcTest, BeginPutThenCommitWithoutBytesIsFailedPreconditionThenAbort) {
  const radix::Namespace ns = TinyNamespace("put-tenant");
  const std::vector<uint32_t> tokens = TokenRun(7, 12);  // 3 pages
  v1::BeginPutRequest request = BeginPutFor(ns, tokens);
  *request.mutable_key() = ToWire(KeyFromRoot(ns, tokens));  // the client's key agrees
  v1::BeginPutResponse put;
  ASSERT_OK(BeginPut(request, &put));
  EXPECT_FALSE(put.exists());
  EXPECT_NE(put.put_id(), 0u);
  EXPECT_EQ(FromWire(put.key()), KeyFromRoot(ns, tokens));
  EXPECT_GT(put.expires_in_ms(), 50000u);  // default put TTL 60 s
  EXPECT_LE(put.expires_in_ms(), 60000u);
  EXPECT_EQ(put.data_plane().ucx_address(), node_->data_plane_address());

  // The same blob again while pending: nothing to send.
  v1::BeginPutResponse again;
  ASSERT_OK(BeginPut(BeginPutFor(ns, tokens), &again));
  EXPECT_TRUE(again.exists());
  EXPECT_EQ(again.put_id(), 0u);
  EXPECT_EQ(FromWire(again.key()), FromWire(put.key()));

  const absl::Status commit = CommitPut(put.put_id());
  EXPECT_CODE(commit, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(commit.message(), "bytes")) << commit;

  ASSERT_OK_AND_ASSIGN(v1::TiersResponse tiers, Tiers());
  EXPECT_GE(tiers.engine().pending_puts(), 1u);
  EXPECT_GT(tiers.tiers(0).used_bytes(), 0u);  // the reservation

  ASSERT_OK(AbortPut(put.put_id()));
  EXPECT_CODE(AbortPut(put.put_id()), absl::StatusCode::kNotFound);
  EXPECT_CODE(CommitPut(put.put_id()), absl::StatusCode::kNotFound);
  // Aborted: the key is free again.
  ASSERT_OK(BeginPut(BeginPutFor(ns, tokens), &again));
  EXPECT_FALSE(again.exists());
  ASSERT_OK(AbortPut(again.put_id()));
}

TEST_F(NodeRpcTest, BeginPutWithWrongClientKeyIsInvalidArgument) {
  const radix::Namespace ns = TinyNamespace("key-tenant");
  v1::BeginPutRequest request = BeginPutFor(ns, TokenRun(1, 4));
  *request.mutable_key() = ToWire(KeyFromRoot(ns, TokenRun(2, 4)));
  v1::BeginPutResponse put;
  EXPECT_CODE(BeginPut(request, &put), absl::StatusCode::kInvalidArgument);
}

TEST_F(NodeRpcTest, BeginPutWithUnknownParentIsFailedPrecondition) {
  const radix::Namespace ns = TinyNamespace("parent-tenant");
  v1::BeginPutRequest request = BeginPutFor(ns, TokenRun(1, 4));
  request.mutable_parent()->mutable_key()->set_hi(0x1234);
  request.mutable_parent()->set_pages(1);
  v1::BeginPutResponse put;
  EXPECT_CODE(BeginPut(request, &put), absl::StatusCode::kFailedPrecondition);
}

TEST_F(NodeRpcTest, ReadRenewReleaseOfUnknownThingsAreNotFound) {
  const radix::Namespace ns = TinyNamespace("read-tenant");
  v1::ReadRequest read;
  *read.mutable_ns() = ToWire(ns);
  v1::ReadRange* range = read.add_ranges();
  range->mutable_blob()->set_hi(42);
  range->set_num_pages(1);
  range->set_layer_end(2);
  v1::ReadResponse lease;
  EXPECT_CODE(Call(store_->Read(ContextWithDeadline().get(), read, &lease)),
              absl::StatusCode::kNotFound);

  v1::RenewLeaseRequest renew;
  renew.set_lease_id(12345);
  v1::RenewLeaseResponse renewed;
  EXPECT_CODE(Call(store_->RenewLease(ContextWithDeadline().get(), renew, &renewed)),
              absl::StatusCode::kNotFound);
  v1::ReleaseRequest release;
  release.set_lease_id(12345);
  v1::ReleaseResponse released;
  EXPECT_CODE(Call(store_->Release(ContextWithDeadline().get(), release, &released)),
              absl::StatusCode::kNotFound);
}

TEST_F(NodeRpcTest, StatPinUnpinDeleteOfUnknownKeyAreNotFound) {
  v1::BlobKey key;
  key.set_hi(0xDEAD);
  key.set_lo(0xBEEF);
  v1::StatRequest stat;
  *stat.mutable_key() = key;
  v1::StatResponse info;
  EXPECT_CODE(Call(store_->Stat(ContextWithDeadline().get(), stat, &info)),
              absl::StatusCode::kNotFound);
  v1::PinRequest pin;
  *pin.mutable_key() = key;
  v1::PinResponse pinned;
  EXPECT_CODE(Call(store_->Pin(ContextWithDeadline().get(), pin, &pinned)),
              absl::StatusCode::kNotFound);
  v1::UnpinRequest unpin;
  *unpin.mutable_key() = key;
  v1::UnpinResponse unpinned;
  EXPECT_CODE(Call(store_->Unpin(ContextWithDeadline().get(), unpin, &unpinned)),
              absl::StatusCode::kNotFound);
  v1::DeleteRequest del;
  *del.mutable_key() = key;
  v1::DeleteResponse deleted;
  EXPECT_CODE(Call(store_->Delete(ContextWithDeadline().get(), del, &deleted)),
              absl::StatusCode::kNotFound);
}

TEST_F(NodeRpcTest, ListOfAnEmptyNodePaginatesToNothing) {
  v1::ListRequest all;
  all.set_limit(5000);  // clamped, not an error
  v1::ListResponse page;
  ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), all, &page)));
  EXPECT_EQ(page.blobs_size(), 0);
  EXPECT_TRUE(page.next_page_token().empty());

  // A well-formed token past any key, and both filters.
  v1::ListRequest after;
  after.set_page_token("v1:" + std::string(32, 'f'));
  ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), after, &page)));
  EXPECT_EQ(page.blobs_size(), 0);
  v1::ListRequest by_ns;
  *by_ns.mutable_ns() = ToWire(TinyNamespace("list-tenant"));
  ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), by_ns, &page)));
  v1::ListRequest by_hash;
  by_hash.mutable_namespace_hash()->set_lo(1);
  ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), by_hash, &page)));
  EXPECT_EQ(page.blobs_size(), 0);
}

TEST_F(NodeRpcTest, TiersShowTheDramTierIndexAndEngine) {
  ASSERT_OK_AND_ASSIGN(v1::TiersResponse tiers, Tiers());
  ASSERT_EQ(tiers.tiers_size(), 1);
  const v1::TierStats& dram = tiers.tiers(0);
  EXPECT_EQ(dram.tier(), v1::TIER_DRAM);
  EXPECT_EQ(dram.capacity_bytes(), uint64_t{64} << 20);  // --dram_bytes=64MiB
  EXPECT_EQ(dram.free_bytes() + dram.used_bytes(), dram.capacity_bytes());
  EXPECT_FALSE(tiers.engine().draining());
  EXPECT_EQ(tiers.engine().blobs(), 0u);
  EXPECT_EQ(tiers.index().pages(), 0u);
}

TEST_F(NodeRpcTest, EvictDramFreesNothingOnAnEmptyNodeTiersItLacksAreRefused) {
  v1::EvictRequest evict;
  evict.set_tier(v1::TIER_DRAM);
  evict.set_bytes(1 << 20);
  v1::EvictResponse evicted;
  ASSERT_OK(Call(admin_->Evict(ContextWithDeadline().get(), evict, &evicted)));
  EXPECT_EQ(evicted.bytes_freed(), 0u);
  EXPECT_EQ(evicted.pages_evicted(), 0u);
  // The shared node has no SSD tier (NodeProcess: --ssd_bytes=0) and no HBM tier.
  for (v1::Tier tier : {v1::TIER_SSD, v1::TIER_HBM, v1::TIER_UNSPECIFIED}) {
    evict.set_tier(tier);
    EXPECT_CODE(Call(admin_->Evict(ContextWithDeadline().get(), evict, &evicted)),
                absl::StatusCode::kInvalidArgument)
        << v1::Tier_Name(tier);
  }
  evict.set_tier(v1::TIER_TEXT);  // TEXT records are deleted (none here)
  ASSERT_OK(Call(admin_->Evict(ContextWithDeadline().get(), evict, &evicted)));
  EXPECT_EQ(evicted.blobs_unlinked(), 0u);
}

// Drain is one-way, so it gets a node of its own.
TEST(NodeDrainTest, DrainRefusesPutsWaitsForPendingOnesAndKeepsServingReads) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, NodeProcess::Start());
  auto store = node->StoreStub();
  auto admin = node->AdminStub();
  const radix::Namespace ns = TinyNamespace("drain-tenant");
  v1::BeginPutResponse put;
  ASSERT_OK(
      Call(store->BeginPut(ContextWithDeadline().get(), BeginPutFor(ns, TokenRun(0, 4)), &put)));

  // A pending put: the drain times out (and draining stays on).
  v1::DrainRequest drain;
  drain.set_timeout_ms(200);
  v1::DrainResponse drained;
  EXPECT_CODE(Call(admin->Drain(ContextWithDeadline().get(), drain, &drained)),
              absl::StatusCode::kDeadlineExceeded);
  v1::HealthResponse health;
  ASSERT_OK(Call(store->Health(ContextWithDeadline().get(), v1::HealthRequest(), &health)));
  EXPECT_EQ(health.state(), v1::SERVING_STATE_DRAINING);
  v1::BeginPutResponse refused;
  const absl::Status begin = Call(
      store->BeginPut(ContextWithDeadline().get(), BeginPutFor(ns, TokenRun(50, 4)), &refused));
  EXPECT_CODE(begin, absl::StatusCode::kUnavailable);

  // Reads and admin calls are still served.
  v1::MatchRequest match;
  *match.mutable_ns() = ToWire(ns);
  v1::MatchResponse matched;
  EXPECT_OK(Call(store->Match(ContextWithDeadline().get(), match, &matched)));
  v1::TiersResponse tiers;
  ASSERT_OK(Call(admin->Tiers(ContextWithDeadline().get(), v1::TiersRequest(), &tiers)));
  EXPECT_TRUE(tiers.engine().draining());

  // Once the put is gone the drain completes, and Drain is idempotent.
  v1::AbortPutRequest abort;
  abort.set_put_id(put.put_id());
  v1::AbortPutResponse aborted;
  ASSERT_OK(Call(store->AbortPut(ContextWithDeadline().get(), abort, &aborted)));
  drain.set_timeout_ms(5000);
  EXPECT_OK(Call(admin->Drain(ContextWithDeadline().get(), drain, &drained)));
  EXPECT_OK(Call(admin->Drain(ContextWithDeadline().get(), drain, &drained)));

  node->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(int code, node->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 0);
}

TEST(NodeDrainTest, DrainWaitIsBoundedByTheCallersDeadline) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<NodeProcess> node,
      NodeProcess::Start({.args = {"--drain_timeout=500ms", "--shutdown_grace=500ms"}}));
  auto store = node->StoreStub();
  auto admin = node->AdminStub();
  v1::BeginPutResponse put;
  ASSERT_OK(Call(store->BeginPut(ContextWithDeadline().get(),
                                 BeginPutFor(TinyNamespace("bounded"), TokenRun(0, 4)), &put)));
  // Asks to wait a minute, with a 1 s deadline, while a put stays pending.
  v1::DrainRequest drain;
  drain.set_timeout_ms(60000);
  v1::DrainResponse drained;
  const absl::Time start = absl::Now();
  EXPECT_CODE(Call(admin->Drain(ContextWithDeadline(absl::Seconds(1)).get(), drain, &drained)),
              absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // SIGTERM: drain_timeout passes with the put still pending, then gRPC shuts down, which
  // waits for every handler. Had the Drain handler ignored its deadline it would still be
  // waiting out its minute; the node exits in about a second instead.
  node->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(int code, node->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_TRUE(absl::StrContains(node->StdoutText(), "strata-node: stopped"));
}

}  // namespace
}  // namespace strata::integration::node_rpc_test
