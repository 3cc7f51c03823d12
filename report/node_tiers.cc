#include "strata/report/node_tiers.h"

namespace strata::report {

const TierStats* NodeTiers::Find(Tier tier) const {
  for (const TierStats& stats : tiers) {
    if (stats.tier == tier) return &stats;
  }
  return nullptr;
}

const TierCurve* NodeTiers::CurveFor(Tier tier) const {
  for (const TierCurve& curve : curves) {
    if (curve.tier == tier) return &curve;
  }
  return nullptr;
}

const LookupCounts* NodeTiers::LookupsFor(LookupPhase phase) const {
  for (const LookupCounts& counts : lookups) {
    if (counts.phase == phase) return &counts;
  }
  return nullptr;
}

}  // namespace strata::report
