#include "strata/store/cluster/placement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "xxhash.h"

namespace strata::store::cluster {
namespace {

constexpr uint64_t kIdSeed = 0x7374726174612e63;  // "strata.c"

}  // namespace

Placement::Placement(std::vector<PlacementNode> nodes) {
  std::erase_if(nodes, [](const PlacementNode& n) { return !(n.weight > 0); });
  std::sort(nodes.begin(), nodes.end(),
            [](const PlacementNode& a, const PlacementNode& b) { return a.id < b.id; });
  nodes_ = std::move(nodes);
  seeds_.reserve(nodes_.size());
  for (const PlacementNode& node : nodes_) {
    seeds_.push_back(XXH3_64bits_withSeed(node.id.data(), node.id.size(), kIdSeed));
  }
}

Placement Placement::FromView(const std::vector<NodeRecord>& view,
                              std::initializer_list<NodeState> states) {
  std::vector<PlacementNode> nodes;
  for (const NodeRecord& record : view) {
    if (std::find(states.begin(), states.end(), record.state) == states.end()) continue;
    const double gib =
        static_cast<double>(record.hbm_bytes + record.dram_bytes + record.ssd_bytes) /
        static_cast<double>(uint64_t{1} << 30);
    nodes.push_back(PlacementNode{.id = record.id, .weight = std::max(gib, 1.0 / 1024)});
  }
  return Placement(std::move(nodes));
}

double Placement::Score(size_t node, const radix::PrefixHash& h) const {
  const uint64_t words[2] = {h.hi, h.lo};
  const uint64_t x = XXH3_64bits_withSeed(words, sizeof(words), seeds_[node]);
  const double u = static_cast<double>((x >> 11) + 1) * 0x1.0p-53;  // (0, 1]
  const double minus_log = -std::log(u);
  if (minus_log <= 0) return std::numeric_limits<double>::infinity();
  return nodes_[node].weight / minus_log;
}

int Placement::Owner(const radix::PrefixHash& h) const {
  int best = -1;
  double best_score = -1;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const double score = Score(i, h);
    if (score > best_score) {  // strict: a tie keeps the smaller id (nodes_ is sorted)
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

std::vector<int> Placement::Ranked(const radix::PrefixHash& h, size_t n) const {
  std::vector<std::pair<double, int>> scored;
  scored.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) scored.emplace_back(Score(i, h), static_cast<int>(i));
  n = std::min(n, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second < b.second;
                    });
  std::vector<int> ranked;
  ranked.reserve(n);
  for (size_t i = 0; i < n; ++i) ranked.push_back(scored[i].second);
  return ranked;
}

std::vector<radix::PrefixHash> SegmentStarts(const radix::PrefixHash& root,
                                             const std::vector<radix::PrefixHash>& page_hashes,
                                             uint32_t segment_pages) {
  std::vector<radix::PrefixHash> starts;
  if (page_hashes.empty()) return starts;
  starts.reserve((page_hashes.size() + segment_pages - 1) / segment_pages);
  starts.push_back(root);
  // h_{kS} is page_hashes[kS - 1]; segment k exists while kS < n.
  for (size_t page = segment_pages; page < page_hashes.size(); page += segment_pages) {
    starts.push_back(page_hashes[page - 1]);
  }
  return starts;
}

}  // namespace strata::store::cluster
