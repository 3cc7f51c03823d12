// Cluster membership end to end: real strata-node processes register in a real etcd
// (Debian's etcd-server, started by the test on loopback port 0), and a MembershipView — what
// every node and client keeps — follows them joining, draining away on SIGTERM, dying under
// kill -9, restarting on their data dir under the same id, and starting while etcd is down.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <signal.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "nlohmann/json.hpp"
#include "strata/base/status_test_macros.h"
#include "strata/store/cluster/etcd_client.h"
#include "strata/store/cluster/membership.h"
#include "strata/store/http/http_get.h"
#include "strata/testing/etcd_process.h"
#include "strata/testing/node_process.h"
#include "strata/testing/temp_dir.h"

namespace strata::integration::cluster_membership_test {
namespace {

using store::cluster::EtcdClient;
using store::cluster::MembershipView;
using store::cluster::NodeRecord;
using store::cluster::NodeState;
using strata::testing::EtcdProcess;
using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;

constexpr char kCluster[] = "it";
constexpr absl::Duration kLeaseTtl = absl::Seconds(4);
constexpr absl::Duration kJoinWindow = absl::Seconds(2);

const NodeRecord* Find(const std::vector<NodeRecord>& nodes, const std::string& id) {
  auto it =
      std::find_if(nodes.begin(), nodes.end(), [&](const NodeRecord& r) { return r.id == id; });
  return it == nodes.end() ? nullptr : &*it;
}

class ClusterMembershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdProcess::Start());
    ASSERT_OK_AND_ASSIGN(client_, EtcdClient::Create({.endpoints = {etcd_->endpoint()}}));
    ASSERT_OK_AND_ASSIGN(view_, MembershipView::Start(client_.get(), kCluster));
  }

  absl::StatusOr<std::unique_ptr<NodeProcess>> StartNode(const std::string& data_dir = "") {
    NodeProcessOptions options;
    options.args = {"--etcd_endpoints=" + etcd_->endpoint(), std::string("--cluster=") + kCluster,
                    "--cluster_lease_ttl=" + absl::FormatDuration(kLeaseTtl),
                    "--cluster_join_window=" + absl::FormatDuration(kJoinWindow)};
    if (!data_dir.empty()) {
      options.args.push_back("--data_dir=" + data_dir);
      options.default_data_dir = false;
    }
    return NodeProcess::Start(std::move(options));
  }

  // Waits until the view holds exactly `ids`.
  absl::Status ViewHolds(std::vector<std::string> ids, absl::Duration timeout) {
    return view_->WaitUntil(
        [&](const std::vector<NodeRecord>& nodes) {
          if (nodes.size() != ids.size()) return false;
          for (const std::string& id : ids) {
            if (Find(nodes, id) == nullptr) return false;
          }
          return true;
        },
        timeout);
  }

  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<EtcdClient> client_;
  std::unique_ptr<MembershipView> view_;
};

TEST_F(ClusterMembershipTest, NodesRegisterWhatTheyServeAndLeaveOnStopOrDeath) {
  std::vector<std::unique_ptr<NodeProcess>> nodes;
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(auto node, StartNode());
    ids.push_back(node->ReadyField("node_id"));
    ASSERT_EQ(ids.back().size(), 16u) << node->StdoutText();
    nodes.push_back(std::move(node));
    ASSERT_OK(ViewHolds(ids, absl::Seconds(10)));  // registered before the next one starts
  }
  ASSERT_OK(ViewHolds(ids, absl::Seconds(10)));
  const std::vector<NodeRecord> records = view_->Nodes();
  for (int i = 0; i < 3; ++i) {
    const NodeRecord* r = Find(records, ids[i]);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->grpc_address, nodes[i]->grpc_address());
    EXPECT_EQ(r->dataplane_address, nodes[i]->data_plane_address());
    EXPECT_EQ(r->http_address, nodes[i]->http_address());
    // The first node founds the cluster; the others find it serving and join.
    EXPECT_EQ(r->state, i == 0 ? NodeState::kServing : NodeState::kJoining);
    EXPECT_EQ(r->dram_bytes, uint64_t{64} << 20);  // NodeProcess's default
    EXPECT_GT(r->started_ms, 0);
    EXPECT_FALSE(r->version.empty());
  }
  EXPECT_NE(ids[0], ids[1]);
  // Joining nodes turn serving by themselves after the join window.
  ASSERT_OK(view_->WaitUntil(
      [](const std::vector<NodeRecord>& nodes) {
        return std::all_of(nodes.begin(), nodes.end(),
                           [](const NodeRecord& r) { return r.state == NodeState::kServing; });
      },
      kJoinWindow + absl::Seconds(5)));

  // Each node's /v1/cluster shows the same members, and itself.
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(const store::http::HttpResponse got,
                         store::http::HttpGet(nodes[i]->http_address(), "/v1/cluster"));
    ASSERT_EQ(got.status, 200) << got.body;
    EXPECT_EQ(got.content_type, "application/json");
    const nlohmann::json json = nlohmann::json::parse(got.body);
    EXPECT_EQ(json["cluster"], kCluster);
    EXPECT_EQ(json["self"], ids[i]);
    EXPECT_EQ(json["registered"], true);
    ASSERT_EQ(json["nodes"].size(), 3u);
    for (const nlohmann::json& node : json["nodes"]) {
      EXPECT_NE(std::find(ids.begin(), ids.end(), node["id"].get<std::string>()), ids.end());
      EXPECT_EQ(node["state"], "serving");
    }
  }

  // SIGTERM: the node drains, then revokes its lease — it leaves well before the TTL.
  const absl::Time stop = absl::Now();
  nodes[0]->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(int code, nodes[0]->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 0);
  ASSERT_OK(ViewHolds({ids[1], ids[2]}, absl::Seconds(10)));
  EXPECT_LT(absl::Now() - stop, kLeaseTtl);

  // kill -9: nothing revokes the lease; the node leaves when it expires.
  const absl::Time kill = absl::Now();
  nodes[1]->Signal(SIGKILL);
  ASSERT_OK(ViewHolds({ids[2]}, kLeaseTtl + absl::Seconds(5)));
  EXPECT_GE(absl::Now() - kill, kLeaseTtl / 2) << "gone before its lease could have expired";
}

TEST_F(ClusterMembershipTest, ARestartedNodeComesBackUnderItsId) {
  strata::testing::ScopedTempDir dir;
  const std::string data_dir = dir.path() + "/node";
  ASSERT_OK_AND_ASSIGN(auto node, StartNode(data_dir));
  const std::string id = node->ReadyField("node_id");
  ASSERT_OK(ViewHolds({id}, absl::Seconds(10)));
  node->Signal(SIGTERM);
  ASSERT_OK(node->WaitExit(absl::Seconds(30)).status());
  ASSERT_OK(ViewHolds({}, absl::Seconds(10)));

  ASSERT_OK_AND_ASSIGN(auto again, StartNode(data_dir));
  EXPECT_EQ(again->ReadyField("node_id"), id);
  ASSERT_OK(ViewHolds({id}, absl::Seconds(10)));
  EXPECT_EQ(Find(view_->Nodes(), id)->grpc_address, again->grpc_address());
}

TEST_F(ClusterMembershipTest, ClusterEndpointSaysWhenThereIsNoClusterOrNoEtcd) {
  ASSERT_OK_AND_ASSIGN(auto alone, NodeProcess::Start());
  ASSERT_OK_AND_ASSIGN(store::http::HttpResponse got,
                       store::http::HttpGet(alone->http_address(), "/v1/cluster"));
  EXPECT_EQ(got.status, 404) << got.body;
  ASSERT_OK_AND_ASSIGN(auto member, StartNode());
  etcd_->Kill();
  ASSERT_OK_AND_ASSIGN(got, store::http::HttpGet(member->http_address(), "/v1/cluster"));
  EXPECT_EQ(got.status, 503) << got.body;
  EXPECT_NE(got.body.find("etcd"), std::string::npos) << got.body;
}

TEST_F(ClusterMembershipTest, ANodeStartsWhileEtcdIsDownAndRegistersWhenItReturns) {
  ASSERT_OK_AND_ASSIGN(auto first, StartNode());
  const std::string first_id = first->ReadyField("node_id");
  ASSERT_OK(ViewHolds({first_id}, absl::Seconds(10)));

  etcd_->Kill();
  // The node does not wait for etcd: it serves at once.
  ASSERT_OK_AND_ASSIGN(auto second, StartNode());
  ASSERT_OK(second->WaitHealthy(absl::Seconds(10)));
  const std::string second_id = second->ReadyField("node_id");
  // The view keeps what it had while etcd is away.
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(view_->Nodes().size(), 1u);
  EXPECT_FALSE(view_->live());

  ASSERT_OK(etcd_->Restart());
  ASSERT_OK(ViewHolds({first_id, second_id}, absl::Seconds(20)));
  EXPECT_TRUE(view_->live());
}

TEST_F(ClusterMembershipTest, AWildcardListenAddressNeedsAnAdvertiseHost) {
  const strata::testing::ProgramResult refused = NodeProcess::RunToExit(
      {"--grpc_listen=0.0.0.0:0", "--dataplane_listen=127.0.0.1:0", "--http_listen=", "--insecure",
       "--etcd_endpoints=" + etcd_->endpoint()});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("advertise_host"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace strata::integration::cluster_membership_test
