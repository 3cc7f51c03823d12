// Registration and MembershipView against a real etcd on loopback.
#include "strata/store/cluster/membership.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/testing/etcd_process.h"

namespace strata::store::cluster {
namespace {

using strata::testing::EtcdProcess;

constexpr char kCluster[] = "test";

NodeRecord Node(int n) {
  return NodeRecord{.id = absl::StrFormat("%016x", 0xa000 + n),
                    .grpc_address = absl::StrFormat("127.0.0.1:%d", 7400 + 10 * n),
                    .dataplane_address = absl::StrFormat("127.0.0.1:%d", 7401 + 10 * n),
                    .state = NodeState::kServing,
                    .version = "test",
                    .dram_bytes = uint64_t{1} << 30};
}

const NodeRecord* Find(const std::vector<NodeRecord>& nodes, const std::string& id) {
  auto it =
      std::find_if(nodes.begin(), nodes.end(), [&](const NodeRecord& r) { return r.id == id; });
  return it == nodes.end() ? nullptr : &*it;
}

auto HasIds(std::vector<std::string> ids) {
  return [ids](const std::vector<NodeRecord>& nodes) {
    if (nodes.size() != ids.size()) return false;
    for (const std::string& id : ids) {
      if (Find(nodes, id) == nullptr) return false;
    }
    return true;
  };
}

class MembershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdProcess::Start());
    ASSERT_OK_AND_ASSIGN(client_, EtcdClient::Create({.endpoints = {etcd_->endpoint()},
                                                      .call_timeout = absl::Milliseconds(500)}));
  }

  std::unique_ptr<Registration> Register(int n, absl::Duration ttl = absl::Seconds(5)) {
    absl::StatusOr<std::unique_ptr<Registration>> r =
        Registration::Start(client_.get(), kCluster, Node(n), {.lease_ttl = ttl});
    EXPECT_OK(r.status());
    return r.ok() ? *std::move(r) : nullptr;
  }

  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<EtcdClient> client_;
};

TEST_F(MembershipTest, RegisteredNodesAppearInTheViewAndLeaveOnStop) {
  ASSERT_OK_AND_ASSIGN(auto view, MembershipView::Start(client_.get(), kCluster));
  EXPECT_TRUE(view->Nodes().empty());
  auto a = Register(1);
  auto b = Register(2);
  auto c = Register(3);
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id, Node(2).id, Node(3).id}), absl::Seconds(10)));
  // The watch can deliver a record before its registration has counted etcd's answer.
  const absl::Time counted_by = absl::Now() + absl::Seconds(5);
  while (!a->registered() && absl::Now() < counted_by) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_TRUE(a->registered());
  const std::vector<NodeRecord> nodes = view->Nodes();
  EXPECT_EQ(*Find(nodes, Node(2).id), Node(2));

  // A second view, started later, reads the same.
  ASSERT_OK_AND_ASSIGN(auto late, MembershipView::Start(client_.get(), kCluster));
  EXPECT_EQ(late->Nodes(), view->Nodes());

  b->SetState(NodeState::kDraining);
  ASSERT_OK(view->WaitUntil(
      [&](const std::vector<NodeRecord>& now) {
        const NodeRecord* r = Find(now, Node(2).id);
        return r != nullptr && r->state == NodeState::kDraining;
      },
      absl::Seconds(10)));

  // A clean leave: gone at once, not after the TTL.
  const absl::Time stop = absl::Now();
  ASSERT_OK(b->Stop());
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id, Node(3).id}), absl::Seconds(10)));
  EXPECT_LT(absl::Now() - stop, absl::Seconds(2));
  EXPECT_FALSE(b->registered());
  EXPECT_OK(b->Stop());  // idempotent
  EXPECT_GE(view->stats().revision, 1);
}

TEST_F(MembershipTest, ANodeThatStopsRefreshingLeavesWhenItsLeaseExpires) {
  ASSERT_OK_AND_ASSIGN(auto view, MembershipView::Start(client_.get(), kCluster));
  // A node that died: its record was written with a lease nobody refreshes.
  ASSERT_OK_AND_ASSIGN(LeaseGrant lease, client_->GrantLease(absl::Seconds(2)));
  ASSERT_OK(client_->Put(MembershipKey(kCluster, Node(7).id), EncodeNodeRecord(Node(7)), lease.id)
                .status());
  auto alive = Register(1);
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id, Node(7).id}), absl::Seconds(10)));
  const absl::Time written = absl::Now();
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id}), lease.ttl + absl::Seconds(3)));
  EXPECT_GE(absl::Now() - written, lease.ttl - absl::Seconds(1));
}

TEST_F(MembershipTest, RecordsThatDoNotDecodeAreSkippedAndCounted) {
  ASSERT_OK(client_->Put(MembershipKey(kCluster, "garbage"), "{not json").status());
  ASSERT_OK_AND_ASSIGN(auto view, MembershipView::Start(client_.get(), kCluster));
  EXPECT_TRUE(view->Nodes().empty());
  EXPECT_EQ(view->stats().undecodable, 1u);
  auto a = Register(1);
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id}), absl::Seconds(10)));
  // A record overwritten with garbage leaves the view (what it said is no longer true).
  ASSERT_OK(client_->Put(MembershipKey(kCluster, Node(1).id), "[]").status());
  ASSERT_OK(view->WaitUntil(HasIds({}), absl::Seconds(10)));
  EXPECT_EQ(view->stats().undecodable, 2u);
}

TEST_F(MembershipTest, ALostLeaseIsReplacedAndTheRecordWrittenAgain) {
  ASSERT_OK_AND_ASSIGN(auto view, MembershipView::Start(client_.get(), kCluster));
  auto a = Register(1, absl::Seconds(3));
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id}), absl::Seconds(10)));
  ASSERT_OK_AND_ASSIGN(RangeResult got, client_->Get(MembershipKey(kCluster, Node(1).id)));
  ASSERT_EQ(got.kvs.size(), 1u);
  // Someone (an operator, an etcd restored from an old snapshot) drops the lease.
  ASSERT_OK(client_->RevokeLease(got.kvs[0].lease));
  ASSERT_OK(view->WaitUntil(HasIds({}), absl::Seconds(10)));
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id}), absl::Seconds(10)));
  // The watch can deliver the rewritten record before the registration has counted etcd's
  // answer to its Put.
  const absl::Time counted_by = absl::Now() + absl::Seconds(5);
  while (a->stats().records_written < 2 && absl::Now() < counted_by) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_GE(a->stats().leases_lost, 1u);
  EXPECT_GE(a->stats().records_written, 2u);
}

TEST_F(MembershipTest, EtcdDownKeepsTheLastViewAndBothSidesRecoverWhenItReturns) {
  ASSERT_OK_AND_ASSIGN(auto view, MembershipView::Start(client_.get(), kCluster));
  auto a = Register(1);
  auto b = Register(2);
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id, Node(2).id}), absl::Seconds(10)));
  const absl::Time live_by = absl::Now() + absl::Seconds(10);
  while (!view->live() && absl::Now() < live_by) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_TRUE(view->live());

  etcd_->Kill();
  const absl::Time down_by = absl::Now() + absl::Seconds(10);
  while (view->live() && absl::Now() < down_by) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_FALSE(view->live());
  // Longer than a keepalive period: the registrations fail, nothing is forgotten.
  absl::SleepFor(absl::Seconds(3));
  EXPECT_TRUE(HasIds({Node(1).id, Node(2).id})(view->Nodes()));
  EXPECT_GE(a->stats().failures, 1u);

  // While etcd is away node 2 stops (its revoke cannot reach etcd); then node 3 joins.
  EXPECT_FALSE(b->Stop().ok());
  ASSERT_OK(etcd_->Restart());
  auto c = Register(3);
  // The view follows etcd again: 3 appears; 2's record expires with its lease (etcd renews
  // leases when it restarts, so that takes up to one more TTL).
  ASSERT_OK(view->WaitUntil(HasIds({Node(1).id, Node(3).id}), absl::Seconds(20)));
  EXPECT_TRUE(view->live());
  EXPECT_GE(view->stats().watch_resets, 1u);
  EXPECT_TRUE(a->registered());
}

}  // namespace
}  // namespace strata::store::cluster
