#include "strata/tiering/mrc/tier_plan.h"

#include <algorithm>

#include "absl/strings/str_format.h"

#include "strata/base/byte_size.h"

namespace strata::tiering::mrc {
namespace {

using base::FormatBytes;  // "8 GiB", "1.5 MiB", "512 B" in the advice

constexpr double kWithinBest = 0.01;  // one percentage point

std::string Percent(double ratio) { return absl::StrFormat("%.1f%%", 100.0 * ratio); }

// One tier's view: the cumulative hit ratio H(faster + x) for x on this tier's grid.
TierCurve View(const MissRatioCurve& curve, report::Tier tier, const std::string& name,
               uint64_t faster_bytes, uint64_t current, uint32_t points) {
  TierCurve view;
  view.tier = tier;
  view.capacity_bytes = current;
  view.expected_hit_ratio = curve.HitRatioAt(faster_bytes + current);

  uint64_t span = std::max(current, curve.working_set_bytes);
  if (span == 0 && !curve.points.empty()) span = curve.points.back().capacity_bytes;
  span = std::max<uint64_t>(span, 1);
  std::vector<uint64_t> grid = CapacityGrid(2 * span, points);
  // Where this tier's curve rises (the working set beyond the faster tiers) gets a finer
  // grid of its own when it is short of the coarse grid's first step, and 0 (the tier
  // removed) is a point too.
  const uint64_t rise =
      curve.working_set_bytes > faster_bytes ? curve.working_set_bytes - faster_bytes : 0;
  if (rise > 0 && !grid.empty() && rise < 4 * grid.front()) {
    const std::vector<uint64_t> fine = CapacityGrid(rise, std::max<uint32_t>(points / 2, 1));
    grid.insert(grid.end(), fine.begin(), fine.end());
  }
  grid.push_back(0);
  grid.push_back(current);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());

  double best = 0;
  for (uint64_t x : grid) {
    // Interpolation on a non-decreasing curve is non-decreasing; the max keeps it so.
    best = std::max(best, curve.HitRatioAt(faster_bytes + x));
    view.points.push_back({.capacity_bytes = x, .hit_ratio = best});
  }
  for (const CurvePoint& point : view.points) {
    if (point.hit_ratio >= best - kWithinBest) {
      view.recommended = point;
      break;
    }
  }

  const std::string through = tier == report::Tier::kDram ? "" : " through " + name;
  const uint64_t to = view.recommended->capacity_bytes;
  if (curve.accesses == 0) {
    // Nothing measured: no reason to move.
    view.recommended = {.capacity_bytes = current, .hit_ratio = view.expected_hit_ratio};
    view.advice = absl::StrFormat("%s %s: no accesses measured yet", name, FormatBytes(current));
  } else if (best < kWithinBest) {
    // Nothing has been re-read yet (every access so far a first one): the curve says
    // nothing about size; no reason to move.
    view.recommended = {.capacity_bytes = current, .hit_ratio = view.expected_hit_ratio};
    view.advice = absl::StrFormat("%s %s: no re-reads measured yet (expected hit rate%s %s)", name,
                                  FormatBytes(current), through, Percent(view.expected_hit_ratio));
  } else if (to > current) {
    view.advice =
        absl::StrFormat("%s %s -> %s raises the expected hit rate%s from %s to %s", name,
                        FormatBytes(current), FormatBytes(to), through,
                        Percent(view.expected_hit_ratio), Percent(view.recommended->hit_ratio));
  } else if (to < current) {
    const std::string now = Percent(view.expected_hit_ratio);
    const std::string then = Percent(view.recommended->hit_ratio);
    view.advice = absl::StrFormat(
        "%s %s -> %s frees %s and keeps the expected hit rate%s within 1 point of its best "
        "(%s)",
        name, FormatBytes(current), FormatBytes(to), FormatBytes(current - to), through,
        then == now ? then + ", unchanged" : then + " instead of " + now);
  } else {
    view.advice = absl::StrFormat(
        "%s %s is within 1 point of the best this curve reaches: expected hit rate%s %s", name,
        FormatBytes(current), through, Percent(view.expected_hit_ratio));
  }
  return view;
}

}  // namespace

std::vector<TierCurve> PlanTiers(const MissRatioCurve& curve, const TierCapacities& capacities,
                                 uint32_t points) {
  points = std::max<uint32_t>(points, 1);
  std::vector<TierCurve> plan;
  if (capacities.hbm_bytes > 0) {
    plan.push_back(View(curve, report::Tier::kHbm, "HBM", 0, capacities.hbm_bytes, points));
  }
  plan.push_back(View(curve, report::Tier::kDram, "DRAM", 0, capacities.dram_bytes, points));
  uint64_t faster = capacities.dram_bytes;
  if (capacities.ssd_bytes > 0) {
    plan.push_back(View(curve, report::Tier::kSsd, "SSD", faster, capacities.ssd_bytes, points));
    faster += capacities.ssd_bytes;
  }
  if (capacities.text_kv_equivalent > 0) {
    plan.push_back(
        View(curve, report::Tier::kText, "TEXT", faster, capacities.text_kv_equivalent, points));
  }
  return plan;
}

}  // namespace strata::tiering::mrc
