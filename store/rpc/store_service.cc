#include "strata/store/rpc/store_service.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/report_convert.h"
#include "strata/store/rpc/call_status.h"
#include "strata/store/rpc/reply_convert.h"
#include "strata/store/rpc/request_convert.h"

#ifndef STRATA_VERSION
#error "STRATA_VERSION must be defined by the build (store/rpc/CMakeLists.txt)"
#endif

namespace strata::store::rpc {
namespace {

const core::Clock* ClockOf(const core::NodeEngine& engine) {
  return engine.options().clock != nullptr ? engine.options().clock : core::RealClock::Default();
}

// The handlers' bodies: absl::Status in, so STRATA_* macros apply.

absl::Status DoMatch(core::NodeEngine& engine, const core::AccessScope& access,
                     const v1::MatchRequest& request, v1::MatchResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const radix::Namespace ns, proto::NamespaceFromProto(request.ns(), "ns"));
  STRATA_ASSIGN_OR_RETURN(const proto::TokenView tokens,
                          proto::TokensFromProto(request.tokens(), "tokens"));
  STRATA_ASSIGN_OR_RETURN(const report::LookupPhase phase,
                          proto::PhaseFromProto(request.phase(), "phase"));
  std::optional<core::SegmentStart> start;
  if (request.has_segment_start()) {
    STRATA_ASSIGN_OR_RETURN(start, SegmentStartFromProto(request.segment_start(), "segment_start"));
  }
  STRATA_ASSIGN_OR_RETURN(const report::MatchResult reply,
                          engine.Match(ns, tokens.span(), phase, access, start));
  proto::MatchToProto(reply, response);
  return absl::OkStatus();
}

absl::Status DoMatchSegments(core::NodeEngine& engine, const core::AccessScope& access,
                             const v1::MatchSegmentsRequest& request,
                             v1::MatchSegmentsResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const radix::Namespace ns, proto::NamespaceFromProto(request.ns(), "ns"));
  STRATA_ASSIGN_OR_RETURN(const report::LookupPhase phase,
                          proto::PhaseFromProto(request.phase(), "phase"));
  if (request.queries().empty()) return absl::InvalidArgumentError("queries: missing");
  STRATA_RETURN_IF_ERROR(proto::CheckCount("queries", static_cast<size_t>(request.queries_size()),
                                           proto::kMaxSegmentQueries));
  // Every query is checked before any is answered: one malformed query fails the call.
  struct Query {
    proto::TokenView tokens;
    std::optional<core::SegmentStart> start;
  };
  std::vector<Query> queries;
  queries.reserve(request.queries_size());
  size_t tokens = 0;
  for (int i = 0; i < request.queries_size(); ++i) {
    const v1::SegmentQuery& q = request.queries(i);
    const std::string field = absl::StrCat("queries[", i, "]");
    STRATA_ASSIGN_OR_RETURN(proto::TokenView view,
                            proto::TokensFromProto(q.tokens(), field + ".tokens"));
    tokens += view.span().size();
    std::optional<core::SegmentStart> start;
    if (q.has_segment_start()) {
      STRATA_ASSIGN_OR_RETURN(start,
                              SegmentStartFromProto(q.segment_start(), field + ".segment_start"));
    }
    queries.push_back({std::move(view), start});
  }
  STRATA_RETURN_IF_ERROR(proto::CheckCount("queries' tokens", tokens, proto::kMaxTokensPerRequest));
  const uint32_t page_tokens = ns.layout().page_tokens;
  for (const Query& q : queries) {
    STRATA_ASSIGN_OR_RETURN(const report::MatchResult reply,
                            engine.Match(ns, q.tokens.span(), phase, access, q.start));
    proto::MatchToProto(reply, response->add_answers());
    const size_t whole = q.tokens.span().size() / page_tokens;
    if (request.stop_at_first_short() && (reply.matched_pages < whole || reply.truncated)) break;
  }
  return absl::OkStatus();
}

absl::Status DoBeginPut(core::NodeEngine& engine, const core::AccessScope& access,
                        const core::Clock& clock, const std::string& data_plane,
                        const v1::BeginPutRequest& request, v1::BeginPutResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const BeginPutArgs args, PutRequestFromProto(request));
  if (request.text_only()) {
    STRATA_ASSIGN_OR_RETURN(const core::BeginPutReply reply,
                            engine.PutText(args.ns, args.put, access));
    response->set_exists(reply.exists);
    proto::ToProto(reply.key, response->mutable_key());
    response->set_indexed_pages(reply.indexed_pages);
    return absl::OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(const core::BeginPutReply reply,
                          engine.BeginPut(args.ns, args.put, access));
  BeginPutToProto(reply, clock.Now(), data_plane, response);
  return absl::OkStatus();
}

absl::Status DoRead(core::NodeEngine& engine, const core::AccessScope& access,
                    const core::Clock& clock, const std::string& data_plane,
                    const v1::ReadRequest& request, v1::ReadResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const ReadArgs args, ReadRequestFromProto(request));
  STRATA_ASSIGN_OR_RETURN(const core::ReadReply reply,
                          engine.Read(args.ns, args.ranges, args.ttl, access));
  ReadToProto(reply, args.ranges, args.ns.layout(), clock.Now(), data_plane, response);
  return absl::OkStatus();
}

absl::Status DoPrefetch(core::NodeEngine& engine, const core::AccessScope& access,
                        const v1::PrefetchRequest& request, v1::PrefetchResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const PrefetchArgs args, PrefetchRequestFromProto(request));
  STRATA_ASSIGN_OR_RETURN(const core::PrefetchReply reply,
                          engine.Prefetch(args.ns, args.tokens.span(), access));
  PrefetchToProto(reply, response);
  return absl::OkStatus();
}

absl::Status DoRequestRebuild(core::NodeEngine& engine, const core::AccessScope& access,
                              const v1::RequestRebuildRequest& request,
                              v1::RequestRebuildResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const RebuildRequestArgs args, RequestRebuildFromProto(request));
  STRATA_ASSIGN_OR_RETURN(const core::RebuildRequestReply reply,
                          engine.RequestRebuild(args.key, args.with_prefix, access));
  RebuildRequestToProto(reply, response);
  return absl::OkStatus();
}

// Bytes a task adds to the response: its encoding plus its tag and length prefix.
size_t EncodedTaskBytes(const v1::RebuildTask& task) { return task.ByteSizeLong() + 1 + 5; }

absl::Status DoPullRebuildTasks(core::NodeEngine& engine, const core::AccessScope& access,
                                const core::Clock& clock, absl::Time call_deadline,
                                const v1::PullRebuildTasksRequest& request,
                                v1::PullRebuildTasksResponse* response) {
  STRATA_ASSIGN_OR_RETURN(const PullRebuildTasksArgs args, PullRebuildTasksFromProto(request));
  // The caller's deadline bounds the wait too (an answer after it would be lost, and the
  // tasks in it would wait out their deadline before anyone else got them): the poll ends a
  // tenth of the time left (at least 20 ms) before it, so the empty answer arrives in time.
  const absl::Duration left = call_deadline - absl::Now();
  const absl::Duration margin = std::max(left / 10, absl::Milliseconds(20));
  absl::Duration wait = std::max(absl::ZeroDuration(), std::min(args.wait, left - margin));
  size_t bytes = 0;
  while (static_cast<uint32_t>(response->tasks_size()) < args.max_tasks &&
         bytes < proto::kPullResponseFillBytes) {
    absl::StatusOr<std::vector<core::RebuildTask>> tasks = engine.PullRebuildTasks(1, wait, access);
    // Tasks already taken are the caller's: answer with them rather than lose them.
    if (!tasks.ok() && response->tasks_size() == 0) return tasks.status();
    if (!tasks.ok() || tasks->empty()) break;
    wait = absl::ZeroDuration();  // only the first task is waited for
    for (const core::RebuildTask& task : *tasks) {
      if (task.sequence_tokens.size() > proto::kMaxRebuildSequenceTokens) {
        LOG(WARNING) << "Store.PullRebuildTasks: task " << task.task_id << " of blob "
                     << task.key.ToHex() << " has " << task.sequence_tokens.size()
                     << " sequence tokens, more than the wire carries ("
                     << proto::kMaxRebuildSequenceTokens << "); not sent";
        continue;
      }
      v1::RebuildTask* out = response->add_tasks();
      RebuildTaskToProto(task, clock.Now(), out);
      bytes += EncodedTaskBytes(*out);
    }
  }
  return absl::OkStatus();
}

}  // namespace

StoreService::StoreService(core::NodeEngine* engine, ServiceOptions options)
    : engine_(engine),
      clock_(ClockOf(*engine)),
      options_(std::move(options)),
      authorizer_(options_.tenants),
      started_(absl::Now()) {
  CHECK(engine_ != nullptr);
  CHECK(options_.tenants == nullptr || options_.credentials != nullptr)
      << "a node with tenants issues data-plane credentials";
}

absl::StatusOr<Authorizer::Caller> StoreService::Caller(const grpc::ServerContext& context,
                                                        std::string_view method) const {
  return authorizer_.Authorize(context, auth::Role::kWorker, method);
}

grpc::Status StoreService::Match(grpc::ServerContext* context, const v1::MatchRequest* request,
                                 v1::MatchResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Match");
  if (!caller.ok()) return CallStatus("Store", "Match", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus("Store", "Match", DoMatch(*engine_, access, *request, response));
}

grpc::Status StoreService::MatchSegments(grpc::ServerContext* context,
                                         const v1::MatchSegmentsRequest* request,
                                         v1::MatchSegmentsResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "MatchSegments");
  if (!caller.ok()) return CallStatus("Store", "MatchSegments", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus("Store", "MatchSegments",
                    DoMatchSegments(*engine_, access, *request, response));
}

grpc::Status StoreService::BeginPut(grpc::ServerContext* context,
                                    const v1::BeginPutRequest* request,
                                    v1::BeginPutResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "BeginPut");
  if (!caller.ok()) return CallStatus("Store", "BeginPut", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus(
      "Store", "BeginPut",
      DoBeginPut(*engine_, access, *clock_, options_.data_plane_address, *request, response));
}

grpc::Status StoreService::CommitPut(grpc::ServerContext* context,
                                     const v1::CommitPutRequest* request,
                                     v1::CommitPutResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "CommitPut");
  if (!caller.ok()) return CallStatus("Store", "CommitPut", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<uint64_t> put_id = IdFromProto(request->put_id(), "put_id");
  if (!put_id.ok()) return CallStatus("Store", "CommitPut", put_id.status());
  absl::StatusOr<core::CommitPutReply> reply = engine_->CommitPut(*put_id, access);
  if (!reply.ok()) return CallStatus("Store", "CommitPut", reply.status());
  CommitPutToProto(*reply, response);
  return grpc::Status::OK;
}

grpc::Status StoreService::AbortPut(grpc::ServerContext* context,
                                    const v1::AbortPutRequest* request, v1::AbortPutResponse*) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "AbortPut");
  if (!caller.ok()) return CallStatus("Store", "AbortPut", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<uint64_t> put_id = IdFromProto(request->put_id(), "put_id");
  if (!put_id.ok()) return CallStatus("Store", "AbortPut", put_id.status());
  return CallStatus("Store", "AbortPut", engine_->AbortPut(*put_id, access));
}

grpc::Status StoreService::Read(grpc::ServerContext* context, const v1::ReadRequest* request,
                                v1::ReadResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Read");
  if (!caller.ok()) return CallStatus("Store", "Read", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus(
      "Store", "Read",
      DoRead(*engine_, access, *clock_, options_.data_plane_address, *request, response));
}

grpc::Status StoreService::RenewLease(grpc::ServerContext* context,
                                      const v1::RenewLeaseRequest* request,
                                      v1::RenewLeaseResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "RenewLease");
  if (!caller.ok()) return CallStatus("Store", "RenewLease", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<uint64_t> lease_id = IdFromProto(request->lease_id(), "lease_id");
  if (!lease_id.ok()) return CallStatus("Store", "RenewLease", lease_id.status());
  absl::StatusOr<absl::Time> expiry =
      engine_->RenewLease(*lease_id, TtlFromProto(request->ttl_ms()), access);
  if (!expiry.ok()) return CallStatus("Store", "RenewLease", expiry.status());
  response->set_expires_in_ms(ExpiresInMs(*expiry, clock_->Now()));
  return grpc::Status::OK;
}

grpc::Status StoreService::Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                                   v1::ReleaseResponse*) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Release");
  if (!caller.ok()) return CallStatus("Store", "Release", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<uint64_t> lease_id = IdFromProto(request->lease_id(), "lease_id");
  if (!lease_id.ok()) return CallStatus("Store", "Release", lease_id.status());
  return CallStatus("Store", "Release", engine_->Release(*lease_id, access));
}

grpc::Status StoreService::Delete(grpc::ServerContext* context, const v1::DeleteRequest* request,
                                  v1::DeleteResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Delete");
  if (!caller.ok()) return CallStatus("Store", "Delete", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<radix::BlobKey> key = proto::BlobKeyFromProto(request->key(), "key");
  if (!key.ok()) return CallStatus("Store", "Delete", key.status());
  absl::StatusOr<core::DeleteReply> reply = engine_->Delete(*key, access);
  if (!reply.ok()) return CallStatus("Store", "Delete", reply.status());
  DeleteToProto(*reply, response);
  return grpc::Status::OK;
}

grpc::Status StoreService::Pin(grpc::ServerContext* context, const v1::PinRequest* request,
                               v1::PinResponse*) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Pin");
  if (!caller.ok()) return CallStatus("Store", "Pin", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<radix::BlobKey> key = proto::BlobKeyFromProto(request->key(), "key");
  if (!key.ok()) return CallStatus("Store", "Pin", key.status());
  return CallStatus("Store", "Pin", engine_->Pin(*key, access));
}

grpc::Status StoreService::Unpin(grpc::ServerContext* context, const v1::UnpinRequest* request,
                                 v1::UnpinResponse*) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Unpin");
  if (!caller.ok()) return CallStatus("Store", "Unpin", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<radix::BlobKey> key = proto::BlobKeyFromProto(request->key(), "key");
  if (!key.ok()) return CallStatus("Store", "Unpin", key.status());
  return CallStatus("Store", "Unpin", engine_->Unpin(*key, access));
}

grpc::Status StoreService::Stat(grpc::ServerContext* context, const v1::StatRequest* request,
                                v1::StatResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Stat");
  if (!caller.ok()) return CallStatus("Store", "Stat", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<radix::BlobKey> key = proto::BlobKeyFromProto(request->key(), "key");
  if (!key.ok()) return CallStatus("Store", "Stat", key.status());
  absl::StatusOr<core::BlobInfo> info = engine_->Stat(*key, request->include_tokens(), access);
  if (!info.ok()) return CallStatus("Store", "Stat", info.status());
  BlobInfoToProto(*info, response->mutable_blob());
  return grpc::Status::OK;
}

grpc::Status StoreService::List(grpc::ServerContext* context, const v1::ListRequest* request,
                                v1::ListResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "List");
  if (!caller.ok()) return CallStatus("Store", "List", caller.status());
  const core::AccessScope& access = *caller->scope;
  absl::StatusOr<core::ListRequest> list = ListRequestFromProto(*request);
  if (!list.ok()) return CallStatus("Store", "List", list.status());
  absl::StatusOr<core::ListReply> reply = engine_->List(*list, access);
  if (!reply.ok()) return CallStatus("Store", "List", reply.status());
  ListToProto(*reply, response);
  return grpc::Status::OK;
}

grpc::Status StoreService::Health(grpc::ServerContext* context, const v1::HealthRequest*,
                                  v1::HealthResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Health");
  if (!caller.ok()) return CallStatus("Store", "Health", caller.status());
  response->set_state(engine_->draining() ? v1::SERVING_STATE_DRAINING : v1::SERVING_STATE_SERVING);
  response->set_version(options_.version.empty() ? STRATA_VERSION : options_.version);
  response->mutable_data_plane()->set_ucx_address(options_.data_plane_address);
  response->mutable_data_plane()->set_same_host_socket(options_.same_host_socket);
  response->set_uptime_ms(static_cast<uint64_t>(absl::ToInt64Milliseconds(absl::Now() - started_)));
  return grpc::Status::OK;
}

grpc::Status StoreService::OpenDataPlane(grpc::ServerContext* context,
                                         const v1::OpenDataPlaneRequest*,
                                         v1::OpenDataPlaneResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "OpenDataPlane");
  if (!caller.ok()) return CallStatus("Store", "OpenDataPlane", caller.status());
  response->mutable_data_plane()->set_ucx_address(options_.data_plane_address);
  response->mutable_data_plane()->set_same_host_socket(options_.same_host_socket);
  if (caller->tenant != nullptr) {
    response->set_credential(options_.credentials->Issue(caller->tenant->name, absl::Now()));
    response->set_expires_in_ms(
        static_cast<uint64_t>(absl::ToInt64Milliseconds(options_.credentials->ttl())));
  }
  return grpc::Status::OK;
}

grpc::Status StoreService::Prefetch(grpc::ServerContext* context,
                                    const v1::PrefetchRequest* request,
                                    v1::PrefetchResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "Prefetch");
  if (!caller.ok()) return CallStatus("Store", "Prefetch", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus("Store", "Prefetch", DoPrefetch(*engine_, access, *request, response));
}

grpc::Status StoreService::RequestRebuild(grpc::ServerContext* context,
                                          const v1::RequestRebuildRequest* request,
                                          v1::RequestRebuildResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "RequestRebuild");
  if (!caller.ok()) return CallStatus("Store", "RequestRebuild", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus("Store", "RequestRebuild",
                    DoRequestRebuild(*engine_, access, *request, response));
}

grpc::Status StoreService::PullRebuildTasks(grpc::ServerContext* context,
                                            const v1::PullRebuildTasksRequest* request,
                                            v1::PullRebuildTasksResponse* response) {
  const InFlightCalls::Scope in_flight(&in_flight_);
  const absl::StatusOr<Authorizer::Caller> caller = Caller(*context, "PullRebuildTasks");
  if (!caller.ok()) return CallStatus("Store", "PullRebuildTasks", caller.status());
  const core::AccessScope& access = *caller->scope;
  return CallStatus("Store", "PullRebuildTasks",
                    DoPullRebuildTasks(*engine_, access, *clock_,
                                       absl::FromChrono(context->deadline()), *request, response));
}

}  // namespace strata::store::rpc
