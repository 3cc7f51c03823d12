// NodeSnapshot: everything the node's HTTP endpoint reports, gathered in one place.
//
// A plain value made of the plain stats structs each module owns: the engine's tiers and
// lookups (store/core's NodeTiers, with the live miss-ratio curve), the data plane's
// counters and transfer latencies (core::DataPlaneStats, filled by store/dataplane) and the control
// plane's per-method calls and latencies (core::RpcMetricsSnapshot, filled by store/rpc).
// store/node fills one per request; FormatMetrics (metrics_format.h) and FormatTiersJson
// (tiers_json.h) only read it. No locks, no errors.
#pragma once

#include "strata/store/core/data_plane_stats.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/rpc_stats.h"

namespace strata::store::http {

struct NodeSnapshot {
  report::NodeTiers tiers;
  core::DataPlaneStats data_plane;  // all zero for a node without a data plane
  core::RpcMetricsSnapshot rpc;
};

}  // namespace strata::store::http
