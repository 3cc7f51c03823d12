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

// A ratio: its shortest round-trip form, or null when it is not finite.
Json Ratio(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json PointsJson(const std::vector<report::CurvePoint>& points) {
  Json out = Json::array();
  for (const report::CurvePoint& p : points) {
    out.push_back({{"capacity_bytes", p.capacity_bytes}, {"hit_ratio", Ratio(p.hit_ratio)}});
  }
  return out;
}

// The capacity-planning part of a tier: its curve view, or null when it has none.
Json PlanJson(const report::NodeTiers& t, report::Tier tier) {
  const report::TierCurve* c = t.CurveFor(tier);
  if (c == nullptr) return nullptr;
  Json plan;
  plan["capacity_bytes"] = c->capacity_bytes;
  plan["expected_hit_ratio"] = Ratio(c->expected_hit_ratio);
  plan["points"] = PointsJson(c->points);
  if (c->recommended.has_value()) {
    plan["recommended"] = {{"capacity_bytes", c->recommended->capacity_bytes},
                           {"hit_ratio", Ratio(c->recommended->hit_ratio)}};
  } else {
    plan["recommended"] = nullptr;
  }
  plan["advice"] = c->advice;
  return plan;
}

// A byte tier; zeros and "present": false when the node has no such tier.
Json ByteTierJson(const report::NodeTiers& t, report::Tier tier) {
  const report::TierStats* stats = t.Find(tier);
  const report::TierStats s = stats != nullptr ? *stats : report::TierStats{.tier = tier};
  Json j;
  j["tier"] = report::TierName(tier);
  j["present"] = stats != nullptr;
  j["capacity_bytes"] = s.capacity_bytes;
  j["used_bytes"] = s.used_bytes;
  j["free_bytes"] = s.free_bytes();
  j["blobs"] = s.blobs;
  j["pages"] = s.pages;
  j["read_hits"] = s.hits;
  j["read_misses"] = s.misses;
  j["evictions"] = s.evictions;
  j["promotions"] = s.promotions;
  j["demotions"] = s.demotions;
  j["plan"] = PlanJson(t, tier);
  return j;
}

Json TextTierJson(const report::NodeTiers& t) {
  const report::TextTierStats& s = t.text;
  Json j;
  j["tier"] = "text";
  j["present"] = s.capacity_bytes > 0;
  j["capacity_bytes"] = s.capacity_bytes;
  j["used_bytes"] = s.used_bytes;
  j["free_bytes"] = s.capacity_bytes > s.used_bytes ? s.capacity_bytes - s.used_bytes : 0;
  j["blobs"] = s.blobs;
  j["pages"] = s.pages;
  j["drops"] = s.drops;
  j["deletions"] = s.deletions;
  j["rebuilds"] = s.rebuilds;
  j["plan"] = PlanJson(t, report::Tier::kText);
  return j;
}

}  // namespace

std::string FormatTiersJson(const NodeSnapshot& snapshot) {
  const report::NodeTiers& t = snapshot.tiers;
  Json doc;
  doc["tiers"] = Json::array(
      {ByteTierJson(t, report::Tier::kDram), ByteTierJson(t, report::Tier::kSsd), TextTierJson(t)});

  Json& lookups = doc["lookups"] = Json::object();
  for (const report::LookupPhase p : report::kCountedPhases) {
    const report::LookupCounts* counts = t.LookupsFor(p);
    const report::LookupCounts c = counts != nullptr ? *counts : report::LookupCounts{.phase = p};
    Json& phase = lookups[std::string(report::LookupPhaseName(p))];
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
  node["blobs"] = t.engine.blobs;
  node["unlinked_blobs"] = t.engine.unlinked_blobs;
  node["namespaces"] = t.engine.namespaces;
  node["leases"] = t.engine.leases;
  node["pending_puts"] = t.engine.pending_puts;
  node["draining"] = t.engine.draining;

  Json& tenants = doc["tenants"] = Json::array();
  for (const report::TenantUsage& u : t.tenants) {
    tenants.push_back({{"tenant", u.tenant},
                       {"blobs", u.blobs},
                       {"dram_bytes", u.dram_bytes},
                       {"ssd_bytes", u.ssd_bytes},
                       {"text_blobs", u.text_blobs},
                       {"dram_charged_bytes", u.dram_charged_bytes},
                       {"ssd_charged_bytes", u.ssd_charged_bytes},
                       {"dram_quota_bytes", u.dram_quota_bytes},
                       {"ssd_quota_bytes", u.ssd_quota_bytes},
                       {"quota_evictions", u.quota_evictions},
                       {"quota_refusals", u.quota_refusals}});
  }

  // Bytes that are not UTF-8 (a namespace name from a client, say) become U+FFFD.
  std::string out = doc.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  out += '\n';
  return out;
}

}  // namespace strata::store::http
