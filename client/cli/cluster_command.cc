// strata cluster status: the cluster's members as etcd holds them (strata/cluster.h);
// strata cluster drain NODE: a node leaves the cluster, handing over its hot segments.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/cli/argument_parser.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/member_tiers.h"
#include "client/cli/table.h"
#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/cluster.h"

namespace strata::cli {
namespace {

// What a node holds (its Admin.Tiers), for the status table.
struct Held {
  uint64_t blobs = 0, kv_bytes = 0, text_blobs = 0, pages = 0, segments = 0, hot_blobs = 0;
};

// Each member's holdings; nullopt for a node that did not answer.
std::vector<std::optional<Held>> AskHeld(const CommandContext& ctx, const ClusterMembers& members) {
  std::vector<std::optional<Held>> held;
  for (const std::optional<NodeTiers>& tiers : AskMemberTiers(ctx, members)) {
    if (!tiers.has_value()) {
      held.emplace_back();
      continue;
    }
    Held h{tiers->engine.blobs,    0,
           tiers->text.blobs,      tiers->index.pages,
           tiers->engine.segments, tiers->engine.replicated_blobs};
    for (const TierStats& t : tiers->tiers) h.kv_bytes += t.used_bytes;
    held.push_back(h);
  }
  return held;
}

// strata cluster drain NODE: the node (an id or a gRPC address of the cluster's) leaves with
// Admin.Leave, handing over its hot segments.
absl::Status RunDrainNode(CommandContext& ctx, const ParsedArgs& args,
                          const ClusterMembers& members) {
  const std::string name = args.Positional(1);
  if (name.empty()) return UsageError("cluster drain: give the NODE (its id or gRPC address)");
  const ClusterNode* node = nullptr;
  for (const ClusterNode& n : members.nodes) {
    if (n.id == name || n.grpc_address == name) node = &n;
  }
  if (node == nullptr) {
    return absl::NotFoundError(absl::StrCat("no node \"", name, "\" in cluster ", members.name));
  }
  absl::Duration wait = absl::Seconds(30);
  if (std::optional<std::string> text = args.Value("wait")) {
    STRATA_ASSIGN_OR_RETURN(wait, ParsePositiveDuration("--wait", *text));
  }
  uint64_t budget = node->dram_bytes + node->ssd_bytes;  // everything it can hold
  if (std::optional<std::string> text = args.Value("hand-over")) {
    STRATA_ASSIGN_OR_RETURN(budget, ParseByteSize("--hand-over", *text));
  }
  ClientOptions options = ctx.options();
  options.node = node->grpc_address;
  options.wait_for_node = false;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Connect(options));
  STRATA_ASSIGN_OR_RETURN(const LeaveResult left, client->Leave(wait, budget));
  if (ctx.json()) {
    Json json;
    json["node"] = node->id;
    json["segments"] = left.segments;
    json["blobs"] = left.blobs;
    json["bytes"] = left.bytes;
    json["blobs_existing"] = left.blobs_existing;
    json["cold_segments"] = left.cold_segments;
    json["over_budget_segments"] = left.over_budget_segments;
    json["text_blobs"] = left.text_blobs;
    json["failures"] = left.failures;
    json["held_bytes"] = left.held_bytes;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << "node " << node->id << " left cluster " << members.name << ": handed over "
            << left.segments << " segment(s), " << left.blobs << " blob(s), "
            << FormatBytes(left.bytes) << " sent of " << FormatBytes(left.held_bytes) << " held ("
            << left.blobs_existing << " blob(s) their owner had); left behind "
            << left.cold_segments << " cold and " << left.over_budget_segments
            << " over-budget segment(s), " << left.text_blobs << " TEXT blob(s); " << left.failures
            << " failure(s). It still serves reads: stop it now.\n";
  return absl::OkStatus();
}

absl::Status RunCluster(CommandContext& ctx, const ParsedArgs& args) {
  const std::string action = args.Positional(0);
  if (action != "status" && action != "drain") {
    return UsageError(absl::StrCat("unknown action \"", action, "\" (status, drain)"));
  }
  if (ctx.cluster_url().empty()) {
    return UsageError("give --cluster etcd://HOST:PORT/NAME or set $STRATA_CLUSTER");
  }
  absl::StatusOr<ClusterUrl> url = ParseClusterUrl(ctx.cluster_url());
  if (!url.ok()) return UsageError(std::string(url.status().message()));
  STRATA_ASSIGN_OR_RETURN(ClusterMembers members,
                          ReadClusterMembers(*url, ctx.options().default_timeout));
  if (action == "drain") return RunDrainNode(ctx, args, members);
  const absl::Time now = absl::Now();
  const std::vector<std::optional<Held>> held = AskHeld(ctx, members);
  if (ctx.json()) {
    Json json;
    json["cluster"] = members.name;
    json["etcd"] = url->etcd_endpoints;
    json["etcd_revision"] = members.etcd_revision;
    json["undecodable"] = members.undecodable;
    json["nodes"] = Json::array();
    for (size_t i = 0; i < members.nodes.size(); ++i) {
      const ClusterNode& node = members.nodes[i];
      Json holds = nullptr;
      if (held[i].has_value()) {
        holds = {{"blobs", held[i]->blobs},           {"kv_bytes", held[i]->kv_bytes},
                 {"text_blobs", held[i]->text_blobs}, {"pages", held[i]->pages},
                 {"segments", held[i]->segments},     {"hot_blobs", held[i]->hot_blobs}};
      }
      json["nodes"].push_back({{"id", node.id},
                               {"state", node.state},
                               {"grpc", node.grpc_address},
                               {"dataplane", node.dataplane_address},
                               {"http", node.http_address},
                               {"version", node.version},
                               {"hbm_bytes", node.hbm_bytes},
                               {"dram_bytes", node.dram_bytes},
                               {"ssd_bytes", node.ssd_bytes},
                               {"started_unix_ms", absl::ToUnixMillis(node.started)},
                               {"held", holds}});
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
               {"SEGMENTS", Align::kRight},
               {"BLOBS", Align::kRight},
               {"KV", Align::kRight},
               {"TEXT", Align::kRight},
               {"HOT", Align::kRight},
               {"VERSION"}});
  uint64_t dram = 0, ssd = 0;
  for (size_t i = 0; i < members.nodes.size(); ++i) {
    const ClusterNode& node = members.nodes[i];
    const std::optional<Held>& h = held[i];
    table.AddRow({node.id, node.state, node.grpc_address, node.dataplane_address,
                  node.http_address.empty() ? "-" : node.http_address, FormatBytes(node.dram_bytes),
                  FormatBytes(node.ssd_bytes), FormatDurationShort(now - node.started),
                  h ? absl::StrCat(h->segments) : "-", h ? absl::StrCat(h->blobs) : "-",
                  h ? FormatBytes(h->kv_bytes) : "-", h ? absl::StrCat(h->text_blobs) : "-",
                  h ? absl::StrCat(h->hot_blobs) : "-", node.version});
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
  ctx.out() << "SEGMENTS: sub-trees of blobs held (a sequence's or a segment's first blob and "
               "those continuing it); BLOBS: blobs in the node's index; KV: their bytes in DRAM "
               "and on SSD; TEXT: TEXT blobs (token text: replicas and dropped KV); HOT: its hot "
               "blobs it pushed to the next nodes as replicas; - the node did not answer\n";
  return absl::OkStatus();
}

}  // namespace

Command ClusterCommand() {
  return {
      {.name = "cluster",
       .summary = "A cluster's nodes as etcd holds them (status); a node leaving it (drain NODE).",
       .details = "Reads /strata/<NAME>/nodes/ from the etcd of --cluster "
                  "etcd://HOST:PORT[,HOST:PORT...][/NAME] (or $STRATA_CLUSTER), and what "
                  "each node holds (its Admin.Tiers, all at once, 2 s at most: - when it does "
                  "not answer). A node that died stays listed until its etcd lease expires "
                  "(cluster_lease_ttl). etcd unreachable: exit 3. JSON: {cluster, etcd, "
                  "etcd_revision, undecodable, nodes: [{id, state, grpc, dataplane, http, "
                  "version, hbm_bytes, dram_bytes, ssd_bytes, started_unix_ms, held: {blobs, "
                  "kv_bytes, text_blobs, pages, segments, hot_blobs} or null}]}. "
                  "drain NODE (an id or gRPC address): the node leaves the cluster "
                  "(Admin.Leave) — it registers as draining, refuses puts, waits up to "
                  "--wait for work in flight, hands its segments read at least once "
                  "(hottest first, at most --hand-over bytes, default all it can hold) to "
                  "their new owners, and deregisters; it keeps serving reads until stopped. "
                  "JSON: {node, segments, blobs, bytes, blobs_existing, cold_segments, "
                  "over_budget_segments, text_blobs, failures, held_bytes}.",
       .flags = {{.name = "wait",
                  .value_name = "DURATION",
                  .help = "drain: how long the node waits for work in flight (default 30s)"},
                 {.name = "hand-over",
                  .value_name = "SIZE",
                  .help = "drain: KV bytes to hand over at most (default: all it holds)"}},
       .positionals = {{.name = "ACTION", .help = "status, drain"},
                       {.name = "NODE",
                        .help = "drain: the node's id or gRPC address",
                        .required = false}}},
      RunCluster};
}

}  // namespace strata::cli
