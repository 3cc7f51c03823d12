// Miss-ratio curves as the node reports them: CurvePoint, MissRatioCurve and a tier's view
// of one (TierCurve).
//
// A curve is the hit ratio an LRU cache would have as a function of its capacity in bytes,
// over one stream of accesses (byte-weighted capacities, access-weighted hit ratios):
// points at ascending capacity, hit_ratio non-decreasing and in [0, 1]. HitRatioAt
// interpolates linearly between points, from an implicit point (0, 0) up to the first one
// (an empty cache hits nothing), and holds the last point's value beyond the last one; an
// empty curve is 0 everywhere. Produced by tiering/mrc (ExactMrc, ShardsMrc; PlanTiers
// makes the TierCurves), reported by the node (Admin.Tiers, /v1/tiers), shown by `strata
// capacity` and strata-replay.
//
// Value types and pure functions; thread-safe. Errors: none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/report/tier.h"

namespace strata::report {

struct CurvePoint {
  uint64_t capacity_bytes = 0;
  double hit_ratio = 0;  // 0..1

  friend bool operator==(const CurvePoint&, const CurvePoint&) = default;
};

struct MissRatioCurve {
  std::vector<CurvePoint> points;  // ascending capacity; hit_ratio non-decreasing, in [0, 1]
  uint64_t accesses = 0;           // accesses the curve describes
  uint64_t sampled_accesses = 0;   // of those, sampled (== accesses for an exact curve)
  double sample_rate = 1.0;        // the sampling rate in effect, (0, 1] (1: exact)
  uint64_t working_set_bytes = 0;  // (estimated) bytes of the distinct keys seen

  // Piecewise-linear interpolation between points: from (0, 0) to the first point, and the
  // last point's value beyond the last point. 0 for an empty curve.
  double HitRatioAt(uint64_t capacity_bytes) const;
  double MissRatioAt(uint64_t capacity_bytes) const { return 1.0 - HitRatioAt(capacity_bytes); }
};

// One tier's view of a curve: the tiers form one LRU hierarchy (DRAM, then SSD, then
// TEXT), so the cumulative hit ratio through a tier is the curve at the sum of the
// capacities up to it, the faster tiers held at their current sizes.
struct TierCurve {
  Tier tier = Tier::kDram;         // kDram, kSsd or kText
  uint64_t capacity_bytes = 0;     // the tier's capacity now (TEXT: its KV-byte equivalent)
  double expected_hit_ratio = 0;   // cumulative hit ratio through this tier at capacity_bytes
  std::vector<CurvePoint> points;  // cumulative hit ratio vs THIS tier's capacity, ascending
  // The smallest capacity on the view within one percentage point of the best the view
  // reaches; absent when no recommendation was made.
  std::optional<CurvePoint> recommended;
  std::string advice;  // one plain sentence for people

  friend bool operator==(const TierCurve&, const TierCurve&) = default;
};

}  // namespace strata::report
