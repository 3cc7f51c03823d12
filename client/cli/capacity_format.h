// How the CLI shows lookups by phase and the node's miss-ratio curves: the lookups table
// of `strata tiers`, the per-tier curve tables of `strata capacity`, their JSON, and the
// chart `strata capacity --plot` draws.
//
// Lookups by phase (each queried page counted once: in the fastest tier that held it, or
// as a miss; HIT% counts every found page, TEXT included, as the curves do):
//
//   PHASE    LOOKUPS  PAGES  DRAM  SSD  TEXT  MISS  HIT%
//   prefill        4     32    12    0     0    20  37.5%
//   midfill        0      0     0    0     0     0      -
//   decode         2     16    16    0     0     0 100.0%
//   total          6     48    28    0     0    20  58.3%
//
// One tier's curve (`strata capacity`): a header line, then capacity -> expected hit rate,
// the current capacity and the recommendation marked (rows added for them when the curve's
// points do not hold them), then the node's advice:
//
//   dram: 64.0 MiB now, expected hit rate 61.0%; recommended 96.0 MiB (74.0%)
//     CAPACITY  EXPECTED HIT%
//     32.0 MiB          40.0%
//     64.0 MiB          61.0%  <- current
//     96.0 MiB          74.0%  <- recommended
//   advice: DRAM 64 MiB -> 96 MiB raises the expected hit rate from 61.0% to 74.0%
//
// The TEXT tier's capacities are KV-byte equivalents of its token budget (the curve counts
// KV bytes); its table adds a TOKEN BYTES column (capacity x token_bytes_per_kv_byte) when
// that ratio is known.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "client/cli/json_output.h"
#include "strata/plot/line_chart.h"
#include "strata/types.h"

namespace strata::cli {

// A ratio in [0, 1] as a percentage with one decimal: 0.61 -> "61.0%"; "-" when not finite.
std::string FormatRatio(double ratio);

// The lookups table above, header line first, each line ending in '\n'; a "total" row
// after the phases.
std::string RenderLookupsTable(const std::vector<LookupCounts>& lookups);

// [{phase, lookups, queried_pages, dram_hit_pages, ssd_hit_pages, text_hit_pages,
// miss_pages, hit_ratio}] (hit_ratio null when no page was queried).
Json LookupsJson(const std::vector<LookupCounts>& lookups);

// "12,345 page accesses, 123 sampled (rate 0.0100), working set 80.0 MiB".
std::string MissRatioCurveSummary(const MissRatioCurve& mrc);

// One tier's block above (header, table, advice), each line ending in '\n'.
std::string RenderTierCurve(const TierCurve& curve, double token_bytes_per_kv_byte);

// {points: [{capacity_bytes, hit_ratio}], accesses, sampled_accesses, sample_rate,
// working_set_bytes}.
Json MissRatioCurveJson(const MissRatioCurve& mrc);
// {tier, capacity_bytes, expected_hit_ratio, recommended: {capacity_bytes, hit_ratio} or
// null, advice, points: [...]}.
Json TierCurveJson(const TierCurve& curve);

// The chart of `strata capacity --plot`: one series per curve (named by its tier: hit
// ratio against that tier's capacity), the y axis 0..100%, capacities in bytes, and a
// dashed marker at each tier's current capacity ("dram now"). REQUIRES: every pointer
// non-null.
plot::LineChart CapacityChart(const std::vector<const TierCurve*>& curves);

}  // namespace strata::cli
