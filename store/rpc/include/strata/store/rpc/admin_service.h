// AdminService: the strata.v1.Admin gRPC service (store/proto/strata/v1/admin.proto) over
// a core::NodeEngine: Tiers, Evict, Drain.
//
// Thin, like StoreService: converts, calls the engine, converts the reply, maps the
// status with proto::ToGrpcStatus. On a node with tenants every call first needs an admin
// tenant's token: UNAUTHENTICATED without a tenant's, PERMISSION_DENIED with a worker's
// (authorizer.h). Failures (docs/api.md):
//   Tiers  never fails.
//   Evict  INVALID_ARGUMENT tier unspecified or unknown (reply_convert.h:
//          proto::TierFromProto; TIER_TEXT is a tier here: it deletes TEXT records); the
//          engine's INVALID_ARGUMENT for a tier the node lacks (HBM; SSD without one).
//   Drain  DEADLINE_EXCEEDED puts or leases still in flight when the wait ends. The wait is
//          min(timeout_ms, the time left before the call's own deadline); draining stays
//          on either way.
//
// Synchronous gRPC API; Drain blocks one of gRPC's threads for at most its wait.
// Thread safety: every handler is thread-safe. Ownership: the engine is borrowed.
// REQUIRES: the engine outlives the service, and the service outlives its grpc::Server.
#pragma once

#include <functional>

#include "strata/proto/protocol_internal.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/rpc/authorizer.h"
#include "strata/store/rpc/in_flight_calls.h"
#include "strata/store/rpc/rpc_server.h"

namespace strata::store::rpc {

class AdminService final : public v1::Admin::Service {
 public:
  // REQUIRES: engine != nullptr. `tenants` null: an open node.
  AdminService(core::NodeEngine* engine, std::shared_ptr<const auth::TenantTable> tenants);

  grpc::Status Tiers(grpc::ServerContext* context, const v1::TiersRequest* request,
                     v1::TiersResponse* response) override;
  grpc::Status Evict(grpc::ServerContext* context, const v1::EvictRequest* request,
                     v1::EvictResponse* response) override;
  grpc::Status Drain(grpc::ServerContext* context, const v1::DrainRequest* request,
                     v1::DrainResponse* response) override;
  grpc::Status Leave(grpc::ServerContext* context, const v1::LeaveRequest* request,
                     v1::LeaveResponse* response) override;

  // What Leave does (the node's: its registration and the hand-over), given the wait; set
  // before the server starts. Unset: Leave answers FAILED_PRECONDITION (no cluster).
  using LeaveHook =
      std::function<absl::StatusOr<LeaveReport>(absl::Duration wait, uint64_t hand_over_bytes)>;
  void set_leave(LeaveHook leave) { leave_ = std::move(leave); }

  // Handlers running right now.
  int64_t in_flight() const { return in_flight_.count(); }

 private:
  // The wait a Drain or Leave asked for, cut to the call's deadline.
  static absl::Duration Wait(const grpc::ServerContext& context, uint32_t timeout_ms);

  core::NodeEngine* const engine_;
  const Authorizer authorizer_;
  InFlightCalls in_flight_;
  LeaveHook leave_;
};

}  // namespace strata::store::rpc
