// RpcMetrics: per-method call counts (by status code) and latency of a gRPC server.
//
// What: a gRPC server interceptor (MakeInterceptorFactory, installed with
// grpc::ServerBuilder::experimental().SetInterceptorCreators) times every call from the
// moment gRPC hands it to the server (the interceptor is created as the call starts) until
// its status is about to be sent, and counts it under its method and status code. A call
// that ends without a status (the server shut down under it) is counted CANCELLED.
// Snapshot() returns plain values; only store/http turns them into Prometheus text.
//
// Methods are named as gRPC names them, without the leading '/': "strata.v1.Store/Match".
// An entry exists for a method once it has been called (unimplemented methods included).
//
// Thread safety: Record, Snapshot and the interceptors may run on any thread at once. The
// method table is behind a mutex taken once per call (a reader lock unless the method is
// new); each method's counts are relaxed atomics (a Snapshot is not one atomic cut).
// Ownership: the factory and its interceptors borrow this object. REQUIRES: the RpcMetrics
// outlives the grpc::Server the factory was given to. No errors.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/base/latency_histogram.h"
#include "strata/store/core/rpc_stats.h"

namespace grpc::experimental {
class ServerInterceptorFactoryInterface;
}  // namespace grpc::experimental

namespace strata::store::rpc {

// What Snapshot() reports: plain values of store/core (so that store/http needs only core).
using core::kGrpcStatusCodes;
using core::RpcMethodStats;
using core::RpcMetricsSnapshot;

class RpcMetrics {
 public:
  RpcMetrics() = default;
  RpcMetrics(const RpcMetrics&) = delete;
  RpcMetrics& operator=(const RpcMetrics&) = delete;

  // Counts one finished call of `method` with status `code` (clamped to UNKNOWN when
  // outside 0..16) that took `latency`.
  void Record(std::string_view method, int code, absl::Duration latency) ABSL_LOCKS_EXCLUDED(mu_);

  RpcMetricsSnapshot Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);

  // A factory whose interceptors Record every call of the server. Borrows *this.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeInterceptorFactory();

  // The counts of one method; the interceptor looks it up once per call.
  struct Method {
    std::array<std::atomic<uint64_t>, kGrpcStatusCodes> calls_by_code{};
    base::LatencyHistogram latency;
    void Record(int code, absl::Duration latency);
  };
  // The entry of `method`, created on first use; valid as long as *this.
  Method* FindOrAdd(std::string_view method) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  // node_hash_map: entries never move, so a Method* stays valid.
  absl::node_hash_map<std::string, Method> methods_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::store::rpc
