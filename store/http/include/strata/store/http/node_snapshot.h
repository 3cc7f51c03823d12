// NodeSnapshot: everything the node's HTTP endpoint reports, gathered in one place.
//
// A plain value made of the plain stats structs each module owns: the engine's tiers and
// lookups (store/core's NodeTiers, with the live miss-ratio curve), the data plane's
// counters and transfer latencies (core::DataPlaneStats, filled by store/dataplane) and the control
// plane's per-method calls and latencies (core::RpcMetricsSnapshot, filled by store/rpc).
// store/node fills one per request; FormatMetrics (metrics_format.h) and FormatTiersJson
// (tiers_json.h) only read it. No locks, no errors.
#pragma once

#include <cstdint>

#include "strata/store/core/data_plane_stats.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/rpc_stats.h"

namespace strata::store::http {

// A cluster node's part (issue 13): its registration, its own view of the members (kept when
// it replicates hot blobs or repairs token text), and what those pushed to other nodes. All
// zero for a node in no cluster.
struct ClusterSnapshot {
  bool registered = false;  // its registration holds a lease in etcd now
  uint64_t serving = 0;     // members in the node's own view, by state
  uint64_t joining = 0;
  uint64_t draining = 0;
  uint64_t hot_blobs = 0;               // hot blobs replicated (HotReplicatorStats)
  uint64_t hot_pushed_blobs = 0;        // blobs written to other nodes for them
  uint64_t hot_bytes = 0;               // KV bytes sent for them
  uint64_t hot_failures = 0;            // pushes that failed
  uint64_t text_repairs = 0;            // membership changes acted on (TextRepairStats)
  uint64_t text_repaired_segments = 0;  // segments whose text was copied to a new holder
  uint64_t text_repair_puts = 0;        // TEXT puts sent for them
  uint64_t text_repair_failures = 0;    // segment copies that failed
};

struct NodeSnapshot {
  report::NodeTiers tiers;
  core::DataPlaneStats data_plane;  // all zero for a node without a data plane
  core::SameHostStats same_host;    // all zero without a same-host channel
  core::RpcMetricsSnapshot rpc;
  ClusterSnapshot cluster;
};

}  // namespace strata::store::http
