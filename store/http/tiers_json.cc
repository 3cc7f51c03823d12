#include "strata/store/http/tiers_json.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

#include "nlohmann/json.hpp"

namespace strata::store::http {
namespace {

// Insertion-ordered, so the document reads in the order written here (docs/api.md).
using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 3> kPhases = {"prefill", "midfill", "decode"};

// A ratio: its shortest round-trip form, or null when it is not finite.
Json Ratio(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json PointsJson(const std::vector<tiering::mrc::CurvePoint>& points) {
  Json out = Json::array();
  for (const tiering::mrc::CurvePoint& p : points) {
    out.push_back({{"capacity_bytes", p.capacity_bytes}, {"hit_ratio", Ratio(p.hit_ratio)}});
  }
  return out;
}

const tiering::mrc::TierCurve* CurveOf(const core::NodeTiers& t, std::string_view tier) {
  for (const tiering::mrc::TierCurve& c : t.curves) {
    if (c.tier == tier) return &c;
  }
  return nullptr;
}

// The capacity-planning part of a tier: its curve view, or null when it has none.
Json PlanJson(const core::NodeTiers& t, std::string_view tier) {
  const tiering::mrc::TierCurve* c = CurveOf(t, tier);
  if (c == nullptr) return nullptr;
  Json plan;
  plan["capacity_bytes"] = c->capacity_bytes;
  plan["expected_hit_ratio"] = Ratio(c->expected_hit_ratio);
  plan["points"] = PointsJson(c->points);
  plan["recommended"] = {{"capacity_bytes", c->recommended.capacity_bytes},
                         {"hit_ratio", Ratio(c->recommended.hit_ratio)}};
  plan["advice"] = c->advice;
  return plan;
}

Json ByteTierJson(const core::NodeTiers& t, std::string_view name,
                  const std::optional<tiering::TierStats>& stats, uint64_t pages) {
  const tiering::TierStats s = stats.value_or(tiering::TierStats{});
  Json j;
  j["tier"] = name;
  j["present"] = stats.has_value();
  j["capacity_bytes"] = s.capacity_bytes;
  j["used_bytes"] = s.used_bytes;
  j["free_bytes"] = s.free_bytes();
  j["blobs"] = s.blobs;
  j["pages"] = pages;
  j["read_hits"] = s.hits;
  j["read_misses"] = s.misses;
  j["evictions"] = s.evictions;
  j["promotions"] = s.promotions;
  j["demotions"] = s.demotions;
  j["plan"] = PlanJson(t, name);
  return j;
}

Json TextTierJson(const core::NodeTiers& t) {
  const core::TextTierStats& s = t.text;
  Json j;
  j["tier"] = "text";
  j["present"] = s.capacity_bytes > 0;
  j["capacity_bytes"] = s.capacity_bytes;
  j["used_bytes"] = s.used_bytes;
  j["free_bytes"] = s.capacity_bytes > s.used_bytes ? s.capacity_bytes - s.used_bytes : 0;
  j["blobs"] = s.blobs;
  j["pages"] = t.text_pages;
  j["drops"] = s.drops;
  j["deletions"] = s.deletions;
  j["rebuilds"] = s.rebuilds;
  j["plan"] = PlanJson(t, "text");
  return j;
}

}  // namespace

std::string FormatTiersJson(const NodeSnapshot& snapshot) {
  const core::NodeTiers& t = snapshot.tiers;
  Json doc;
  doc["tiers"] = Json::array({ByteTierJson(t, "dram", t.dram, t.dram_pages),
                              ByteTierJson(t, "ssd", t.ssd, t.ssd_pages), TextTierJson(t)});

  Json& lookups = doc["lookups"] = Json::object();
  for (size_t p = 0; p < kPhases.size(); ++p) {
    const core::LookupCounts& c = t.lookups[p];
    Json& phase = lookups[std::string(kPhases[p])];
    phase["lookups"] = c.lookups;
    phase["queried_pages"] = c.queried_pages;
    phase["dram_hit_pages"] = c.dram_hit_pages;
    phase["ssd_hit_pages"] = c.ssd_hit_pages;
    phase["text_hit_pages"] = c.text_hit_pages;
    phase["miss_pages"] = c.miss_pages;
  }

  Json& mrc = doc["mrc"];
  mrc["accesses"] = t.mrc.accesses;
  mrc["sampled_accesses"] = t.mrc.sampled_accesses;
  mrc["sample_rate"] = Ratio(t.mrc.sample_rate);
  mrc["working_set_bytes"] = t.mrc.working_set_bytes;
  mrc["token_bytes_per_kv_byte"] = Ratio(t.token_bytes_per_kv_byte);
  mrc["points"] = PointsJson(t.mrc.points);

  Json& rebuild = doc["rebuild"];
  rebuild["queued"] = t.rebuild.queued;
  rebuild["in_flight"] = t.rebuild.in_flight;
  rebuild["requested"] = t.rebuild.requested;
  rebuild["completed"] = t.rebuild.completed;
  rebuild["expired"] = t.rebuild.expired;
  rebuild["dropped"] = t.rebuild.dropped;

  Json& node = doc["node"];
  node["blobs"] = t.blobs;
  node["unlinked_blobs"] = t.unlinked_blobs;
  node["namespaces"] = t.namespaces;
  node["leases"] = t.leases;
  node["pending_puts"] = t.pending_puts;
  node["draining"] = t.draining;

  // Bytes that are not UTF-8 (a namespace name from a client, say) become U+FFFD.
  std::string out = doc.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  out += '\n';
  return out;
}

}  // namespace strata::store::http
