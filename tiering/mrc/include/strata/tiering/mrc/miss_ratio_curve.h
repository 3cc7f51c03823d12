// MissRatioCurve: the hit ratio an LRU cache would have, as a function of its capacity in
// bytes, over one stream of accesses (byte-weighted capacities, access-weighted hit ratios).
//
// Produced by ExactMrc (exact_mrc.h: Mattson's stack algorithm over byte-weighted reuse
// distances) and ShardsMrc (shards_mrc.h: the SHARDS estimate from a spatially hashed
// sample); consumed by PlanTiers (tier_plan.h), the node's /v1/tiers endpoint, `strata
// capacity` and strata-replay.
//
// A curve is a list of points at the capacities its producer was asked for (the type, and
// HitRatioAt's interpolation, are report::MissRatioCurve's: strata/report/curve.h). Here:
// capacity grids and the distance between two curves.
//
// Value types and pure functions; thread-safe. Errors: none.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

#include "strata/report/curve.h"

namespace strata::tiering::mrc {

// The curve types are the reported ones (strata/report/curve.h).
using report::CurvePoint;
using report::MissRatioCurve;

// `points` evenly spaced capacities: max_bytes * i / points for i = 1..points (rounded
// down), so the last is max_bytes. Capacities repeat when max_bytes < points.
// REQUIRES: points > 0 (0 gives an empty grid).
std::vector<uint64_t> CapacityGrid(uint64_t max_bytes, uint32_t points);

// Mean over `capacities` of |a.HitRatioAt(c) - b.HitRatioAt(c)|; 0 when capacities is empty.
double MeanAbsoluteError(const MissRatioCurve& a, const MissRatioCurve& b,
                         absl::Span<const uint64_t> capacities);
// The largest |a.HitRatioAt(c) - b.HitRatioAt(c)| over `capacities`; 0 when empty.
double MaxAbsoluteError(const MissRatioCurve& a, const MissRatioCurve& b,
                        absl::Span<const uint64_t> capacities);

}  // namespace strata::tiering::mrc
