// strata status, strata tiers: what a node is and holds.
#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/capacity_format.h"
#include "client/cli/commands.h"
#include "client/cli/json_output.h"
#include "client/cli/table.h"
#include "client/cli/tier_format.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

absl::Status RunStatus(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(HealthInfo health, client->Health(ctx.Call()));
  STRATA_ASSIGN_OR_RETURN(NodeTiers tiers, client->Tiers(ctx.Call()));
  const char* state = health.draining ? "DRAINING" : "SERVING";

  if (ctx.json()) {
    Json json;
    json["node"] = ctx.options().node;
    json["state"] = state;
    json["draining"] = health.draining;
    json["version"] = health.version;
    json["data_plane"] = health.data_plane;
    json["uptime_ms"] = absl::ToInt64Milliseconds(health.uptime);
    Json& tiers_json = json["tiers"] = Json::array();
    for (const TierStats& tier : tiers.tiers) tiers_json.push_back(TierInfoJson(tier));
    json["text"] = TextTierJson(tiers.text);
    json["rebuild"] = RebuildQueueJson(tiers.rebuild);
    json["engine"] = EngineInfoJson(tiers.engine);
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }

  std::vector<std::pair<std::string, std::string>> lines = {
      {"node", ctx.options().node},
      {"state", state},
      {"version", health.version},
      {"data plane", health.data_plane},
      {"uptime", FormatDurationShort(health.uptime)},
  };
  for (const TierStats& tier : tiers.tiers) {
    lines.emplace_back(
        std::string(TierName(tier.tier)),
        absl::StrCat(FormatBytes(tier.used_bytes), " used of ", FormatBytes(tier.capacity_bytes),
                     " (", FormatPercent(tier.used_bytes, tier.capacity_bytes), "), ",
                     FormatBytes(tier.free_bytes()), " free, ", FormatCount(tier.blobs), " blobs"));
  }
  if (tiers.text.capacity_bytes > 0) {
    lines.emplace_back("text", absl::StrCat(FormatBytes(tiers.text.used_bytes), " used of ",
                                            FormatBytes(tiers.text.capacity_bytes), ", ",
                                            FormatCount(tiers.text.blobs),
                                            " blobs rebuildable from their tokens"));
  }
  lines.emplace_back("rebuilds", absl::StrCat(FormatCount(tiers.rebuild.queued), " queued, ",
                                              FormatCount(tiers.rebuild.in_flight), " in flight, ",
                                              FormatCount(tiers.rebuild.completed), " completed"));
  const EngineStats& engine = tiers.engine;
  lines.emplace_back("blobs", absl::StrCat(FormatCount(engine.blobs), " in ",
                                           FormatCount(engine.namespaces), " namespaces"));
  lines.emplace_back("in flight",
                     absl::StrCat(engine.pending_puts, " puts, ", engine.leases, " read leases"));
  ctx.out() << RenderKeyValues(lines);
  return absl::OkStatus();
}

absl::Status RunTiers(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(NodeTiers info, client->Tiers(ctx.Call()));

  if (ctx.json()) {
    ctx.out() << DumpJson(NodeTiersJson(info)) << "\n";
    return absl::OkStatus();
  }

  const IndexStats& index = info.index;
  const EngineStats& engine = info.engine;
  ctx.out() << RenderTiersTable(info) << "\nlookups by phase (pages)\n"
            << RenderLookupsTable(info.lookups) << "\nmiss-ratio curve\n"
            << RenderKeyValues({{"  sampled", info.curves.empty() && info.mrc.points.empty()
                                                  ? std::string("none yet (no Match sampled)")
                                                  : MissRatioCurveSummary(info.mrc)},
                                {"  per tier", "strata capacity"}})
            << "\ntext\n"
            << RenderKeyValues(TextTierLines(info.text)) << "\nrebuild queue\n"
            << RenderKeyValues(RebuildQueueLines(info.rebuild)) << "\nindex\n"
            << RenderKeyValues({
                   {"  roots", FormatCount(index.roots)},
                   {"  nodes", FormatCount(index.nodes)},
                   {"  leaves", FormatCount(index.leaves)},
                   {"  pages", FormatCount(index.pages)},
                   {"  pinned nodes", FormatCount(index.pinned_nodes)},
                   {"  token bytes", FormatBytes(index.token_bytes)},
                   {"  index memory", FormatBytes(index.index_bytes)},
               })
            << "\nengine\n"
            << RenderKeyValues({
                   {"  namespaces", FormatCount(engine.namespaces)},
                   {"  blobs", FormatCount(engine.blobs)},
                   {"  unlinked blobs", FormatCount(engine.unlinked_blobs)},
                   {"  token-only blobs", FormatCount(engine.token_only_blobs)},
                   {"  segments", FormatCount(engine.segments)},
                   {"  hot blobs replicated", FormatCount(engine.replicated_blobs)},
                   {"  pending puts", FormatCount(engine.pending_puts)},
                   {"  read leases", FormatCount(engine.leases)},
                   {"  matches", FormatCount(engine.matches)},
                   {"  matched pages",
                    absl::StrCat(FormatCount(engine.matched_pages), " of ",
                                 FormatCount(engine.queried_pages), " (",
                                 FormatPercent(engine.matched_pages, engine.queried_pages), ")")},
                   {"  draining", engine.draining ? "yes" : "no"},
               })
            << "\nmetadata store\n"
            << RenderKeyValues({
                   {"  records", FormatCount(info.meta.records)},
                   {"  on disk", FormatBytes(info.meta.disk_bytes)},
                   {"  memtables", FormatBytes(info.meta.memtable_bytes)},
                   {"  table readers", FormatBytes(info.meta.table_reader_bytes)},
                   {"  block cache", FormatBytes(info.meta.block_cache_bytes)},
               });
  return absl::OkStatus();
}

}  // namespace

Command StatusCommand() {
  return {{.name = "status",
           .summary = "Show the node's health, addresses and a tier summary.",
           .details = "Calls Health and Admin.Tiers. JSON: {node, state, draining, version, "
                      "data_plane, uptime_ms, tiers[], text, rebuild, engine}."},
          RunStatus};
}

Command TiersCommand() {
  return {{.name = "tiers",
           .summary = "Show per-tier statistics, the rebuild queue, the index and the engine.",
           .details = "Calls Admin.Tiers: per tier (HBM, DRAM, SSD as the node has them, then "
                      "TEXT) capacity, used, free, blobs, pages, hits, misses, evictions, "
                      "promotions, demotions (\"-\" where a figure has no meaning: TEXT holds no "
                      "bytes to hit) and the hit rate the live miss-ratio curve expects at the "
                      "tier's capacity (EXP.HIT%); Match's pages by phase (prefill, midfill, "
                      "decode): hits per tier, misses, hit rate; the curve's sample; the TEXT "
                      "tier's drops, deletions and rebuilds; the rebuild queue (queued, in "
                      "flight, requested, completed, expired, dropped); then index and engine "
                      "statistics. The curves themselves: strata capacity. JSON: {tiers[] (byte "
                      "tiers), text, rebuild, index, engine, lookups[], mrc, curves[], "
                      "token_bytes_per_kv_byte}."},
          RunTiers};
}

}  // namespace strata::cli
