#include "strata/store/cluster/etcd_client.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

#include "etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "strata/base/status_macros.h"
#include "strata/proto/status_convert.h"

namespace strata::store::cluster {

namespace pb = ::etcdserverpb;

struct EtcdClient::Stubs {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::KV::Stub> kv;
  std::unique_ptr<pb::Watch::Stub> watch;
  std::unique_ptr<pb::Lease::Stub> lease;
};

struct EtcdClient::Watch::Stream {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<pb::WatchRequest, pb::WatchResponse>> call;
};

namespace {

// "host:port" split, the port checked; the host may be a bracketed IPv6 literal.
absl::Status CheckEndpoint(const std::string& endpoint, bool* ipv4, bool* ipv6) {
  const size_t colon = endpoint.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(endpoint.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd endpoint \"", endpoint, "\": expected host:port, port 1..65535"));
  }
  const std::string host = endpoint.substr(0, colon);
  *ipv6 = host.size() > 2 && host.front() == '[' && host.back() == ']';
  *ipv4 = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos &&
          std::count(host.begin(), host.end(), '.') == 3;
  return absl::OkStatus();
}

// The channel target: one address list (failover) when every endpoint is an IP literal of
// one family, else the first endpoint through the default (DNS) resolver.
std::string ChannelTarget(const std::vector<std::string>& endpoints, bool all_ipv4, bool all_ipv6) {
  if (endpoints.size() > 1 && all_ipv4) return "ipv4:" + absl::StrJoin(endpoints, ",");
  if (endpoints.size() > 1 && all_ipv6) return "ipv6:" + absl::StrJoin(endpoints, ",");
  if (endpoints.size() > 1) {
    LOG(WARNING) << "etcd endpoints are not all IP literals of one family; using "
                 << endpoints.front() << " only";
  }
  return endpoints.front();
}

// Every call waits for a connection until its deadline (wait_for_ready): a channel whose
// etcd went away and came back reconnects as soon as a call asks, instead of failing calls
// fast with the old error until its idle subchannel is woken (seconds, in gRPC 1.51).
void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  context->set_wait_for_ready(true);
}

// `channel`: a call that ran out of time without a connection is UNAVAILABLE (etcd
// unreachable; retry may help), not DEADLINE_EXCEEDED.
absl::Status Converted(const grpc::Status& status, const char* what,
                       grpc::Channel* channel = nullptr) {
  if (status.ok()) return absl::OkStatus();
  const absl::Status s = proto::FromGrpcStatus(status);
  if (channel != nullptr && absl::IsDeadlineExceeded(s) &&
      channel->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY) {
    return absl::UnavailableError(
        absl::StrCat("etcd ", what, ": no connection to etcd (", s.message(), ")"));
  }
  return absl::Status(s.code(), absl::StrCat("etcd ", what, ": ", s.message()));
}

KeyValue FromProto(const mvccpb::KeyValue& kv) {
  return KeyValue{.key = kv.key(),
                  .value = kv.value(),
                  .create_revision = kv.create_revision(),
                  .mod_revision = kv.mod_revision(),
                  .version = kv.version(),
                  .lease = kv.lease()};
}

absl::Status CheckKey(const std::string& key) {
  if (key.empty()) return absl::InvalidArgumentError("etcd key: empty");
  return absl::OkStatus();
}

}  // namespace

std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    const auto last = static_cast<unsigned char>(end.back());
    if (last < 0xFF) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

absl::Status CheckEtcdEndpoints(const std::vector<std::string>& endpoints) {
  if (endpoints.empty()) return absl::InvalidArgumentError("etcd endpoints: none");
  for (const std::string& endpoint : endpoints) {
    bool ipv4 = false, ipv6 = false;
    STRATA_RETURN_IF_ERROR(CheckEndpoint(endpoint, &ipv4, &ipv6));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(EtcdClientOptions options) {
  STRATA_RETURN_IF_ERROR(CheckEtcdEndpoints(options.endpoints));
  if (options.call_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("etcd call_timeout: must be positive");
  }
  bool all_ipv4 = true, all_ipv6 = true;
  for (const std::string& endpoint : options.endpoints) {
    bool ipv4 = false, ipv6 = false;
    CheckEndpoint(endpoint, &ipv4, &ipv6).IgnoreError();  // checked above
    all_ipv4 = all_ipv4 && ipv4;
    all_ipv6 = all_ipv6 && ipv6;
  }
  grpc::ChannelArguments args;
  // A restarted etcd is found again within about a second.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  auto stubs = std::make_unique<Stubs>();
  stubs->channel = grpc::CreateCustomChannel(ChannelTarget(options.endpoints, all_ipv4, all_ipv6),
                                             grpc::InsecureChannelCredentials(), args);
  stubs->kv = pb::KV::NewStub(stubs->channel);
  stubs->watch = pb::Watch::NewStub(stubs->channel);
  stubs->lease = pb::Lease::NewStub(stubs->channel);
  return std::unique_ptr<EtcdClient>(new EtcdClient(std::move(options), std::move(stubs)));
}

EtcdClient::EtcdClient(EtcdClientOptions options, std::unique_ptr<Stubs> stubs)
    : options_(std::move(options)), stubs_(std::move(stubs)) {}

EtcdClient::~EtcdClient() = default;

absl::StatusOr<int64_t> EtcdClient::Put(const std::string& key, const std::string& value,
                                        int64_t lease) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  pb::PutRequest request;
  request.set_key(key);
  request.set_value(value);
  request.set_lease(lease);
  pb::PutResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  STRATA_RETURN_IF_ERROR(
      Converted(stubs_->kv->Put(&context, request, &response), "Put", stubs_->channel.get()));
  return response.header().revision();
}

absl::StatusOr<bool> EtcdClient::PutIfAbsent(const std::string& key, const std::string& value,
                                             int64_t lease) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  pb::TxnRequest request;
  pb::Compare* absent = request.add_compare();
  absent->set_key(key);
  absent->set_target(pb::Compare::CREATE);
  absent->set_result(pb::Compare::EQUAL);
  absent->set_create_revision(0);
  pb::PutRequest* put = request.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  put->set_lease(lease);
  pb::TxnResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  STRATA_RETURN_IF_ERROR(
      Converted(stubs_->kv->Txn(&context, request, &response), "Txn", stubs_->channel.get()));
  return response.succeeded();
}

absl::StatusOr<RangeResult> EtcdClient::Range(const std::string& key,
                                              const std::string& range_end) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  pb::RangeRequest request;
  request.set_key(key);
  request.set_range_end(range_end);
  pb::RangeResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  STRATA_RETURN_IF_ERROR(
      Converted(stubs_->kv->Range(&context, request, &response), "Range", stubs_->channel.get()));
  RangeResult result;
  result.revision = response.header().revision();
  result.kvs.reserve(response.kvs_size());
  for (const mvccpb::KeyValue& kv : response.kvs()) result.kvs.push_back(FromProto(kv));
  return result;
}

absl::StatusOr<RangeResult> EtcdClient::Get(const std::string& key) { return Range(key, ""); }

absl::StatusOr<RangeResult> EtcdClient::GetPrefix(const std::string& prefix) {
  return Range(prefix, PrefixEnd(prefix));
}

absl::StatusOr<int64_t> EtcdClient::DeleteRange(const std::string& key,
                                                const std::string& range_end) {
  STRATA_RETURN_IF_ERROR(CheckKey(key));
  pb::DeleteRangeRequest request;
  request.set_key(key);
  request.set_range_end(range_end);
  pb::DeleteRangeResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  STRATA_RETURN_IF_ERROR(Converted(stubs_->kv->DeleteRange(&context, request, &response),
                                   "DeleteRange", stubs_->channel.get()));
  return response.deleted();
}

absl::StatusOr<int64_t> EtcdClient::Delete(const std::string& key) { return DeleteRange(key, ""); }

absl::StatusOr<int64_t> EtcdClient::DeletePrefix(const std::string& prefix) {
  return DeleteRange(prefix, PrefixEnd(prefix));
}

absl::StatusOr<LeaseGrant> EtcdClient::GrantLease(absl::Duration ttl) {
  const int64_t seconds =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(ttl))));
  pb::LeaseGrantRequest request;
  request.set_ttl(seconds);
  pb::LeaseGrantResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  STRATA_RETURN_IF_ERROR(Converted(stubs_->lease->LeaseGrant(&context, request, &response),
                                   "LeaseGrant", stubs_->channel.get()));
  if (!response.error().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("etcd LeaseGrant: ", response.error()));
  }
  return LeaseGrant{.id = response.id(), .ttl = absl::Seconds(response.ttl())};
}

absl::StatusOr<absl::Duration> EtcdClient::KeepAlive(int64_t lease) {
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  auto call = stubs_->lease->LeaseKeepAlive(&context);
  pb::LeaseKeepAliveRequest request;
  request.set_id(lease);
  pb::LeaseKeepAliveResponse response;
  if (!call->Write(request) || !call->Read(&response)) {
    const grpc::Status status = call->Finish();
    if (!status.ok()) return Converted(status, "LeaseKeepAlive", stubs_->channel.get());
    return absl::UnavailableError("etcd LeaseKeepAlive: the stream ended without an answer");
  }
  context.TryCancel();  // one answer is all this call wants
  call->Finish().IgnoreError();
  if (response.ttl() <= 0) {
    return absl::NotFoundError(
        absl::StrCat("etcd lease ", absl::Hex(lease), " expired or was revoked"));
  }
  return absl::Seconds(response.ttl());
}

absl::Status EtcdClient::RevokeLease(int64_t lease) {
  pb::LeaseRevokeRequest request;
  request.set_id(lease);
  pb::LeaseRevokeResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, options_.call_timeout);
  const absl::Status status = Converted(stubs_->lease->LeaseRevoke(&context, request, &response),
                                        "LeaseRevoke", stubs_->channel.get());
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

std::unique_ptr<EtcdClient::Watch> EtcdClient::WatchPrefix(
    const std::string& prefix, int64_t start_revision,
    std::function<void(const std::vector<WatchEvent>&, int64_t revision)> on_events,
    std::function<void(const absl::Status&)> on_reset) {
  std::unique_ptr<Watch> watch(new Watch());
  Watch* w = watch.get();
  w->thread_ =
      std::thread([w, stubs = stubs_.get(), options = options_, prefix, start_revision,
                   on_events = std::move(on_events), on_reset = std::move(on_reset)]() mutable {
        w->Run(stubs, options, prefix, start_revision, std::move(on_events), std::move(on_reset));
      });
  return watch;
}

EtcdClient::Watch::~Watch() {
  stop_.Notify();
  {
    absl::MutexLock lock(&mu_);
    if (stream_ != nullptr) stream_->context.TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

void EtcdClient::Watch::Run(EtcdClient::Stubs* stubs, const EtcdClientOptions& options,
                            std::string prefix, int64_t start_revision,
                            std::function<void(const std::vector<WatchEvent>&, int64_t)> on_events,
                            std::function<void(const absl::Status&)> on_reset) {
  int64_t next_revision = start_revision;
  absl::Duration backoff = options.watch_initial_backoff;
  while (!stop_.HasBeenNotified()) {
    auto stream = std::make_shared<Stream>();
    {
      absl::MutexLock lock(&mu_);
      if (stop_.HasBeenNotified()) return;
      stream_ = stream;
    }
    stream->context.set_wait_for_ready(true);  // a stream opened while etcd is away waits
    stream->call = stubs->watch->Watch(&stream->context);
    pb::WatchRequest request;
    pb::WatchCreateRequest* create = request.mutable_create_request();
    create->set_key(prefix);
    create->set_range_end(PrefixEnd(prefix));
    create->set_start_revision(next_revision);
    create->set_progress_notify(true);
    absl::Status ended;  // why the stream ended, if etcd said
    bool compacted = false;
    if (stream->call->Write(request)) {
      pb::WatchResponse response;
      while (stream->call->Read(&response)) {
        if (response.created()) {
          established_.store(true, std::memory_order_release);
          backoff = options.watch_initial_backoff;
          if (next_revision == 0) next_revision = response.header().revision() + 1;
        }
        if (response.canceled()) {
          compacted = response.compact_revision() > 0;
          ended =
              compacted
                  ? absl::OutOfRangeError(absl::StrCat("etcd watch from revision ", next_revision,
                                                       ": compacted; the oldest revision kept is ",
                                                       response.compact_revision()))
                  : absl::UnavailableError(
                        absl::StrCat("etcd cancelled the watch: ", response.cancel_reason()));
          break;
        }
        if (response.events_size() == 0) {
          // A progress notification: everything up to its revision has been delivered.
          if (!response.created() && next_revision != 0) {
            next_revision = std::max(next_revision, response.header().revision() + 1);
          }
          continue;
        }
        std::vector<WatchEvent> events;
        events.reserve(response.events_size());
        for (const mvccpb::Event& event : response.events()) {
          events.push_back(WatchEvent{.type = event.type() == mvccpb::Event::DELETE
                                                  ? WatchEvent::Type::kDelete
                                                  : WatchEvent::Type::kPut,
                                      .kv = FromProto(event.kv())});
          next_revision = std::max(next_revision, event.kv().mod_revision() + 1);
        }
        on_events(events, response.header().revision());
      }
    }
    established_.store(false, std::memory_order_release);
    stream->context.TryCancel();
    const grpc::Status finished = stream->call->Finish();
    {
      absl::MutexLock lock(&mu_);
      stream_.reset();
    }
    if (stop_.HasBeenNotified()) return;
    if (ended.ok()) {
      ended = finished.ok() ? absl::UnavailableError("etcd watch stream ended")
                            : Converted(finished, "Watch");
    }
    on_reset(ended);
    if (compacted) return;
    stop_.WaitForNotificationWithTimeout(backoff);
    backoff = std::min(backoff * 2, options.watch_max_backoff);
  }
}

}  // namespace strata::store::cluster
