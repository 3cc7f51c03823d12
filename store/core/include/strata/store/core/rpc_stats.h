// RpcMetricsSnapshot: what the node's control plane (store/rpc) reports about its calls.
//
// Plain values, defined here so that whoever shows them (store/http's /metrics) depends on
// store/core only and not on the gRPC adapter (docs/architecture.md, "Dependency rules").
// store/rpc's RpcMetrics::Snapshot() fills them. No locks, no errors.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/base/latency_histogram.h"

namespace strata::store::core {

// gRPC's status codes are 0 (OK) .. 16 (UNAUTHENTICATED), as absl::StatusCode's.
inline constexpr int kGrpcStatusCodes = 17;

struct RpcMethodStats {
  std::string method;  // "strata.v1.Store/Match"
  // Finished calls by status code (index = grpc::StatusCode).
  std::array<uint64_t, kGrpcStatusCodes> calls_by_code{};
  base::HistogramSnapshot latency;  // every finished call, whatever its code

  uint64_t calls() const {
    uint64_t total = 0;
    for (uint64_t n : calls_by_code) total += n;
    return total;
  }
};

struct RpcMetricsSnapshot {
  std::vector<RpcMethodStats> methods;  // sorted by method name
};

}  // namespace strata::store::core
