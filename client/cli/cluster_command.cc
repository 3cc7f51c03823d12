// strata cluster status: the cluster's members as etcd holds them (strata/cluster.h).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/table.h"
#include "strata/base/status_macros.h"
#include "strata/cluster.h"

namespace strata::cli {
namespace {

absl::Status RunCluster(CommandContext& ctx, const ParsedArgs& args) {
  const std::string action = args.Positional(0);
  if (action != "status") {
    return UsageError(absl::StrCat("unknown action \"", action, "\" (status)"));
  }
  if (ctx.cluster_url().empty()) {
    return UsageError("give --cluster etcd://HOST:PORT/NAME or set $STRATA_CLUSTER");
  }
  absl::StatusOr<ClusterUrl> url = ParseClusterUrl(ctx.cluster_url());
  if (!url.ok()) return UsageError(std::string(url.status().message()));
  STRATA_ASSIGN_OR_RETURN(ClusterMembers members,
                          ReadClusterMembers(*url, ctx.options().default_timeout));
  const absl::Time now = absl::Now();
  if (ctx.json()) {
    Json json;
    json["cluster"] = members.name;
    json["etcd"] = url->etcd_endpoints;
    json["etcd_revision"] = members.etcd_revision;
    json["undecodable"] = members.undecodable;
    json["nodes"] = Json::array();
    for (const ClusterNode& node : members.nodes) {
      json["nodes"].push_back({{"id", node.id},
                               {"state", node.state},
                               {"grpc", node.grpc_address},
                               {"dataplane", node.dataplane_address},
                               {"http", node.http_address},
                               {"version", node.version},
                               {"hbm_bytes", node.hbm_bytes},
                               {"dram_bytes", node.dram_bytes},
                               {"ssd_bytes", node.ssd_bytes},
                               {"started_unix_ms", absl::ToUnixMillis(node.started)}});
    }
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  Table table({{"NODE"},
               {"STATE"},
               {"GRPC"},
               {"DATAPLANE"},
               {"HTTP"},
               {"DRAM", Align::kRight},
               {"SSD", Align::kRight},
               {"UP", Align::kRight},
               {"VERSION"}});
  uint64_t dram = 0, ssd = 0;
  for (const ClusterNode& node : members.nodes) {
    table.AddRow({node.id, node.state, node.grpc_address, node.dataplane_address,
                  node.http_address.empty() ? "-" : node.http_address, FormatBytes(node.dram_bytes),
                  FormatBytes(node.ssd_bytes), FormatDurationShort(now - node.started),
                  node.version});
    dram += node.dram_bytes;
    ssd += node.ssd_bytes;
  }
  ctx.out() << "cluster " << members.name << " (etcd " << url->etcd_endpoints.front()
            << (url->etcd_endpoints.size() > 1 ? ", ..." : "") << "): " << members.nodes.size()
            << " node(s), DRAM " << FormatBytes(dram) << ", SSD " << FormatBytes(ssd) << "\n";
  if (members.nodes.empty()) return absl::OkStatus();
  ctx.out() << table.Render();
  if (members.undecodable > 0) {
    ctx.out() << members.undecodable << " record(s) in etcd did not decode (skipped)\n";
  }
  return absl::OkStatus();
}

}  // namespace

Command ClusterCommand() {
  return {{.name = "cluster",
           .summary = "Show a cluster's nodes as etcd holds them (strata cluster status).",
           .details = "Reads /strata/<NAME>/nodes/ from the etcd of --cluster "
                      "etcd://HOST:PORT[,HOST:PORT...][/NAME] (or $STRATA_CLUSTER); no node is "
                      "asked. A node that died stays listed until its etcd lease expires "
                      "(cluster_lease_ttl). etcd unreachable: exit 3. JSON: {cluster, etcd, "
                      "etcd_revision, undecodable, nodes: [{id, state, grpc, dataplane, http, "
                      "version, hbm_bytes, dram_bytes, ssd_bytes, started_unix_ms}]}.",
           .positionals = {{.name = "ACTION", .help = "status"}}},
          RunCluster};
}

}  // namespace strata::cli
