// MissRatioCurve: the hit ratio an LRU cache would have, as a function of its capacity in
// bytes, over one stream of accesses (byte-weighted capacities, access-weighted hit ratios).
//
// Produced by ExactMrc (exact_mrc.h: Mattson's stack algorithm over byte-weighted reuse
// distances) and ShardsMrc (shards_mrc.h: the SHARDS estimate from a spatially hashed
// sample); consumed by PlanTiers (tier_plan.h), the node's /v1/tiers endpoint, `strata
// capacity` and strata-replay.
//
// A curve is a list of points at the capacities its producer was asked for: ascending
// capacity, hit_ratio non-decreasing and in [0, 1]. HitRatioAt interpolates linearly between
// points, from an implicit point (0, 0) up to the first one (an empty cache hits nothing),
// and holds the last point's value beyond the last one; an empty curve is 0 everywhere.
//
// Value types and pure functions; thread-safe. Errors: none.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace strata::tiering::mrc {

struct CurvePoint {
  uint64_t capacity_bytes = 0;
  double hit_ratio = 0;

  friend bool operator==(const CurvePoint&, const CurvePoint&) = default;
};

struct MissRatioCurve {
  std::vector<CurvePoint> points;  // ascending capacity; hit_ratio non-decreasing, in [0, 1]
  uint64_t accesses = 0;           // accesses the curve describes
  uint64_t sampled_accesses = 0;   // of those, sampled (== accesses for an exact curve)
  double sample_rate = 1.0;        // the sampling rate in effect (1 for an exact curve)
  uint64_t working_set_bytes = 0;  // (estimated) bytes of the distinct keys seen

  // Piecewise-linear interpolation between points: from (0, 0) to the first point, and the
  // last point's value beyond the last point. 0 for an empty curve.
  double HitRatioAt(uint64_t capacity_bytes) const;
  double MissRatioAt(uint64_t capacity_bytes) const { return 1.0 - HitRatioAt(capacity_bytes); }
};

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
