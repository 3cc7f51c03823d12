#include "client/lib/client_core.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "client/lib/wire_types.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/report_convert.h"

namespace strata::client_internal {
namespace {

absl::Status CheckKey(const BlobKey& key) {
  if (key == BlobKey{}) return absl::InvalidArgumentError("key: missing (all zero)");
  return absl::OkStatus();
}

}  // namespace

ClientCore::ClientCore(ClientOptions options, const ChannelTls& tls)
    : options_(std::move(options)),
      control_(options_, tls),
      executor_(std::make_unique<AsyncExecutor>(options_.async_threads)) {}

ClientCore::~ClientCore() { executor_.reset(); }

absl::Time ClientCore::Deadline(const CallOptions& call) const {
  if (call.deadline == absl::InfiniteFuture()) return absl::Now() + options_.default_timeout;
  return call.deadline;
}

absl::StatusOr<DataPlane*> ClientCore::data_plane() {
  absl::MutexLock lock(&mu_);
  if (data_plane_ == nullptr) {
    DataPlaneOptions options;
    options.transports = options_.ucx_transports;
    options.connect_timeout = options_.connect_timeout;
    auto plane = DataPlane::Create(std::move(options));
    if (!plane.ok()) return plane.status();
    data_plane_ = std::move(plane).value();
  }
  return data_plane_.get();
}

std::shared_ptr<const DataPlane::MemoryRegion> ClientCore::RegionFor(const void* p, size_t n) {
  absl::MutexLock lock(&mu_);
  if (registry_.size() == 0) return nullptr;
  return registry_.Find(p, n).value_or(nullptr);
}

absl::StatusOr<MatchResult> ClientCore::Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                              LookupPhase phase, absl::Time deadline,
                                              const SegmentStart* start) {
  STRATA_RETURN_IF_ERROR(proto::CheckCount("tokens", tokens.size(), proto::kMaxTokensPerRequest));
  if (start != nullptr && start->pages == 0) {
    return absl::InvalidArgumentError("start.pages: 0 (page 0 starts no segment)");
  }
  STRATA_ASSIGN_OR_RETURN(const v1::Phase wire_phase, proto::PhaseToProto(phase));
  v1::MatchRequest request;
  proto::ToProto(ns, request.mutable_ns());
  proto::TokensToProto(tokens, request.mutable_tokens());
  request.set_phase(wire_phase);
  if (start != nullptr) {
    SegmentStartToProto(*start, request.mutable_segment_start());
  }
  v1::MatchResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::Match, request,
                                       &response, deadline, Retry::kUnavailable));
  return MatchResultFromProto(response);
}

absl::StatusOr<std::vector<MatchResult>> ClientCore::MatchSegments(
    const Namespace& ns, absl::Span<const SegmentQuery> queries, LookupPhase phase,
    bool stop_at_first_short, absl::Time deadline) {
  if (queries.empty()) return absl::InvalidArgumentError("queries: none");
  STRATA_RETURN_IF_ERROR(proto::CheckCount("queries", queries.size(), proto::kMaxSegmentQueries));
  STRATA_ASSIGN_OR_RETURN(const v1::Phase wire_phase, proto::PhaseToProto(phase));
  v1::MatchSegmentsRequest request;
  proto::ToProto(ns, request.mutable_ns());
  request.set_phase(wire_phase);
  request.set_stop_at_first_short(stop_at_first_short);
  size_t tokens = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    const SegmentQuery& q = queries[i];
    if (q.start.has_value() && q.start->pages == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("queries[", i, "].start.pages: 0 (page 0 starts no segment)"));
    }
    tokens += q.tokens.size();
    v1::SegmentQuery* out = request.add_queries();
    if (q.start.has_value()) {
      SegmentStartToProto(*q.start, out->mutable_segment_start());
    }
    proto::TokensToProto(q.tokens, out->mutable_tokens());
  }
  STRATA_RETURN_IF_ERROR(proto::CheckCount("tokens", tokens, proto::kMaxTokensPerRequest));
  v1::MatchSegmentsResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::MatchSegments, request,
                                       &response, deadline, Retry::kUnavailable));
  if (static_cast<size_t>(response.answers_size()) > queries.size()) {
    return absl::InternalError(absl::StrCat("MatchSegments: ", response.answers_size(),
                                            " answers to ", queries.size(), " queries"));
  }
  std::vector<MatchResult> answers;
  answers.reserve(response.answers_size());
  for (const v1::MatchResponse& answer : response.answers()) {
    STRATA_ASSIGN_OR_RETURN(MatchResult result, MatchResultFromProto(answer));
    answers.push_back(std::move(result));
  }
  return answers;
}

absl::StatusOr<DeleteResult> ClientCore::Delete(const BlobKey& key, absl::Time deadline) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  v1::DeleteRequest request;
  proto::ToProto(key, request.mutable_key());
  v1::DeleteResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::Delete, request,
                                       &response, deadline, Retry::kNever));
  return DeleteResult{response.pages_removed(), response.blobs_unlinked()};
}

absl::Status ClientCore::Pin(const BlobKey& key, bool pin, absl::Time deadline) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  if (pin) {
    v1::PinRequest request;
    proto::ToProto(key, request.mutable_key());
    v1::PinResponse response;
    return control_.Call(control_.store(), &v1::Store::Stub::Pin, request, &response, deadline,
                         Retry::kUnavailable);
  }
  v1::UnpinRequest request;
  proto::ToProto(key, request.mutable_key());
  v1::UnpinResponse response;
  return control_.Call(control_.store(), &v1::Store::Stub::Unpin, request, &response, deadline,
                       Retry::kUnavailable);
}

absl::StatusOr<BlobInfo> ClientCore::Stat(const BlobKey& key, bool include_tokens,
                                          absl::Time deadline) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  v1::StatRequest request;
  proto::ToProto(key, request.mutable_key());
  request.set_include_tokens(include_tokens);
  v1::StatResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::Stat, request, &response,
                                       deadline, Retry::kUnavailable));
  return BlobInfoFromProto(response.blob(), "blob");
}

absl::StatusOr<ListResult> ClientCore::List(const ListOptions& list, absl::Time deadline) {
  if (list.ns.has_value() && list.namespace_hash.has_value()) {
    return absl::InvalidArgumentError("list: set ns or namespace_hash, not both");
  }
  v1::ListRequest request;
  if (list.ns.has_value()) proto::ToProto(*list.ns, request.mutable_ns());
  if (list.namespace_hash.has_value()) {
    proto::ToProto(*list.namespace_hash, request.mutable_namespace_hash());
  }
  request.set_page_token(list.page_token);
  request.set_limit(list.limit);
  v1::ListResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::List, request, &response,
                                       deadline, Retry::kUnavailable));
  ListResult result;
  result.blobs.reserve(response.blobs_size());
  for (int i = 0; i < response.blobs_size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(BlobInfo info,
                            BlobInfoFromProto(response.blobs(i), absl::StrCat("blobs[", i, "]")));
    result.blobs.push_back(std::move(info));
  }
  result.next_page_token = response.next_page_token();
  return result;
}

absl::StatusOr<NodeTiers> ClientCore::Tiers(absl::Time deadline) {
  v1::TiersRequest request;
  v1::TiersResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.admin(), &v1::Admin::Stub::Tiers, request,
                                       &response, deadline, Retry::kUnavailable));
  return NodeTiersFromProto(response);
}

absl::StatusOr<EvictResult> ClientCore::Evict(Tier tier, uint64_t bytes, absl::Time deadline) {
  v1::EvictRequest request;
  request.set_tier(proto::TierToProto(tier));
  request.set_bytes(bytes);
  v1::EvictResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.admin(), &v1::Admin::Stub::Evict, request,
                                       &response, deadline, Retry::kNever));
  return EvictResult{response.bytes_freed(), response.pages_evicted(), response.blobs_unlinked(),
                     response.blobs_demoted(), response.blobs_dropped()};
}

absl::Status ClientCore::Drain(absl::Duration timeout, absl::Time deadline) {
  if (timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout: must not be negative");
  }
  v1::DrainRequest request;
  request.set_timeout_ms(
      static_cast<uint32_t>(std::min<int64_t>(absl::ToInt64Milliseconds(timeout), UINT32_MAX)));
  v1::DrainResponse response;
  return control_.Call(control_.admin(), &v1::Admin::Stub::Drain, request, &response, deadline,
                       Retry::kUnavailable);
}

absl::StatusOr<LeaveResult> ClientCore::Leave(absl::Duration timeout, uint64_t hand_over_bytes,
                                              absl::Time deadline) {
  if (timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout: must not be negative");
  }
  v1::LeaveRequest request;
  request.set_timeout_ms(
      static_cast<uint32_t>(std::min<int64_t>(absl::ToInt64Milliseconds(timeout), UINT32_MAX)));
  request.set_hand_over_bytes(hand_over_bytes);
  v1::LeaveResponse r;
  // Not retried: a second Leave after a lost answer would find the node gone from etcd.
  STRATA_RETURN_IF_ERROR(control_.Call(control_.admin(), &v1::Admin::Stub::Leave, request, &r,
                                       deadline, Retry::kNever));
  return LeaveResult{r.segments(),       r.blobs(),         r.bytes(),
                     r.blobs_existing(), r.cold_segments(), r.over_budget_segments(),
                     r.text_blobs(),     r.failures(),      r.held_bytes()};
}

absl::StatusOr<HealthInfo> ClientCore::Health(absl::Time deadline) {
  v1::HealthRequest request;
  v1::HealthResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::Health, request,
                                       &response, deadline, Retry::kUnavailable));
  return HealthInfoFromProto(response);
}

absl::StatusOr<DataPlane::PeerId> ClientCore::ConnectDataPlane(absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  std::string address;
  {
    absl::MutexLock lock(&mu_);
    address = data_plane_address_;
  }
  // A new connection presents a credential from Store.OpenDataPlane (asked for only then).
  auto credential = [&]() -> absl::StatusOr<std::string> {
    STRATA_ASSIGN_OR_RETURN(const DataPlaneGrant grant, OpenDataPlane(deadline));
    return grant.credential;
  };
  if (!address.empty()) {
    absl::StatusOr<DataPlane::PeerId> peer = plane->Connect(address, deadline, credential);
    if (peer.ok() || peer.status().code() != absl::StatusCode::kUnavailable) return peer;
  }
  STRATA_ASSIGN_OR_RETURN(const DataPlaneGrant grant, OpenDataPlane(deadline));
  if (grant.address.empty()) {
    return absl::UnavailableError("the node names no data plane (OpenDataPlane)");
  }
  {
    absl::MutexLock lock(&mu_);
    data_plane_address_ = grant.address;
  }
  return plane->Connect(grant.address, deadline,
                        [&grant]() -> absl::StatusOr<std::string> { return grant.credential; });
}

absl::StatusOr<ClientCore::DataPlaneGrant> ClientCore::OpenDataPlane(absl::Time deadline) {
  v1::OpenDataPlaneRequest request;
  v1::OpenDataPlaneResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::OpenDataPlane, request,
                                       &response, deadline, Retry::kUnavailable));
  return DataPlaneGrant{response.data_plane().ucx_address(), response.credential(),
                        response.data_plane().same_host_socket()};
}

std::shared_ptr<SameHostChannel> ClientCore::SameHost(absl::Time deadline) {
  if (!options_.same_host) return nullptr;
  const absl::Time now = absl::Now();
  {
    // One caller opens the channel, without the lock; the others use UCX meanwhile.
    absl::MutexLock lock(&same_host_mu_);
    if (same_host_ != nullptr) return same_host_;
    if (now < same_host_retry_ || same_host_opening_) return nullptr;
    same_host_retry_ = now + absl::Seconds(30);
    same_host_opening_ = true;
  }
  std::shared_ptr<SameHostChannel> opened;
  absl::StatusOr<DataPlaneGrant> grant = OpenDataPlane(deadline);
  if (grant.ok() && !grant->same_host_socket.empty()) {
    absl::StatusOr<std::unique_ptr<SameHostChannel>> channel =
        SameHostChannel::Open({.socket = grant->same_host_socket,
                               .credential = grant->credential,
                               .max_connections = options_.same_host_connections},
                              std::min(deadline, now + options_.connect_timeout));
    if (channel.ok()) {
      opened = *std::move(channel);
    } else {
      // Another host, network namespace or container: the UCX data plane it is.
      absl::MutexLock lock(&same_host_mu_);
      if (!same_host_logged_) {
        LOG(INFO) << "same-host channel of " << options_.node << " (" << grant->same_host_socket
                  << ") not used: " << channel.status();
        same_host_logged_ = true;
      }
    }
  }
  absl::MutexLock lock(&same_host_mu_);
  same_host_opening_ = false;
  same_host_ = opened;
  return opened;
}

void ClientCore::DropSameHost(const std::shared_ptr<SameHostChannel>& channel) {
  absl::MutexLock lock(&same_host_mu_);
  if (same_host_ != channel) return;
  same_host_ = nullptr;
  same_host_retry_ = absl::Now() + absl::Seconds(1);
}

absl::StatusOr<std::string> ClientCore::DescribeDataPlane(absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  STRATA_ASSIGN_OR_RETURN(DataPlane::PeerId peer, ConnectDataPlane(deadline));
  return plane->Describe(peer);
}

absl::Status ClientCore::RegisterMemory(const MemoryDescriptor& memory) {
  STRATA_RETURN_IF_ERROR(CheckMemoryDescriptor(memory, memory.bytes, "memory"));
  if (memory.bytes == 0) return absl::InvalidArgumentError("memory: 0 bytes");
  if (memory.kind == MemoryKind::kDevice) {
    return absl::UnimplementedError(
        "memory: device memory needs no registration (it is staged through pinned host memory, "
        "or DMA'd from a same-host node); registering it with UCX for GPUDirect needs a "
        "CUDA-enabled UCX, which this build does not use");
  }
  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<DataPlane::MemoryRegion> region,
                          plane->Register(memory.ptr, memory.bytes));
  absl::MutexLock lock(&mu_);
  return registry_.Insert(memory.ptr, memory.bytes,
                          std::shared_ptr<const DataPlane::MemoryRegion>(std::move(region)));
}

absl::Status ClientCore::UnregisterMemory(const void* ptr) {
  absl::MutexLock lock(&mu_);
  return registry_.Erase(ptr);
}

ClientStats ClientCore::stats() const {
  ClientStats s;
  s.rpcs = control_.rpcs();
  s.rpc_retries = control_.retries();
  s.reads = reads_.load(std::memory_order_relaxed);
  s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
  s.writes_committed = writes_committed_.load(std::memory_order_relaxed);
  s.writes_existing = writes_existing_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.checksum_failures = checksum_failures_.load(std::memory_order_relaxed);
  s.same_host_reads = same_host_reads_.load(std::memory_order_relaxed);
  s.device_reads_staged = device_reads_staged_.load(std::memory_order_relaxed);
  s.device_reads_direct = device_reads_direct_.load(std::memory_order_relaxed);
  s.device_bytes_from_hbm = device_bytes_from_hbm_.load(std::memory_order_relaxed);
  s.device_reads_received = device_reads_received_.load(std::memory_order_relaxed);
  s.device_writes = device_writes_.load(std::memory_order_relaxed);
  s.device_writes_direct = device_writes_direct_.load(std::memory_order_relaxed);
  s.same_host_writes = same_host_writes_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::client_internal
