// PlanTiers: per-tier views of one byte-weighted miss-ratio curve, for capacity planners
// (the node's /v1/tiers, `strata capacity`).
//
// The tiers form one LRU hierarchy — DRAM, then SSD, then TEXT — so the cumulative hit
// ratio through a tier is the curve H at the sum of the capacities up to that tier:
//   dram: H(d)              for d on a grid up to ~2x max(current DRAM, working set);
//   ssd:  H(dram + s)       for s on a grid up to ~2x max(current SSD, working set);
//   text: H(dram + ssd + t) (a TEXT hit is a page whose tokens are known and whose KV bytes
//         are recomputed; t is the TEXT budget converted to KV bytes).
// Each view's points hold the current capacity too. `recommended` is the smallest capacity
// on the view whose hit ratio is within 1 percentage point of the best the view reaches;
// `advice` says in one sentence what moving to it does, e.g.
//   "DRAM 8 GiB -> 12 GiB raises the expected hit rate from 61.0% to 74.0%".
// A tier with capacity 0 (no SSD, no TEXT) gets no view; DRAM always gets one. A curve of
// no accesses recommends the current capacities and says so.
//
// Pure function; thread-safe. Errors: none (an empty curve plans to hit ratio 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/tiering/mrc/miss_ratio_curve.h"

namespace strata::tiering::mrc {

struct TierCapacities {
  uint64_t dram_bytes = 0;
  uint64_t ssd_bytes = 0;           // 0: no SSD tier
  uint64_t text_kv_equivalent = 0;  // TEXT budget converted to KV bytes (0: no TEXT tier)
  // The HBM tier (0: none): an inclusive cache above DRAM, so its view is the curve from 0
  // to hbm_bytes on its own, and DRAM's view does not start after it.
  uint64_t hbm_bytes = 0;
};

// A tier's view (report::TierCurve, strata/report/curve.h); PlanTiers always sets
// `recommended`.
using report::TierCurve;

// REQUIRES: points > 0.
std::vector<TierCurve> PlanTiers(const MissRatioCurve& curve, const TierCapacities& capacities,
                                 uint32_t points = 32);

}  // namespace strata::tiering::mrc
