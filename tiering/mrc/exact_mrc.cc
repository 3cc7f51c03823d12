#include "strata/tiering/mrc/exact_mrc.h"

#include <algorithm>
#include <utility>

namespace strata::tiering::mrc {

void ExactMrc::Access(uint64_t key, uint64_t bytes) {
  ++accesses_;
  const std::optional<uint64_t> between = stack_.Access(key, bytes);
  if (!between.has_value()) {
    ++cold_misses_;
    return;
  }
  ++distance_counts_[*between + bytes];
}

MissRatioCurve ExactMrc::Curve(absl::Span<const uint64_t> capacities) const {
  std::vector<uint64_t> grid(capacities.begin(), capacities.end());
  if (grid.empty()) grid = CapacityGrid(std::max<uint64_t>(1, stack_.live_bytes()), 64);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());

  std::vector<std::pair<uint64_t, uint64_t>> distances(distance_counts_.begin(),
                                                       distance_counts_.end());
  std::sort(distances.begin(), distances.end());

  MissRatioCurve curve;
  curve.accesses = accesses_;
  curve.sampled_accesses = accesses_;
  curve.sample_rate = 1.0;
  curve.working_set_bytes = stack_.live_bytes();
  curve.points.reserve(grid.size());
  uint64_t hits = 0;
  size_t next = 0;
  for (uint64_t capacity : grid) {
    while (next < distances.size() && distances[next].first <= capacity) {
      hits += distances[next++].second;
    }
    const double ratio =
        accesses_ == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(accesses_);
    curve.points.push_back({.capacity_bytes = capacity, .hit_ratio = ratio});
  }
  return curve;
}

}  // namespace strata::tiering::mrc
