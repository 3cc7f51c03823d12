// MessengerImpl: peers — accepting, connecting, the handshake, failures and closing.
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "store/transport/handshake.h"
#include "store/transport/messenger_impl.h"
#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport {
namespace {

// A refusal's reason is cut to this many bytes.
constexpr size_t kMaxRefusalBytes = 512;

std::string PeerName(PeerId id) { return absl::StrCat("peer ", static_cast<uint64_t>(id)); }

}  // namespace

MessengerImpl::Peer* MessengerImpl::FindPeer(PeerId id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : it->second.get();
}

void MessengerImpl::MapEndpoint(Peer& peer, const ucx::Endpoint& endpoint) {
  peer_by_endpoint_[endpoint.get()] = peer.id;
}

absl::Status MessengerImpl::PeerUnusable(PeerId id) {
  if (id == PeerId::kNone || static_cast<uint64_t>(id) >= next_peer_id_) {
    return absl::InvalidArgumentError(absl::StrCat("unknown ", PeerName(id)));
  }
  Peer* peer = FindPeer(id);
  if (peer != nullptr && peer->failed) return peer->error;
  if (peer == nullptr || peer->closing) {
    return absl::UnavailableError(absl::StrCat(PeerName(id), " is disconnected"));
  }
  return absl::OkStatus();
}

void MessengerImpl::Announce(Peer& peer) {
  peer.announced = true;
  if (peer.connect_done) {
    counters_.peers_connected.fetch_add(1, std::memory_order_relaxed);
    std::move(peer.connect_done)(peer.id);
    peer.connect_done = nullptr;
    return;
  }
  counters_.peers_accepted.fetch_add(1, std::memory_order_relaxed);
  if (options_.on_peer_connected) options_.on_peer_connected(peer.id, absl::OkStatus());
}

// ---------------------------------------------------------------------------------------
// Client side.

absl::StatusOr<PeerId> MessengerImpl::Connect(std::string_view address, absl::Duration timeout,
                                              std::string_view credential) {
  if (OnProgressThread()) {
    return absl::FailedPreconditionError("Connect called on the messenger's progress thread");
  }
  if (credential.size() > kMaxCredentialBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("credential of ", credential.size(), " bytes; at most ", kMaxCredentialBytes));
  }
  STRATA_ASSIGN_OR_RETURN(SocketAddress parsed, SocketAddress::Parse(address));
  struct Wait {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    bool abandoned ABSL_GUARDED_BY(mu) = false;
    absl::StatusOr<PeerId> result ABSL_GUARDED_BY(mu) = absl::InternalError("not run");
  };
  auto wait = std::make_shared<Wait>();
  // Returns true when the caller gave up waiting.
  auto finish = [wait](absl::StatusOr<PeerId> result) {
    absl::MutexLock lock(&wait->mu);
    wait->result = std::move(result);
    wait->done = true;
    return wait->abandoned;
  };
  queue_->Push([this, parsed, finish, credential = std::string(credential)](bool cancelled) {
    if (cancelled) {
      finish(absl::CancelledError(absl::StrCat(options_.name, " is shutting down")));
      return;
    }
    StartConnect(parsed, credential, [this, finish](absl::StatusOr<PeerId> result) {
      const PeerId connected = result.ok() ? *result : PeerId::kNone;
      // Nobody waits any more: do not leak the connection.
      if (finish(std::move(result)) && connected != PeerId::kNone) {
        ClosePeer(connected, /*force=*/false);
      }
    });
  });

  absl::MutexLock lock(&wait->mu);
  if (!wait->mu.AwaitWithTimeout(absl::Condition(&wait->done), timeout)) {
    wait->abandoned = true;
    return absl::UnavailableError(absl::StrCat("connect to ", parsed.ToString(),
                                               " did not complete within ",
                                               absl::FormatDuration(timeout)));
  }
  return wait->result;
}

void MessengerImpl::StartConnect(const SocketAddress& address, std::string credential,
                                 ConnectCallback done) {
  if (peers_.size() >= options_.max_peers) {
    std::move(done)(absl::ResourceExhaustedError(
        absl::StrCat(peers_.size(), " connections already (max_peers ", options_.max_peers, ")")));
    return;
  }
  absl::StatusOr<int> fd = StartConnectStream(address);
  if (!fd.ok()) {
    std::move(done)(fd.status().code() == absl::StatusCode::kResourceExhausted
                        ? fd.status()
                        : absl::UnavailableError(fd.status().message()));
    return;
  }
  auto peer = std::make_unique<Peer>();
  peer->impl = this;
  peer->id = NewPeerId();
  peer->remote = address.ToString();
  peer->started = absl::Now();
  peer->connecting = true;
  peer->credential = std::move(credential);
  peer->stream = std::make_unique<StreamConnection>(*fd, frame_limits_, options_.max_parked_bytes);
  peer->connect_done = std::move(done);
  const PeerId id = peer->id;
  Peer& added = *(peers_[id] = std::move(peer));
  UpdateInterest(added);  // writable once connected (ServiceStream -> OnStreamConnected)
}

void MessengerImpl::OnStreamConnected(Peer& peer) {
  const PeerId id = peer.id;
  SendOnStream(peer, kHandshakeId,
               HandshakeHeader(kHello, host_identity_.empty() ? 0 : kFlagDirect, host_identity_,
                               peer.credential, host_identity_.empty() ? "" : worker_->address()),
               {}, /*streamed=*/false, [this, id](absl::Status sent) {
                 if (!sent.ok()) FinishConnect(id, sent);
               });
  peer.credential.clear();
}

void MessengerImpl::FinishConnect(PeerId id, absl::Status status) {
  Peer* peer = FindPeer(id);
  if (peer == nullptr || !peer->connect_done) return;
  if (status.ok()) {
    Announce(*peer);
    return;
  }
  if (status.code() != absl::StatusCode::kCancelled &&
      status.code() != absl::StatusCode::kUnauthenticated) {
    status = absl::UnavailableError(
        absl::StrCat("connect to ", peer->remote, " failed: ", status.message()));
  }
  std::move(peer->connect_done)(status);
  peer->connect_done = nullptr;
  ClosePeer(id, /*force=*/true);
}

// ---------------------------------------------------------------------------------------
// The handshake (both sides; see messenger_impl.h).

void MessengerImpl::OnHandshakeMessage(PeerId from, absl::Span<const uint8_t> header) {
  Handshake handshake{from, std::vector<uint8_t>(header.begin(), header.end())};
  if (header.size() > 2 && header[2] == kReady) {
    HandleHandshake(handshake);
  } else {
    handshakes_.push_back(std::move(handshake));
  }
}

void MessengerImpl::HandleHandshake(const Handshake& handshake) {
  Peer* peer = FindPeer(handshake.peer);
  if (peer == nullptr || peer->closing || peer->failed) return;
  ParsedHandshake parsed;
  bool valid = ParseHandshake(handshake.header, &parsed);
  if (valid) {
    switch (parsed.kind) {
      case kHello:  // to a server, once
        valid = !peer->connect_done && !peer->welcomed;
        break;
      case kWelcome:  // to a client whose Connect waits, once
        valid = peer->connect_done && !peer->welcomed && (!parsed.direct || worker_ != nullptr);
        break;
      case kReady:  // to a server that welcomed the client
        valid = !peer->connect_done && peer->welcomed && !peer->announced;
        break;
    }
  }
  if (!valid) {
    LOG(WARNING) << options_.name << ": bad handshake from " << PeerName(peer->id) << " ("
                 << peer->remote << "); closing it";
    FinishConnect(peer->id, absl::InternalError("bad handshake"));
    ClosePeer(peer->id, /*force=*/true);
    return;
  }
  const PeerId id = peer->id;
  if (parsed.kind == kReady) {
    Announce(*peer);
    return;
  }
  if (parsed.refused) {  // to a client: the server refused its credential
    FinishConnect(
        id, absl::UnauthenticatedError(absl::StrCat(
                "refused by ", peer->remote, ": ",
                absl::string_view(parsed.worker_address.data(), parsed.worker_address.size()))));
    return;
  }
  if (parsed.kind == kHello && options_.authenticate) {
    // Before anything else the peer sent is acted on: no endpoint is made for an
    // unauthenticated peer.
    absl::StatusOr<std::string> identity = options_.authenticate(parsed.credential);
    if (!identity.ok()) {
      counters_.peers_refused.fetch_add(1, std::memory_order_relaxed);
      // At most one line a second: a storm of bad credentials must not flood the log.
      LOG_EVERY_T(WARNING, 1.0) << options_.name << ": refused " << PeerName(id) << " ("
                                << peer->remote << "): " << identity.status().message() << " ("
                                << counters_.peers_refused.load() << " refused so far)";
      const absl::string_view message = identity.status().message();
      const std::string_view reason(message.data(), std::min(message.size(), kMaxRefusalBytes));
      SendOnStream(*peer, kHandshakeId, HandshakeHeader(kWelcome, kFlagRefused, "", "", reason), {},
                   /*streamed=*/false, [](absl::Status) {});
      ClosePeer(id, /*force=*/false);  // once the refusal is written (bounded)
      return;
    }
    peer->identity = *std::move(identity);
  }
  peer->welcomed = true;
  bool direct = parsed.kind == kHello
                    ? parsed.direct && !host_identity_.empty() && parsed.host == host_identity_
                    : parsed.direct;
  if (direct) {
    auto endpoint = ucx::Endpoint::ConnectToWorker(*worker_, parsed.worker_address,
                                                   /*peer_error_mode=*/false,
                                                   &MessengerImpl::OnEndpointError, peer);
    if (endpoint.ok()) {
      peer->data = std::move(*endpoint);
      MapEndpoint(*peer, *peer->data);
    } else if (parsed.kind == kHello) {
      // The server may still fall back to the stream.
      LOG(WARNING) << options_.name << ": no shared-memory endpoint to " << PeerName(id) << ": "
                   << endpoint.status();
      direct = false;
    } else {
      FinishConnect(id, endpoint.status());
      return;
    }
  }
  if (parsed.kind == kHello) {
    SendOnStream(*peer, kHandshakeId,
                 HandshakeHeader(kWelcome, direct ? kFlagDirect : 0, "", "",
                                 direct ? worker_->address() : ""),
                 {}, /*streamed=*/false, [](absl::Status) {});
    return;  // announced on READY
  }
  // Client: READY travels on the endpoint the client's messages will take, ahead of them,
  // and tells the server that this side's data endpoint exists (so the server's messages
  // arrive on an endpoint this side knows).
  auto ready = [this, id] {
    Peer* p = FindPeer(id);
    if (p->data != nullptr) {
      SendOnEndpoint(id, p->data->get(), kHandshakeId, HandshakeHeader(kReady, 0, "", "", ""), {},
                     {}, [](absl::Status) {});
    } else {
      SendOnStream(*p, kHandshakeId, HandshakeHeader(kReady, 0, "", "", ""), {},
                   /*streamed=*/false, [](absl::Status) {});
    }
    FinishConnect(id, absl::OkStatus());
  };
  if (!direct) {
    ready();
    return;
  }
  Flush(id, peer->data->get(), [this, id, ready](absl::Status status) {
    if (status.ok()) status = PeerUnusable(id);
    if (!status.ok()) {
      FinishConnect(id, status);
      return;
    }
    ready();
  });
}

void MessengerImpl::Flush(PeerId peer, ucp_ep_h ep, CompletionCallback done) {
  Operation* op = NewOperation(Operation::Kind::kConnect, peer, 0, std::move(done));
  ucp_request_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &MessengerImpl::OnSendComplete;
  param.user_data = op;
  TrackRequest(op, ucp_ep_flush_nbx(ep, &param));
}

// ---------------------------------------------------------------------------------------
// Failures and closing.

void MessengerImpl::OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* peer = static_cast<Peer*>(arg);
  if (peer->failed) return;
  peer->failed = true;
  peer->error = ucx::UcsToStatus(
      status, absl::StrCat(PeerName(peer->id), " (", peer->remote, ") endpoint error"));
  *peer->failure = peer->error;
  peer->impl->failed_peers_.push_back(peer->id);
}

void MessengerImpl::FailPeers() {
  std::vector<PeerId> failed;
  failed.swap(failed_peers_);
  for (PeerId id : failed) {
    Peer* peer = FindPeer(id);
    if (peer == nullptr) {
      // Failed while closing gracefully: its data endpoint's requests would hang.
      if (ClosingPeer* closing = FindClosingPeer(id); closing != nullptr) {
        OrphanOperations(id, closing->peer->error);
      }
      continue;
    }
    const absl::Status error = peer->error;
    const bool announced = peer->announced;
    if (peer->orderly) {
      LOG_IF(INFO, !shutting_down_)
          << options_.name << ": " << PeerName(id) << " (" << peer->remote << ") disconnected";
    } else {
      LOG_IF(WARNING, !shutting_down_)
          << options_.name << ": " << PeerName(id) << " (" << peer->remote << ") failed: " << error;
    }
    (peer->orderly ? counters_.peers_disconnected : counters_.peer_failures)
        .fetch_add(1, std::memory_order_relaxed);
    FinishConnect(id, error);
    ClosePeer(id, /*force=*/true);
    if (announced && !shutting_down_ && options_.on_peer_failed) {
      options_.on_peer_failed(id, error);
    }
  }
}

MessengerImpl::ClosingPeer* MessengerImpl::FindClosingPeer(PeerId id) {
  for (ClosingPeer& closing : closing_) {
    if (closing.peer->id == id) return &closing;
  }
  return nullptr;
}

void MessengerImpl::Disconnect(PeerId peer) {
  auto close = [this, peer](bool cancelled) {
    if (!cancelled) ClosePeer(peer, /*force=*/false);
  };
  if (OnProgressThread()) {
    close(false);
  } else {
    queue_->Push(close);
  }
}

void MessengerImpl::ClosePeer(PeerId id, bool force) {
  Peer* peer = FindPeer(id);
  if (peer == nullptr) return;
  peer->force_close |= force;
  if (peer->closing) return;
  peer->closing = true;
  closes_.push_back(id);
}

void MessengerImpl::CloseQueuedPeers() {
  std::vector<PeerId> ids;
  ids.swap(closes_);
  for (PeerId id : ids) {
    auto it = peers_.find(id);
    if (it == peers_.end()) continue;
    Peer& open = *it->second;
    // Closing gracefully: the stream first finishes what it sends and awaits (bounded by
    // transfer_timeout, which fails the peer).
    if (!open.force_close && !open.failed && !shutting_down_ && open.stream != nullptr &&
        !open.stream->idle()) {
      if (!open.draining) {
        open.draining = true;
        draining_.push_back(id);
      }
      continue;
    }
    std::unique_ptr<Peer> peer = std::move(it->second);
    peers_.erase(it);
    if (peer->connect_done) {
      std::move(peer->connect_done)(
          peer->failed ? peer->error
                       : absl::UnavailableError(absl::StrCat("connection to ", peer->remote,
                                                             " closed before it completed")));
    }
    if (peer->force_close && peer->failure->ok()) {
      *peer->failure = shutting_down_
                           ? absl::CancelledError(absl::StrCat(options_.name, " shut down"))
                           : absl::UnavailableError(absl::StrCat(PeerName(id), " was closed"));
    }
    const absl::Status gone =
        !peer->failure->ok()
            ? *peer->failure
            : absl::UnavailableError(absl::StrCat(PeerName(id), " disconnected before Accept"));
    // Into closing_ first: UCX may complete the endpoints' requests inside StartClose, while
    // the peer must still be alive (its endpoints are being closed).
    closing_.push_back({{}, {}, std::move(peer)});
    const size_t index = closing_.size() - 1;
    Peer& closed = *closing_[index].peer;
    CloseStream(closed, gone);
    std::vector<void*> requests;
    if (closed.data != nullptr) {
      peer_by_endpoint_.erase(closed.data->get());
      if (void* request = closed.data->StartClose(closed.force_close); request != nullptr) {
        requests.push_back(request);
      }
    }
    closing_[index].requests = std::move(requests);
    AbandonKeptPayloads(id, gone, closing_[index].descriptors);
    if (closed.force_close && closed.data != nullptr) OrphanOperations(id, *closed.failure);
  }
}

}  // namespace strata::store::transport
