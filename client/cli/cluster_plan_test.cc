#include "client/cli/cluster_plan.h"

#include <vector>

#include "gtest/gtest.h"

namespace strata::cli {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A node whose accesses hit linearly up to `ws` bytes of capacity, then always.
ClusterNodeCurve Node(const char* id, uint64_t capacity, uint64_t ws, uint64_t accesses) {
  ClusterNodeCurve node{id, {}, capacity};
  node.mrc.points = {{ws / 2, 0.5}, {ws, 1.0}};
  node.mrc.accesses = accesses;
  node.mrc.working_set_bytes = ws;
  return node;
}

TEST(ClusterPlanTest, CombinesTheNodesCurvesByCapacityShareAndAccesses) {
  // Two equal nodes, each with half the cluster's 400 MiB working set: at 100 MiB each they
  // hit half; the cluster needs 4 such nodes to hold everything.
  const ClusterPlan plan = PlanCluster(
      {Node("a", 100 * kMiB, 200 * kMiB, 1000), Node("b", 100 * kMiB, 200 * kMiB, 1000)});
  ASSERT_EQ(plan.rows.size(), 8u);
  EXPECT_EQ(plan.current_nodes, 2u);
  EXPECT_EQ(plan.current_capacity_bytes, 200 * kMiB);
  EXPECT_NEAR(plan.current_hit_ratio, 0.5, 1e-9);
  EXPECT_NEAR(plan.rows[0].expected_hit_ratio, 0.25, 1e-9);  // 100 MiB over both
  EXPECT_NEAR(plan.rows[3].expected_hit_ratio, 1.0, 1e-9);   // 400 MiB: all of it
  EXPECT_EQ(plan.rows[3].capacity_bytes, 400 * kMiB);
  EXPECT_EQ(plan.recommended_nodes, 4u);
  EXPECT_NE(plan.advice.find("add 2 node(s)"), std::string::npos) << plan.advice;
  const std::string text = RenderClusterPlan(plan);
  EXPECT_NE(text.find("<- current"), std::string::npos) << text;
  EXPECT_NE(text.find("<- recommended"), std::string::npos) << text;
}

TEST(ClusterPlanTest, WeighsBusyNodesMoreAndSaysWhenNodesCouldGo) {
  // A busy node that needs little, an idle one that needs much: the cluster's rate is the
  // busy node's; 4 nodes hold everything already, 2 would too.
  const ClusterPlan plan =
      PlanCluster({Node("a", 100 * kMiB, 20 * kMiB, 9000), Node("b", 100 * kMiB, 40 * kMiB, 1000),
                   Node("c", 100 * kMiB, 20 * kMiB, 0), Node("d", 100 * kMiB, 20 * kMiB, 0)});
  EXPECT_NEAR(plan.current_hit_ratio, 1.0, 1e-9);
  EXPECT_EQ(plan.accesses, 10000u);
  EXPECT_LT(plan.recommended_nodes, 4u);
  EXPECT_NE(plan.advice.find("could go"), std::string::npos) << plan.advice;
}

TEST(ClusterPlanTest, ACurveHoldsItsLastValueFromItsWorkingSetOn) {
  // Points at 10 MiB (0.3) and 256 MiB (0.9), working set 20 MiB: at 100 MiB the node holds
  // everything, so it hits 0.9 (not the 0.44 of interpolating across the gap).
  ClusterNodeCurve node{"a", {}, 300 * kMiB};
  node.mrc.points = {{10 * kMiB, 0.3}, {256 * kMiB, 0.9}};
  node.mrc.accesses = 100;
  node.mrc.working_set_bytes = 20 * kMiB;
  const ClusterPlan plan = PlanCluster({node, node, node});
  EXPECT_NEAR(plan.rows[0].expected_hit_ratio, 0.9, 1e-9);
}

TEST(ClusterPlanTest, NothingToPlanWithoutNodesOrAccesses) {
  EXPECT_TRUE(PlanCluster({}).rows.empty());
  const ClusterPlan idle = PlanCluster({Node("a", kMiB, kMiB, 0)});
  EXPECT_TRUE(idle.rows.empty());
  EXPECT_NE(idle.advice.find("no node has seen lookups"), std::string::npos);
  EXPECT_EQ(ClusterPlanJson(idle)["rows"].size(), 0u);
}

}  // namespace
}  // namespace strata::cli
