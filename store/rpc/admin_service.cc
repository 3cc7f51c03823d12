#include "strata/store/rpc/admin_service.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"

#include "strata/proto/report_convert.h"
#include "strata/store/rpc/call_status.h"
#include "strata/store/rpc/reply_convert.h"

namespace strata::store::rpc {

AdminService::AdminService(core::NodeEngine* engine,
                           std::shared_ptr<const auth::TenantTable> tenants)
    : engine_(engine), authorizer_(std::move(tenants)) {
  CHECK(engine_ != nullptr);
}

grpc::Status AdminService::Tiers(grpc::ServerContext* context, const v1::TiersRequest*,
                                 v1::TiersResponse* response) {
  const InFlightCalls::Scope scope(&in_flight_);
  if (absl::StatusOr<Authorizer::Caller> caller =
          authorizer_.Authorize(*context, auth::Role::kAdmin, "Admin.Tiers");
      !caller.ok()) {
    return CallStatus("Admin", "Tiers", caller.status());
  }
  proto::ToProto(engine_->Tiers(), response);
  return grpc::Status::OK;
}

grpc::Status AdminService::Evict(grpc::ServerContext* context, const v1::EvictRequest* request,
                                 v1::EvictResponse* response) {
  const InFlightCalls::Scope scope(&in_flight_);
  if (absl::StatusOr<Authorizer::Caller> caller =
          authorizer_.Authorize(*context, auth::Role::kAdmin, "Admin.Evict");
      !caller.ok()) {
    return CallStatus("Admin", "Evict", caller.status());
  }
  absl::StatusOr<report::Tier> tier = proto::TierFromProto(request->tier(), "tier");
  if (!tier.ok()) return CallStatus("Admin", "Evict", tier.status());
  absl::StatusOr<core::EvictReply> reply = engine_->Evict(*tier, request->bytes());
  if (!reply.ok()) return CallStatus("Admin", "Evict", reply.status());
  EvictToProto(*reply, response);
  return grpc::Status::OK;
}

grpc::Status AdminService::Drain(grpc::ServerContext* context, const v1::DrainRequest* request,
                                 v1::DrainResponse*) {
  const InFlightCalls::Scope scope(&in_flight_);
  if (absl::StatusOr<Authorizer::Caller> caller =
          authorizer_.Authorize(*context, auth::Role::kAdmin, "Admin.Drain");
      !caller.ok()) {
    return CallStatus("Admin", "Drain", caller.status());
  }
  const absl::Duration wait = Wait(*context, request->timeout_ms());
  LOG(INFO) << "Admin.Drain: draining; waiting up to " << wait << " for pending puts and leases";
  return CallStatus("Admin", "Drain", engine_->Drain(wait));
}

grpc::Status AdminService::Leave(grpc::ServerContext* context, const v1::LeaveRequest* request,
                                 v1::LeaveResponse* response) {
  const InFlightCalls::Scope scope(&in_flight_);
  if (absl::StatusOr<Authorizer::Caller> caller =
          authorizer_.Authorize(*context, auth::Role::kAdmin, "Admin.Leave");
      !caller.ok()) {
    return CallStatus("Admin", "Leave", caller.status());
  }
  if (!leave_) {
    return CallStatus("Admin", "Leave",
                      absl::FailedPreconditionError(
                          "this node is in no cluster (started without etcd_endpoints)"));
  }
  const absl::Duration wait = Wait(*context, request->timeout_ms());
  LOG(INFO) << "Admin.Leave: leaving the cluster; handing over up to " << request->hand_over_bytes()
            << " bytes";
  const absl::StatusOr<LeaveReport> left = leave_(wait, request->hand_over_bytes());
  if (!left.ok()) return CallStatus("Admin", "Leave", left.status());
  response->set_segments(left->segments);
  response->set_blobs(left->blobs);
  response->set_bytes(left->bytes);
  response->set_blobs_existing(left->blobs_existing);
  response->set_cold_segments(left->cold_segments);
  response->set_over_budget_segments(left->over_budget_segments);
  response->set_text_blobs(left->text_blobs);
  response->set_failures(left->failures);
  response->set_held_bytes(left->held_bytes);
  return grpc::Status::OK;
}

absl::Duration AdminService::Wait(const grpc::ServerContext& context, uint32_t timeout_ms) {
  // The caller's deadline bounds the wait too (an answer after it would be lost).
  const absl::Duration left = absl::FromChrono(context.deadline()) - absl::Now();
  return std::max(absl::ZeroDuration(), std::min(absl::Milliseconds(timeout_ms), left));
}

}  // namespace strata::store::rpc
