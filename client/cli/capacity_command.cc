// strata capacity: the node's live miss-ratio curves, per tier, for capacity planning.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "client/cli/blob_format.h"
#include "client/cli/capacity_format.h"
#include "client/cli/cluster_plan.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/member_tiers.h"
#include "client/cli/table.h"
#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/cluster.h"
#include "strata/plot/line_chart.h"

namespace strata::cli {
namespace {

// The curves to show: all the node sent, or the one of `tier`. FAILED_PRECONDITION while
// the node has no curve yet; NOT_FOUND when it has none for `tier`.
absl::StatusOr<std::vector<const TierCurve*>> SelectCurves(const NodeTiers& info,
                                                           std::optional<Tier> tier) {
  if (info.curves.empty() || info.mrc.points.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the node has no miss-ratio curve yet (", info.mrc.accesses,
                     " page accesses seen, ", info.mrc.sampled_accesses,
                     " sampled): it builds one from Match traffic; run some, then ask again"));
  }
  std::vector<const TierCurve*> curves;
  for (const TierCurve& curve : info.curves) {
    if (!tier.has_value() || curve.tier == *tier) curves.push_back(&curve);
  }
  if (curves.empty()) {
    return absl::NotFoundError(absl::StrCat("the node has no ", std::string(TierName(*tier)),
                                            " curve (it plans only the tiers it has: ",
                                            absl::StrJoin(info.curves, ", ",
                                                          [](std::string* out, const TierCurve& c) {
                                                            absl::StrAppend(
                                                                out, std::string(TierName(c.tier)));
                                                          }),
                                            ")"));
  }
  return curves;
}

// WritePng's errors, with UNAVAILABLE (a file that cannot be opened) made FAILED_PRECONDITION:
// exit code 1 (a local file), not 3 (the node unreachable).
absl::Status WritePlot(const std::vector<const TierCurve*>& curves, const std::string& path) {
  absl::Status status = plot::WritePng(CapacityChart(curves), path);
  if (status.ok()) return status;
  const absl::StatusCode code = status.code() == absl::StatusCode::kUnavailable
                                    ? absl::StatusCode::kFailedPrecondition
                                    : status.code();
  return absl::Status(code, absl::StrCat("--plot: ", status.message()));
}

// --cluster: every member's curve (AskMemberTiers), combined
// (cluster_plan.h). Members that do not answer are left out and named.
absl::Status RunClusterCapacity(CommandContext& ctx) {
  absl::StatusOr<ClusterUrl> url = ParseClusterUrl(ctx.cluster_url());
  if (!url.ok()) return UsageError(std::string(url.status().message()));
  STRATA_ASSIGN_OR_RETURN(const ClusterMembers members,
                          ReadClusterMembers(*url, ctx.options().default_timeout));
  const std::vector<std::optional<NodeTiers>> tiers = AskMemberTiers(ctx, members);
  std::vector<ClusterNodeCurve> curves;
  std::vector<std::string> silent;
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (!tiers[i].has_value()) {
      silent.push_back(members.nodes[i].id);
      continue;
    }
    ClusterNodeCurve curve{members.nodes[i].id, tiers[i]->mrc, 0};
    for (const TierStats& t : tiers[i]->tiers) curve.capacity_bytes += t.capacity_bytes;
    curves.push_back(std::move(curve));
  }
  const ClusterPlan plan = PlanCluster(curves);
  if (ctx.json()) {
    Json json = ClusterPlanJson(plan);
    json["cluster"] = members.name;
    json["nodes"] = Json::array();
    for (const ClusterNodeCurve& c : curves) {
      json["nodes"].push_back(
          {{"id", c.id}, {"capacity_bytes", c.capacity_bytes}, {"mrc", MissRatioCurveJson(c.mrc)}});
    }
    json["unanswered"] = silent;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  for (const ClusterNodeCurve& c : curves) {
    ctx.out() << "node " << c.id << ": " << FormatBytes(c.capacity_bytes) << ", "
              << MissRatioCurveSummary(c.mrc) << "\n";
  }
  if (!silent.empty()) {
    ctx.out() << "left out (did not answer): " << absl::StrJoin(silent, ", ") << "\n";
  }
  ctx.out() << "\n" << RenderClusterPlan(plan);
  return absl::OkStatus();
}

absl::Status RunCapacity(CommandContext& ctx, const ParsedArgs& args) {
  if (!ctx.cluster_url().empty()) return RunClusterCapacity(ctx);
  std::optional<Tier> tier;
  if (std::optional<std::string> text = args.Value("tier")) {
    STRATA_ASSIGN_OR_RETURN(tier, ParseTier("--tier", *text));
  }
  const std::optional<std::string> plot_path = args.Value("plot");
  if (plot_path.has_value() && plot_path->empty()) return UsageError("--plot: empty file name");

  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(NodeTiers info, client->Tiers(ctx.Call()));
  STRATA_ASSIGN_OR_RETURN(std::vector<const TierCurve*> curves, SelectCurves(info, tier));
  if (plot_path.has_value()) STRATA_RETURN_IF_ERROR(WritePlot(curves, *plot_path));

  if (ctx.json()) {
    Json json;
    json["mrc"] = MissRatioCurveJson(info.mrc);
    json["token_bytes_per_kv_byte"] = info.token_bytes_per_kv_byte;
    Json& curves_json = json["curves"] = Json::array();
    for (const TierCurve* curve : curves) curves_json.push_back(TierCurveJson(*curve));
    json["plot"] = plot_path.has_value() ? Json(*plot_path) : Json(nullptr);
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << "miss-ratio curve: " << MissRatioCurveSummary(info.mrc) << "\n";
  for (const TierCurve* curve : curves) {
    ctx.out() << "\n" << RenderTierCurve(*curve, info.token_bytes_per_kv_byte);
  }
  if (plot_path.has_value()) ctx.out() << "\nplot written to " << *plot_path << "\n";
  return absl::OkStatus();
}

}  // namespace

Command CapacityCommand() {
  return {
      {.name = "capacity",
       .summary = "Show the expected hit rate of each tier at other capacities (live "
                  "miss-ratio curves).",
       .details = "Calls Admin.Tiers and shows, per tier (DRAM, then SSD and TEXT when the node "
                  "has them), the node's live miss-ratio curve as a table: capacity -> expected "
                  "hit rate through that tier (the faster tiers at their current capacities), "
                  "the current capacity and the recommended one marked, and the node's advice. "
                  "TEXT capacities are its token budget's KV-byte equivalents. The node builds "
                  "the curve from a sample of Match traffic (SHARDS); before any, the command "
                  "fails (exit 1). --plot FILE.png draws the curves (hit rate against capacity, "
                  "current capacities marked). JSON: {mrc, token_bytes_per_kv_byte, curves[] "
                  "{tier, capacity_bytes, expected_hit_ratio, recommended, advice, points[]}, "
                  "plot}. With --cluster (or $STRATA_CLUSTER): every member's curve, combined "
                  "into the cluster's — a total capacity spread over the nodes as placement "
                  "spreads segments, each node's hit rate weighted by its accesses — as a "
                  "table of node counts (average nodes) -> expected hit rate, with advice on "
                  "adding or removing nodes (docs/operations.md, \"Cluster\"). JSON: "
                  "{cluster, current_nodes, current_capacity_bytes, current_hit_ratio, "
                  "recommended_nodes, accesses, advice, rows[] {nodes, capacity_bytes, "
                  "expected_hit_ratio}, nodes[] {id, capacity_bytes, mrc}, unanswered}.",
       .flags = {{.name = "tier",
                  .value_name = "TIER",
                  .help = "only this tier's curve: dram, ssd or text"},
                 {.name = "plot",
                  .value_name = "FILE.png",
                  .help = "also draw the curves into this PNG file"}}},
      RunCapacity};
}

}  // namespace strata::cli
