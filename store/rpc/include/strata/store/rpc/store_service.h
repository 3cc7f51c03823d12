// StoreService: the strata.v1.Store gRPC service (store/proto/strata/v1/store.proto) over
// a core::NodeEngine.
//
// Thin: each handler converts the request (request_convert.h, store/proto's conversions),
// refuses what is over a wire limit (strata/proto/limits.h) before any work, calls the
// engine, converts the reply (reply_convert.h) and answers with
// proto::ToGrpcStatus(the engine's status), code and message unchanged. What each call
// returns for each failure: docs/api.md and the engine's header contract
// (store/core/node_engine.h). This class adds no failure of its own beyond the
// INVALID_ARGUMENT of request_convert.h and, on a node with tenants, UNAUTHENTICATED for a
// call without a tenant's token (authorizer.h), checked before anything else.
//
// PullRebuildTasks is a long poll: it waits up to min(wait_ms, the time left before the
// call's deadline less a tenth of it, at least 20 ms, so that an empty answer arrives before
// the deadline) for the first task (as Admin.Drain bounds its wait), then takes more
// without waiting, one at a time, until it holds max_tasks or its tasks' encoded size
// reaches kPullResponseFillBytes (so the answer stays under kMaxMessageBytes). A task whose
// sequence is longer than kMaxRebuildSequenceTokens is not sent (logged; it expires and is
// queued again, then dropped by the engine). It blocks one of gRPC's threads meanwhile.
//
// Synchronous gRPC API: gRPC calls the handlers on its own thread pool, concurrently.
// Thread safety: every handler is thread-safe (the engine is; the service's own state is
// set at construction and never changes).
// Ownership: the engine is borrowed. REQUIRES: the engine outlives the service, and the
// service outlives the grpc::Server it is registered with (shut the server down first).
#pragma once

#include <string>

#include "absl/time/time.h"

#include "strata/proto/protocol_internal.h"
#include "strata/store/auth/data_plane_credential.h"
#include "strata/store/auth/tenant_table.h"
#include "strata/store/core/clock.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/rpc/authorizer.h"
#include "strata/store/rpc/in_flight_calls.h"

namespace strata::store::rpc {

struct ServiceOptions {
  // The data plane's "host:port", reported in BeginPut, Read and Health answers.
  std::string data_plane_address;
  // The same-host channel's socket (same_host_server.h), reported in Health and
  // OpenDataPlane answers; empty: none.
  std::string same_host_socket;
  // Reported by Health; empty: this build's version (the CMake project version).
  std::string version;
  // Null: an open node (authorizer.h). Else every call needs a tenant's token, and
  // OpenDataPlane issues credentials from `credentials` (REQUIRED then).
  std::shared_ptr<const auth::TenantTable> tenants;
  std::shared_ptr<const auth::DataPlaneCredentials> credentials;
};

class StoreService final : public v1::Store::Service {
 public:
  // REQUIRES: engine != nullptr.
  StoreService(core::NodeEngine* engine, ServiceOptions options);

  grpc::Status Match(grpc::ServerContext* context, const v1::MatchRequest* request,
                     v1::MatchResponse* response) override;
  grpc::Status MatchSegments(grpc::ServerContext* context, const v1::MatchSegmentsRequest* request,
                             v1::MatchSegmentsResponse* response) override;
  grpc::Status BeginPut(grpc::ServerContext* context, const v1::BeginPutRequest* request,
                        v1::BeginPutResponse* response) override;
  grpc::Status CommitPut(grpc::ServerContext* context, const v1::CommitPutRequest* request,
                         v1::CommitPutResponse* response) override;
  grpc::Status AbortPut(grpc::ServerContext* context, const v1::AbortPutRequest* request,
                        v1::AbortPutResponse* response) override;
  grpc::Status Read(grpc::ServerContext* context, const v1::ReadRequest* request,
                    v1::ReadResponse* response) override;
  grpc::Status RenewLease(grpc::ServerContext* context, const v1::RenewLeaseRequest* request,
                          v1::RenewLeaseResponse* response) override;
  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::ReleaseResponse* response) override;
  grpc::Status Delete(grpc::ServerContext* context, const v1::DeleteRequest* request,
                      v1::DeleteResponse* response) override;
  grpc::Status Pin(grpc::ServerContext* context, const v1::PinRequest* request,
                   v1::PinResponse* response) override;
  grpc::Status Unpin(grpc::ServerContext* context, const v1::UnpinRequest* request,
                     v1::UnpinResponse* response) override;
  grpc::Status Stat(grpc::ServerContext* context, const v1::StatRequest* request,
                    v1::StatResponse* response) override;
  grpc::Status List(grpc::ServerContext* context, const v1::ListRequest* request,
                    v1::ListResponse* response) override;
  // SERVING, or DRAINING once the engine drains; never fails.
  grpc::Status Health(grpc::ServerContext* context, const v1::HealthRequest* request,
                      v1::HealthResponse* response) override;
  // The data plane's address and a credential for the calling tenant (none on an open node).
  grpc::Status OpenDataPlane(grpc::ServerContext* context, const v1::OpenDataPlaneRequest* request,
                             v1::OpenDataPlaneResponse* response) override;
  grpc::Status Prefetch(grpc::ServerContext* context, const v1::PrefetchRequest* request,
                        v1::PrefetchResponse* response) override;
  grpc::Status RequestRebuild(grpc::ServerContext* context,
                              const v1::RequestRebuildRequest* request,
                              v1::RequestRebuildResponse* response) override;
  grpc::Status PullRebuildTasks(grpc::ServerContext* context,
                                const v1::PullRebuildTasksRequest* request,
                                v1::PullRebuildTasksResponse* response) override;

  // Handlers running right now.
  int64_t in_flight() const { return in_flight_.count(); }

 private:
  // The calling tenant (null on an open node), or UNAUTHENTICATED (authorizer.h).
  absl::StatusOr<Authorizer::Caller> Caller(const grpc::ServerContext& context,
                                            std::string_view method) const;

  core::NodeEngine* const engine_;
  InFlightCalls in_flight_;
  // The engine's clock: expiries it hands out are instants of it.
  const core::Clock* const clock_;
  const ServiceOptions options_;
  const Authorizer authorizer_;
  const absl::Time started_;
};

}  // namespace strata::store::rpc
