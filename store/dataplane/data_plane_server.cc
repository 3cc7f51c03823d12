// DataPlaneServer: start and stop, peers, replies, stats. FETCH is in data_plane_fetch.cc,
// PUT_DATA in data_plane_put.cc.
#include "strata/store/dataplane/data_plane_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::store::dataplane {

namespace wire = transport::wire;
using transport::IncomingData;
using transport::PeerId;

DataPlaneServer::DataPlaneServer(core::NodeEngine* engine, DataPlaneOptions options)
    : engine_(engine), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<DataPlaneServer>> DataPlaneServer::Start(core::NodeEngine* engine,
                                                                        DataPlaneOptions options) {
  if (options.max_sends_per_peer == 0 || options.max_fetches_per_peer == 0 ||
      options.max_puts_per_peer == 0 || options.max_put_metadata_bytes == 0) {
    return absl::InvalidArgumentError(
        "data plane: max_sends_per_peer, max_fetches_per_peer, max_puts_per_peer and "
        "max_put_metadata_bytes must be > 0");
  }
  const size_t colon = options.listen_address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data plane: bad listen address \"", options.listen_address, "\": expected host:port"));
  }
  const std::string host = options.listen_address.substr(0, colon);
  transport::PeerAuthenticator authenticate = options.authenticate;
  std::unique_ptr<DataPlaneServer> server(new DataPlaneServer(engine, std::move(options)));
  DataPlaneServer* self = server.get();

  transport::MessengerOptions messenger_options;
  messenger_options.name = self->options_.name;
  messenger_options.transports = self->options_.transports;
  messenger_options.busy_poll = self->options_.busy_poll;
  messenger_options.max_peers = self->options_.max_connections;
  messenger_options.handshake_timeout = self->options_.handshake_timeout;
  messenger_options.transfer_timeout = self->options_.transfer_timeout;
  // The node never keeps a payload undecided: nothing to park.
  messenger_options.max_parked_bytes = 0;
  messenger_options.on_peer_connected = [self](PeerId peer, absl::Status) {
    self->counters_.peers_connected.fetch_add(1, std::memory_order_relaxed);
    if (self->options_.scope_of) {
      // On the progress thread: PeerIdentity answers inline.
      absl::StatusOr<std::string> identity = self->messenger_->PeerIdentity(peer);
      self->scopes_.insert_or_assign(
          peer, identity.ok() ? self->options_.scope_of(*identity) : core::AccessScope::Of({}));
    }
  };
  messenger_options.on_peer_failed = [self](PeerId peer, absl::Status status) {
    self->OnPeerFailed(peer, status);
  };
  messenger_options.authenticate = std::move(authenticate);
  STRATA_ASSIGN_OR_RETURN(self->messenger_,
                          transport::Messenger::Create(std::move(messenger_options)));

  // The whole arena, once: every FETCH_DATA payload and PUT_DATA destination lies in it.
  const tiering::DramArena& arena = engine->dram();
  STRATA_ASSIGN_OR_RETURN(self->arena_region_,
                          self->messenger_->RegisterMemory(arena.base(), arena.mapped_bytes()));

  STRATA_RETURN_IF_ERROR(self->messenger_->RegisterHandler(
      static_cast<uint16_t>(wire::MessageType::kFetch),
      [self](PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
        self->OnFetch(from, header, std::move(data));
      }));
  STRATA_RETURN_IF_ERROR(self->messenger_->RegisterHandler(
      static_cast<uint16_t>(wire::MessageType::kRead),
      [self](PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
        self->OnRead(from, header, std::move(data));
      }));
  STRATA_RETURN_IF_ERROR(self->messenger_->RegisterHandler(
      static_cast<uint16_t>(wire::MessageType::kPutData),
      [self](PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
        self->OnPutData(from, header, std::move(data));
      }));
  STRATA_RETURN_IF_ERROR(self->messenger_->RegisterHandler(
      static_cast<uint16_t>(wire::MessageType::kPut),
      [self](PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
        self->OnPut(from, header, std::move(data));
      }));
  STRATA_ASSIGN_OR_RETURN(self->port_, self->messenger_->Listen(self->options_.listen_address));
  self->address_ = absl::StrCat(host, ":", self->port_);
  LOG(INFO) << "data plane listening on " << self->address_ << " (UCX_TLS "
            << (self->options_.transports.empty() ? "from the environment"
                                                  : self->options_.transports)
            << "), arena of " << arena.mapped_bytes() << " bytes registered";
  return server;
}

DataPlaneServer::~DataPlaneServer() { Stop(); }

void DataPlaneServer::Stop() {
  absl::MutexLock lock(&stop_mu_);
  if (messenger_ == nullptr) return;
  stopping_.store(true, std::memory_order_release);
  // Destroy the messenger while messenger_ still points at it: its destructor joins the
  // progress thread, whose last completions (CANCELLED) may still read messenger_.
  delete messenger_.get();
  (void)messenger_.release();
  arena_region_.reset();
  LOG(INFO) << "data plane on " << address_ << " stopped";
}

DataPlaneStats DataPlaneServer::stats() const {
  auto get = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  DataPlaneStats out;
  out.fetch_requests = get(counters_.fetch_requests);
  out.fetch_failures = get(counters_.fetch_failures);
  out.read_requests = get(counters_.read_requests);
  out.read_failures = get(counters_.read_failures);
  out.ranges_sent = get(counters_.ranges_sent);
  out.bytes_out = get(counters_.bytes_out);
  out.put_requests = get(counters_.put_requests);
  out.put_failures = get(counters_.put_failures);
  out.bytes_in = get(counters_.bytes_in);
  out.malformed = get(counters_.malformed);
  out.replies_failed = get(counters_.replies_failed);
  out.peers_connected = get(counters_.peers_connected);
  out.peers_failed = get(counters_.peers_failed);
  out.peers_refused = messenger_stats().peers_refused;
  out.sends_in_flight = get(counters_.sends_in_flight);
  out.fetch_latency = counters_.fetch_latency.Snapshot();
  out.read_latency = counters_.read_latency.Snapshot();
  out.put_latency = counters_.put_latency.Snapshot();
  {
    absl::MutexLock lock(&idle_mu_);
    out.requests_in_flight = requests_in_flight_;
  }
  return out;
}

transport::MessengerStats DataPlaneServer::messenger_stats() const {
  absl::MutexLock lock(&stop_mu_);
  return messenger_ == nullptr ? transport::MessengerStats{} : messenger_->stats();
}

absl::Status DataPlaneServer::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&idle_mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(idle_mu_) { return requests_in_flight_ == 0; };
  if (idle_mu_.AwaitWithTimeout(absl::Condition(&idle), timeout)) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat("data plane: ", requests_in_flight_,
                                                  " requests still in flight after ",
                                                  absl::FormatDuration(timeout)));
}

void DataPlaneServer::BeginRequest() {
  absl::MutexLock lock(&idle_mu_);
  ++requests_in_flight_;
}

void DataPlaneServer::EndRequest() {
  absl::MutexLock lock(&idle_mu_);
  DCHECK_GT(requests_in_flight_, 0u);
  --requests_in_flight_;
}

uint64_t DataPlaneServer::RequestIdOf(absl::Span<const uint8_t> header) {
  if (header.size() < 16) return 0;
  uint64_t id = 0;
  for (int i = 7; i >= 0; --i) id = (id << 8) | header[8 + i];
  return id;
}

void DataPlaneServer::SendDone(PeerId peer, wire::MessageType type, uint64_t request_id,
                               absl::Status status, DoneTiming timing) {
  std::atomic<uint64_t>& failures =
      type == wire::MessageType::kFetchDone ? counters_.fetch_failures : counters_.put_failures;
  if (!status.ok()) {
    if (!timing.read) failures.fetch_add(1, std::memory_order_relaxed);
    VLOG(1) << options_.name << ": request " << request_id << " of peer "
            << static_cast<uint64_t>(peer) << " failed: " << status;
  }
  if (stopping_.load(std::memory_order_acquire)) {
    counters_.replies_failed.fetch_add(1, std::memory_order_relaxed);
    EndRequest();
    return;
  }
  const std::vector<uint8_t> header = wire::EncodeDone(type, request_id, status);
  messenger_->Send(peer, static_cast<uint16_t>(type), header, {}, {},
                   [this, timing](absl::Status sent) {
                     if (!sent.ok())
                       counters_.replies_failed.fetch_add(1, std::memory_order_relaxed);
                     if (timing.histogram != nullptr) {
                       timing.histogram->Record(
                           absl::FromChrono(std::chrono::steady_clock::now() - timing.received));
                     }
                     EndRequest();
                   });
}

const core::AccessScope& DataPlaneServer::ScopeOf(PeerId peer) const {
  static const core::AccessScope* const none = new core::AccessScope(core::AccessScope::Of({}));
  if (!options_.scope_of) return core::AccessScope::All();
  auto it = scopes_.find(peer);
  return it == scopes_.end() ? *none : it->second;
}

void DataPlaneServer::OnPeerFailed(PeerId peer, const absl::Status& status) {
  counters_.peers_failed.fetch_add(1, std::memory_order_relaxed);
  scopes_.erase(peer);
  ForgetTrips(peer);
  auto it = fetches_.find(peer);
  if (it == fetches_.end()) return;
  std::shared_ptr<PeerFetches> fetches = it->second;
  fetches->failed = true;
  for (const std::unique_ptr<FetchRequest>& request : fetches->requests) {
    if (request->status.ok()) request->status = status;
  }
  LOG(INFO) << options_.name << ": peer " << static_cast<uint64_t>(peer) << " failed with "
            << fetches->requests.size() << " FETCH requests unfinished: " << status;
  Pump(std::move(fetches));
}

}  // namespace strata::store::dataplane
