#include "strata/tiering/mrc/miss_ratio_curve.h"

#include <algorithm>
#include <cmath>

namespace strata::tiering::mrc {

std::vector<uint64_t> CapacityGrid(uint64_t max_bytes, uint32_t points) {
  std::vector<uint64_t> grid;
  grid.reserve(points);
  for (uint32_t i = 1; i <= points; ++i) {
    grid.push_back(static_cast<uint64_t>(static_cast<unsigned __int128>(max_bytes) * i / points));
  }
  return grid;
}

double MeanAbsoluteError(const MissRatioCurve& a, const MissRatioCurve& b,
                         absl::Span<const uint64_t> capacities) {
  if (capacities.empty()) return 0;
  double sum = 0;
  for (uint64_t c : capacities) sum += std::abs(a.HitRatioAt(c) - b.HitRatioAt(c));
  return sum / static_cast<double>(capacities.size());
}

double MaxAbsoluteError(const MissRatioCurve& a, const MissRatioCurve& b,
                        absl::Span<const uint64_t> capacities) {
  double max = 0;
  for (uint64_t c : capacities) max = std::max(max, std::abs(a.HitRatioAt(c) - b.HitRatioAt(c)));
  return max;
}

}  // namespace strata::tiering::mrc
