// Placement: which node owns which segment of a sequence — computed the same way by every
// node and client from the membership view, so no lookup service sits on the read path.
//
// Segments. A sequence's pages are cut into segments of S pages (`segment_pages`): segment
// k covers pages [kS, (k+1)S) and is named by the prefix hash at its start, h_{kS} (h_0, the
// namespace hash, for k = 0). A blob never crosses a segment boundary, so each node's index
// holds sub-trees rooted at segment-start hashes.
//
// Owners. Weighted rendezvous hashing over the nodes: node i scores
//     w_i / -ln(u_i),   u_i = (XXH3-64(h, seed_i) >> 11 + 1) / 2^53  in (0, 1],
// seed_i = XXH3-64 of the node id; the highest score owns the segment and the next ones
// are its replica and fallback ranks. The share of segments a node owns is w_i / sum(w) in
// expectation; adding a node moves only the segments it now wins (about w_new / sum(w) of
// them), removing one moves only its own. Ties (equal scores) go to the smaller id.
//
// Placement::FromView takes the nodes of a membership view in the given states (serving by
// default), weighted by their capacity (HBM + DRAM + SSD bytes). A cluster client places
// segments on serving and joining nodes; the placement of serving and draining nodes is
// where segments were before the joins and drains under way (ClusterClient asks there too). Pure
// values; thread-safe for concurrent const use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "strata/radix/prefix_hash.h"
#include "strata/store/cluster/node_record.h"

namespace strata::store::cluster {

struct PlacementNode {
  std::string id;
  double weight = 1;  // > 0; nodes with weight <= 0 are left out
};

class Placement {
 public:
  explicit Placement(std::vector<PlacementNode> nodes);
  // The nodes of `view` in one of `states`, weighted by capacity in GiB (at least 1/1024).
  static Placement FromView(const std::vector<NodeRecord>& view,
                            std::initializer_list<NodeState> states = {NodeState::kServing});

  const std::vector<PlacementNode>& nodes() const { return nodes_; }
  bool empty() const { return nodes_.empty(); }

  // The owner of the segment starting at `h` (an index into nodes()), or -1 when there are
  // no nodes.
  int Owner(const radix::PrefixHash& h) const;
  // The first min(n, nodes) nodes by score, owner first.
  std::vector<int> Ranked(const radix::PrefixHash& h, size_t n) const;

 private:
  double Score(size_t node, const radix::PrefixHash& h) const;

  std::vector<PlacementNode> nodes_;  // sorted by id
  std::vector<uint64_t> seeds_;
};

// The segment-start hashes of a sequence: h_{kS} for every segment holding at least one of
// its `page_hashes.size()` whole pages, k = 0, 1, ...; `root` is h_0 and `page_hashes` are
// h_1 .. h_n (radix::PrefixHashes). REQUIRES: segment_pages >= 1.
std::vector<radix::PrefixHash> SegmentStarts(const radix::PrefixHash& root,
                                             const std::vector<radix::PrefixHash>& page_hashes,
                                             uint32_t segment_pages);

}  // namespace strata::store::cluster
