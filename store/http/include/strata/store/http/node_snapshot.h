// NodeSnapshot: everything the node's HTTP endpoint reports, gathered in one place.
//
// A plain value made of the plain stats structs each module owns: the engine's tiers and
// lookups (store/core's NodeTiers, with the live miss-ratio curve), the data plane's
// counters and transfer latencies (store/dataplane's DataPlaneStats) and the control plane's
// per-method calls and latencies (store/rpc's RpcMetricsSnapshot). store/node fills one per
// request; FormatMetrics (metrics_format.h) and FormatTiersJson (tiers_json.h) only read it.
// No locks, no errors.
#pragma once

#include "strata/store/core/node_engine_types.h"
#include "strata/store/dataplane/data_plane_server.h"
#include "strata/store/rpc/rpc_metrics.h"

namespace strata::store::http {

struct NodeSnapshot {
  core::NodeTiers tiers;
  dataplane::DataPlaneStats data_plane;  // all zero for a node without a data plane
  rpc::RpcMetricsSnapshot rpc;
};

}  // namespace strata::store::http
