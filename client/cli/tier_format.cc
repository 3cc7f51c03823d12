#include "client/cli/tier_format.h"

#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/capacity_format.h"
#include "client/cli/table.h"

namespace strata::cli {

namespace {

// The curve's expected hit ratio at the tier's capacity; "-" without a curve.
std::string ExpectedHitRate(const NodeTiers& info, Tier tier) {
  const TierCurve* curve = info.CurveFor(tier);
  if (curve == nullptr) return "-";
  return FormatRatio(curve->expected_hit_ratio);
}

}  // namespace

std::string RenderTiersTable(const NodeTiers& info) {
  Table table({{"TIER"},
               {"CAPACITY", Align::kRight},
               {"USED", Align::kRight},
               {"FREE", Align::kRight},
               {"USED%", Align::kRight},
               {"BLOBS", Align::kRight},
               {"PAGES", Align::kRight},
               {"HITS", Align::kRight},
               {"MISSES", Align::kRight},
               {"HIT%", Align::kRight},
               {"EVICTIONS", Align::kRight},
               {"PROMOTIONS", Align::kRight},
               {"DEMOTIONS", Align::kRight},
               {"EXP.HIT%", Align::kRight}});
  for (const TierStats& tier : info.tiers) {
    table.AddRow({std::string(TierName(tier.tier)), FormatBytes(tier.capacity_bytes),
                  FormatBytes(tier.used_bytes), FormatBytes(tier.free_bytes()),
                  FormatPercent(tier.used_bytes, tier.capacity_bytes), FormatCount(tier.blobs),
                  FormatCount(tier.pages), FormatCount(tier.hits), FormatCount(tier.misses),
                  FormatPercent(tier.hits, tier.hits + tier.misses), FormatCount(tier.evictions),
                  FormatCount(tier.promotions), FormatCount(tier.demotions),
                  ExpectedHitRate(info, tier.tier)});
  }
  const TextTierStats& text = info.text;
  if (text.capacity_bytes > 0 || text.blobs > 0) {
    const uint64_t free =
        text.capacity_bytes > text.used_bytes ? text.capacity_bytes - text.used_bytes : 0;
    table.AddRow({std::string(TierName(Tier::kText)), FormatBytes(text.capacity_bytes),
                  FormatBytes(text.used_bytes), FormatBytes(free),
                  FormatPercent(text.used_bytes, text.capacity_bytes), FormatCount(text.blobs),
                  FormatCount(text.pages), "-", "-", "-", FormatCount(text.deletions), "-", "-",
                  ExpectedHitRate(info, Tier::kText)});
  }
  return table.Render();
}

std::vector<std::pair<std::string, std::string>> TextTierLines(const TextTierStats& text) {
  if (text.capacity_bytes == 0) return {{"  none", "(the node keeps no text)"}};
  return {
      {"  capacity", FormatBytes(text.capacity_bytes)},
      {"  used", absl::StrCat(FormatBytes(text.used_bytes), " (",
                              FormatPercent(text.used_bytes, text.capacity_bytes), ")")},
      {"  blobs", FormatCount(text.blobs)},
      {"  drops", absl::StrCat(FormatCount(text.drops), " (bytes dropped, tokens kept)")},
      {"  deletions", FormatCount(text.deletions)},
      {"  rebuilds", absl::StrCat(FormatCount(text.rebuilds), " (filled again by a put)")},
  };
}

std::vector<std::pair<std::string, std::string>> RebuildQueueLines(const RebuildQueueStats& queue) {
  return {
      {"  queued", FormatCount(queue.queued)},       {"  in flight", FormatCount(queue.in_flight)},
      {"  requested", FormatCount(queue.requested)}, {"  completed", FormatCount(queue.completed)},
      {"  expired", FormatCount(queue.expired)},     {"  dropped", FormatCount(queue.dropped)},
  };
}

Json TextTierJson(const TextTierStats& text) {
  Json json;
  json["capacity_bytes"] = text.capacity_bytes;
  json["used_bytes"] = text.used_bytes;
  json["blobs"] = text.blobs;
  json["drops"] = text.drops;
  json["deletions"] = text.deletions;
  json["rebuilds"] = text.rebuilds;
  json["pages"] = text.pages;
  return json;
}

Json RebuildQueueJson(const RebuildQueueStats& queue) {
  Json json;
  json["queued"] = queue.queued;
  json["in_flight"] = queue.in_flight;
  json["requested"] = queue.requested;
  json["completed"] = queue.completed;
  json["expired"] = queue.expired;
  json["dropped"] = queue.dropped;
  return json;
}

Json NodeTiersJson(const NodeTiers& info) {
  Json json;
  Json& tiers_json = json["tiers"] = Json::array();
  for (const TierStats& tier : info.tiers) tiers_json.push_back(TierInfoJson(tier));
  json["text"] = TextTierJson(info.text);
  json["rebuild"] = RebuildQueueJson(info.rebuild);
  json["index"] = IndexInfoJson(info.index);
  json["engine"] = EngineInfoJson(info.engine);
  json["meta"] = MetaStatsJson(info.meta);
  json["lookups"] = LookupsJson(info.lookups);
  json["mrc"] = MissRatioCurveJson(info.mrc);
  Json& curves = json["curves"] = Json::array();
  for (const TierCurve& curve : info.curves) curves.push_back(TierCurveJson(curve));
  json["token_bytes_per_kv_byte"] = info.token_bytes_per_kv_byte;
  return json;
}

std::string EvictSummary(Tier tier, std::optional<uint64_t> asked, const EvictResult& result) {
  std::string line = absl::StrCat("evicted ", FormatBytes(result.bytes_freed), " of ",
                                  asked.has_value() ? absl::StrCat(FormatBytes(*asked), " asked")
                                                    : std::string("all that could go"),
                                  " from ", std::string(TierName(tier)), ": ");
  if (tier == Tier::kText) {
    absl::StrAppend(&line, result.blobs_unlinked, " TEXT records deleted (", result.pages_evicted,
                    " index pages)");
    return line;
  }
  if (tier == Tier::kSsd) {
    absl::StrAppend(&line, result.blobs_dropped, " blobs dropped to text");
  } else {
    absl::StrAppend(&line, result.blobs_demoted, " blobs demoted to ssd, ", result.blobs_dropped,
                    " dropped to text");
  }
  if (result.blobs_unlinked > 0 || result.pages_evicted > 0) {
    absl::StrAppend(&line, ", ", result.blobs_unlinked, " left the index (", result.pages_evicted,
                    " pages)");
  }
  return line;
}

std::string RebuildRequestSummary(const BlobKey& key, bool with_prefix,
                                  const RebuildRequestResult& result) {
  return absl::StrCat("rebuild of ", key.ToHex(), with_prefix ? " (with its prefix)" : "", ": ",
                      result.queued, " queued, ", result.already_queued, " already queued, ",
                      result.resident, " resident");
}

bool HasBytes(const std::vector<Tier>& tiers) {
  for (Tier tier : tiers) {
    if (tier != Tier::kText) return true;
  }
  return false;
}

}  // namespace strata::cli
