// MessengerImpl: the TCP streams — accepting, servicing sockets, frames to handlers.
#include <cerrno>
#include <utility>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "store/transport/messenger_impl.h"
#include "strata/base/errno_status.h"

namespace strata::store::transport {

void MessengerImpl::AcceptStreams(const StreamListener& listener) {
  while (true) {
    const int fd = accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED) {
        LOG_EVERY_N(WARNING, 100) << options_.name << ": accept on " << listener.bound.ToString()
                                  << ": " << base::ErrnoToStatus(errno, "accept4");
      }
      return;
    }
    if (shutting_down_ || peers_.size() >= options_.max_peers) {
      LOG_EVERY_N(WARNING, 100) << options_.name << ": refusing a connection from "
                                << RemoteAddress(fd) << ": " << peers_.size()
                                << " connections already (max_peers " << options_.max_peers << ")";
      close(fd);
      continue;
    }
    auto peer = std::make_unique<Peer>();
    peer->impl = this;
    peer->id = NewPeerId();
    peer->remote = RemoteAddress(fd);
    peer->started = absl::Now();
    peer->stream = std::make_unique<StreamConnection>(fd, frame_limits_, options_.max_parked_bytes);
    const PeerId id = peer->id;
    Peer& added = *(peers_[id] = std::move(peer));
    UpdateInterest(added);
    // The client's HELLO completes the connection (HandleHandshake).
  }
}

void MessengerImpl::UpdateInterest(Peer& peer) {
  if (peer.stream == nullptr) return;
  uint32_t events = 0;
  if (peer.connecting) {
    events = EPOLLOUT;
  } else {
    if (peer.stream->wants_read()) events |= EPOLLIN | EPOLLRDHUP;
    // A payload awaiting a decision: still learn of the peer hanging up, once.
    if (peer.stream->awaiting_decision() && !peer.stream->peer_closed()) events |= EPOLLRDHUP;
    if (peer.stream->wants_write()) events |= EPOLLOUT;
  }
  if (peer.registered && events == peer.interest) return;
  const uint64_t tag = kPeerTag | static_cast<uint64_t>(peer.id);
  absl::Status status = peer.registered ? EpollModify(epoll_fd_, peer.stream->fd(), events, tag)
                                        : EpollAdd(epoll_fd_, peer.stream->fd(), events, tag);
  if (!status.ok()) {
    FailPeer(peer, std::move(status));
    return;
  }
  peer.registered = true;
  peer.interest = events;
}

void MessengerImpl::ServiceStream(Peer& peer, uint32_t events) {
  if (peer.stream == nullptr || peer.failed) return;
  StreamConnection& stream = *peer.stream;
  if (peer.connecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    peer.connecting = false;
    if (absl::Status outcome = ConnectOutcome(stream.fd()); !outcome.ok()) {
      FailPeer(peer, std::move(outcome));
      return;
    }
    OnStreamConnected(peer);
  }
  absl::Status status = stream.WriteSome();
  if (status.ok()) {
    status = stream.ReadSome(
        [this, &peer](const StreamConnection::Frame& frame) { OnStreamFrame(peer, frame); });
  }
  if (status.ok()) status = stream.WriteSome();  // acknowledgements and replies just queued
  if (status.ok() && stream.awaiting_decision() && (events & (EPOLLRDHUP | EPOLLHUP)) != 0) {
    stream.NotePeerClosed();
    if ((events & EPOLLERR) != 0) status = ConnectOutcome(stream.fd());
  }
  if (!status.ok()) {
    // A broken connection, an end of stream or a protocol error: the peer is gone.
    peer.orderly = stream.closed_cleanly();
    FailPeer(peer, absl::UnavailableError(
                       absl::StrCat("connection to ", peer.remote, ": ", status.message())));
    return;
  }
  UpdateInterest(peer);
}

bool MessengerImpl::ServiceQueuedStreams() {
  if (stream_work_.empty()) return false;
  std::vector<PeerId> ids;
  ids.swap(stream_work_);
  for (PeerId id : ids) {
    if (Peer* peer = FindPeer(id); peer != nullptr) ServiceStream(*peer, 0);
  }
  return true;
}

void MessengerImpl::SendOnStream(Peer& peer, uint16_t id, std::string header,
                                 absl::Span<const uint8_t> payload, bool streamed,
                                 CompletionCallback done) {
  Operation* op = NewOperation(Operation::Kind::kSend, peer.id, payload.size(), std::move(done));
  op->internal = id >= kFirstReservedId;
  peer.stream->Send(
      id, absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(header.data()), header.size()),
      payload, streamed, [this, op](absl::Status status) { FinishOperation(op, status); });
  QueueStreamWork(peer.id);
}

void MessengerImpl::OnStreamFrame(Peer& peer, const StreamConnection::Frame& frame) {
  if (peer.failed || peer.closing) {
    if (frame.streamed) peer.stream->DiscardPayload(frame.sequence);
    return;
  }
  if (frame.id == kHandshakeId) {
    if (frame.payload_size != 0) {
      FailPeer(peer, absl::UnavailableError("a handshake message with a payload"));
      return;
    }
    HandleHandshake({peer.id, std::vector<uint8_t>(frame.header.begin(), frame.header.end())});
    return;
  }
  // Nothing but the handshake before the connection is announced; no reserved ids after.
  if (!peer.announced || frame.id >= kFirstReservedId) {
    LOG_EVERY_N(WARNING, 100) << options_.name << ": " << peer.remote << " sent message "
                              << frame.id << (peer.announced ? "" : " before the handshake")
                              << "; closing the connection";
    if (frame.streamed) peer.stream->DiscardPayload(frame.sequence);
    FailPeer(peer, absl::UnavailableError(
                       absl::StrCat("protocol violation: message ", frame.id,
                                    peer.announced ? " is reserved" : " before the handshake")));
    return;
  }
  auto slot = handlers_.find(frame.id);
  if (slot == handlers_.end()) {
    LOG_EVERY_N(WARNING, 100) << options_.name << ": dropping message " << frame.id << " from "
                              << peer.remote << ": no handler for it";
    if (frame.streamed) peer.stream->DiscardPayload(frame.sequence);
    return;
  }
  counters_.messages_received.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<IncomingData::Rep> rep;
  if (frame.streamed) {
    rep = NewRep(peer.id, frame.payload_size, /*rendezvous=*/true, /*stream=*/true, nullptr);
    rep->stream_sequence = frame.sequence;
  } else if (!frame.eager.empty()) {
    rep = NewRep(peer.id, frame.eager.size(), /*rendezvous=*/false, /*stream=*/true,
                 const_cast<uint8_t*>(frame.eager.data()));
  }
  RunHandler(*slot->second, peer.id, frame.header, rep);
}

void MessengerImpl::DiscardStreamPayload(PeerId id, uint64_t sequence) {
  Peer* peer = FindPeer(id);
  if (peer == nullptr || peer->stream == nullptr) return;
  if (peer->stream->DiscardPayload(sequence)) QueueStreamWork(id);
}

void MessengerImpl::FailPeer(Peer& peer, absl::Status why) {
  if (peer.failed) return;
  peer.failed = true;
  peer.error = std::move(why);
  *peer.failure = peer.error;
  failed_peers_.push_back(peer.id);
}

void MessengerImpl::CloseStream(Peer& peer, const absl::Status& why) {
  if (peer.stream == nullptr) return;
  EpollRemove(epoll_fd_, peer.stream->fd());
  std::unique_ptr<StreamConnection> stream = std::move(peer.stream);
  stream->Fail(why);
  // Destroying closes the socket.
}

}  // namespace strata::store::transport
