#include "strata/report/curve.h"

#include <algorithm>
#include <iterator>

namespace strata::report {

double MissRatioCurve::HitRatioAt(uint64_t capacity_bytes) const {
  if (points.empty()) return 0;
  auto it = std::lower_bound(
      points.begin(), points.end(), capacity_bytes,
      [](const CurvePoint& p, uint64_t capacity) { return p.capacity_bytes < capacity; });
  if (it == points.end()) return points.back().hit_ratio;
  if (it->capacity_bytes == capacity_bytes) return it->hit_ratio;
  const CurvePoint low = it == points.begin() ? CurvePoint{} : *std::prev(it);
  const double span = static_cast<double>(it->capacity_bytes - low.capacity_bytes);
  const double along = static_cast<double>(capacity_bytes - low.capacity_bytes) / span;
  return low.hit_ratio + (it->hit_ratio - low.hit_ratio) * along;
}

}  // namespace strata::report
