// The cluster's capacity plan (`strata capacity --cluster`): the nodes' live miss-ratio
// curves combined into the cluster's, and what adding or removing nodes would do.
//
// Model. Placement spreads segments over the nodes by capacity-weighted rendezvous hashing,
// so node i holds a share w_i / sum(w) of the key space and sees its own stream of accesses
// a_i (its curve mrc_i). Spread over the nodes in the same shares, a total capacity X gives
// node i X * w_i / sum(w), and the cluster's expected hit rate is the access-weighted mean
//     H(X) = sum_i a_i * mrc_i(X * w_i / sum(w)) / sum_i a_i,
// each curve taken at its last value from its working set on (an LRU cache holding every
// key seen hits every reuse; a node's points may jump from inside its working set to far
// past it).
// Nodes added or removed are taken as average nodes (capacity C / N, the same weight), which
// moves the total to n * C / N and leaves each node's share of the stream as its share of
// the capacity. The rows go from one node to twice today's count (at least 8); the
// recommendation is the fewest nodes within one percentage point of the best row.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/cli/json_output.h"
#include "strata/types.h"

namespace strata::cli {

struct ClusterNodeCurve {
  std::string id;
  MissRatioCurve mrc;           // the node's whole curve (Admin.Tiers)
  uint64_t capacity_bytes = 0;  // its byte tiers (DRAM + SSD): what the curve's axis counts
};

struct ClusterPlanRow {
  uint32_t nodes = 0;
  uint64_t capacity_bytes = 0;  // the cluster's total
  double expected_hit_ratio = 0;
};

struct ClusterPlan {
  std::vector<ClusterPlanRow> rows;  // ascending node count
  uint32_t current_nodes = 0;
  uint64_t current_capacity_bytes = 0;
  double current_hit_ratio = 0;
  uint32_t recommended_nodes = 0;
  uint64_t accesses = 0;  // over every node's curve
  std::string advice;     // one plain sentence
};

// FAILED_PRECONDITION-worthy input (no node, or no access on any curve) yields a plan with
// no rows and an advice saying so.
ClusterPlan PlanCluster(const std::vector<ClusterNodeCurve>& nodes);

//   cluster: 3 node(s), 768 MiB, expected hit rate 61.0% (120000 accesses on 3 curves)
//     NODES  CAPACITY  EXPECTED HIT%
//         1  256 MiB           30.0%
//         3  768 MiB           61.0%  <- current
//         5  1.25 GiB          74.0%  <- recommended
//   advice: ...
std::string RenderClusterPlan(const ClusterPlan& plan);
Json ClusterPlanJson(const ClusterPlan& plan);

}  // namespace strata::cli
