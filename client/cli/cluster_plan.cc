// The cluster's capacity plan (cluster_plan.h).
#include "client/cli/cluster_plan.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/capacity_format.h"
#include "client/cli/table.h"

namespace strata::cli {

namespace {

// The curve at `capacity`, and its last value from the working set on: an LRU cache that
// holds every key seen hits every reuse (a node's points may jump from inside its working
// set to far past it, and interpolating across that gap would understate the curve there).
double HitAt(const MissRatioCurve& mrc, uint64_t capacity) {
  if (!mrc.points.empty() && mrc.working_set_bytes > 0 && capacity >= mrc.working_set_bytes) {
    return std::max(mrc.HitRatioAt(capacity), mrc.points.back().hit_ratio);
  }
  return mrc.HitRatioAt(capacity);
}

}  // namespace

ClusterPlan PlanCluster(const std::vector<ClusterNodeCurve>& nodes) {
  ClusterPlan plan;
  plan.current_nodes = static_cast<uint32_t>(nodes.size());
  double weights = 0;
  for (const ClusterNodeCurve& node : nodes) {
    plan.current_capacity_bytes += node.capacity_bytes;
    plan.accesses += node.mrc.accesses;
    weights += static_cast<double>(node.capacity_bytes);
  }
  if (nodes.empty() || plan.accesses == 0 || weights <= 0) {
    plan.advice = nodes.empty() ? "no node answered: nothing to plan"
                                : "no node has seen lookups yet: run some traffic, then ask again";
    return plan;
  }
  auto hit = [&](double total) {
    double sum = 0;
    for (const ClusterNodeCurve& node : nodes) {
      const double share = static_cast<double>(node.capacity_bytes) / weights;
      sum += static_cast<double>(node.mrc.accesses) *
             HitAt(node.mrc, static_cast<uint64_t>(total * share));
    }
    return sum / static_cast<double>(plan.accesses);
  };
  const double per_node =
      static_cast<double>(plan.current_capacity_bytes) / static_cast<double>(nodes.size());
  const uint32_t most = std::max<uint32_t>(8, 2 * plan.current_nodes);
  for (uint32_t n = 1; n <= most; ++n) {
    const double total = per_node * n;
    plan.rows.push_back({n, static_cast<uint64_t>(total), hit(total)});
  }
  plan.current_hit_ratio = plan.rows[plan.current_nodes - 1].expected_hit_ratio;
  double best = 0;
  for (const ClusterPlanRow& row : plan.rows) best = std::max(best, row.expected_hit_ratio);
  for (const ClusterPlanRow& row : plan.rows) {
    if (row.expected_hit_ratio >= best - 0.01) {
      plan.recommended_nodes = row.nodes;
      break;
    }
  }
  const ClusterPlanRow& now = plan.rows[plan.current_nodes - 1];
  const ClusterPlanRow& rec = plan.rows[plan.recommended_nodes - 1];
  if (plan.recommended_nodes > plan.current_nodes) {
    plan.advice = absl::StrCat("add ", plan.recommended_nodes - plan.current_nodes,
                               " node(s) like these: the expected hit rate goes from ",
                               FormatRatio(now.expected_hit_ratio), " to ",
                               FormatRatio(rec.expected_hit_ratio));
  } else if (plan.recommended_nodes < plan.current_nodes) {
    plan.advice = absl::StrCat(
        plan.current_nodes - plan.recommended_nodes, " node(s) could go: ", plan.recommended_nodes,
        " keep the expected hit rate within a point (", FormatRatio(rec.expected_hit_ratio), " vs ",
        FormatRatio(now.expected_hit_ratio), ")");
  } else {
    plan.advice = absl::StrCat("keep ", plan.current_nodes,
                               " node(s): one more adds less than a point, one fewer costs more");
  }
  return plan;
}

std::string RenderClusterPlan(const ClusterPlan& plan) {
  std::string out = absl::StrCat("cluster: ", plan.current_nodes, " node(s), ",
                                 FormatBytes(plan.current_capacity_bytes));
  if (plan.rows.empty()) return absl::StrCat(out, "\nadvice: ", plan.advice, "\n");
  absl::StrAppend(&out, ", expected hit rate ", FormatRatio(plan.current_hit_ratio), " (",
                  plan.accesses, " accesses on the nodes' curves)\n");
  Table table({{"NODES", Align::kRight},
               {"CAPACITY", Align::kRight},
               {"EXPECTED HIT%", Align::kRight},
               {""}});
  for (const ClusterPlanRow& row : plan.rows) {
    std::string mark;
    if (row.nodes == plan.current_nodes) mark = "<- current";
    if (row.nodes == plan.recommended_nodes) {
      mark = mark.empty() ? "<- recommended" : "<- current, recommended";
    }
    table.AddRow({absl::StrCat(row.nodes), FormatBytes(row.capacity_bytes),
                  FormatRatio(row.expected_hit_ratio), mark});
  }
  absl::StrAppend(&out, table.Render(), "advice: ", plan.advice, "\n");
  return out;
}

Json ClusterPlanJson(const ClusterPlan& plan) {
  Json json;
  json["current_nodes"] = plan.current_nodes;
  json["current_capacity_bytes"] = plan.current_capacity_bytes;
  json["current_hit_ratio"] = plan.current_hit_ratio;
  json["recommended_nodes"] = plan.recommended_nodes;
  json["accesses"] = plan.accesses;
  json["advice"] = plan.advice;
  json["rows"] = Json::array();
  for (const ClusterPlanRow& row : plan.rows) {
    json["rows"].push_back({{"nodes", row.nodes},
                            {"capacity_bytes", row.capacity_bytes},
                            {"expected_hit_ratio", row.expected_hit_ratio}});
  }
  return json;
}

}  // namespace strata::cli
