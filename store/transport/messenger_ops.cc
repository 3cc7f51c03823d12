// MessengerImpl: sends, receives and the payload decisions of IncomingData.
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "store/transport/memory_region_rep.h"
#include "store/transport/messenger_impl.h"
#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport {
namespace {

using State = IncomingData::Rep::State;

void SetRegion(const MemoryRegion* region, ucp_request_param_t& param) {
  if (region == nullptr || region->rep().memh == nullptr) return;
  param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
  param.memh = region->rep().memh;
}

const char* KindName(int kind) {
  static const char* const kNames[] = {"send", "receive", "connect"};
  return kNames[kind];
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Operations.

MessengerImpl::Operation* MessengerImpl::NewOperation(Operation::Kind kind, PeerId peer,
                                                      size_t bytes, CompletionCallback done) {
  auto op = std::make_unique<Operation>();
  op->impl = this;
  op->kind = kind;
  op->peer = peer;
  op->bytes = bytes;
  op->started = absl::Now();
  op->done = std::move(done);
  if (Peer* p = FindPeer(peer); p != nullptr) op->peer_failure = p->failure;
  Operation* raw = op.get();
  operations_.emplace(raw, std::move(op));
  return raw;
}

void MessengerImpl::FinishOperation(Operation* op, ucs_status_t ucs_status) {
  if (orphans_.erase(op) != 0) return;  // completed already; UCX let go of it at last
  FinishOperation(
      op, ucx::UcsToStatus(ucs_status,
                           absl::StrCat(KindName(static_cast<int>(op->kind)), " of ", op->bytes,
                                        " bytes, peer ", static_cast<uint64_t>(op->peer))));
}

void MessengerImpl::FinishOperation(Operation* op, absl::Status status) {
  auto it = operations_.find(op);
  CHECK(it != operations_.end()) << "operation completed twice";
  std::unique_ptr<Operation> owned = std::move(it->second);
  operations_.erase(it);

  // An operation of a failed or force-closed peer reports why (UNAVAILABLE / CANCELLED),
  // also when UCX completed it CANCELLED because the force-close purged it — or OK, on the
  // unchecked data endpoint.
  if (owned->peer_failure != nullptr && !owned->peer_failure->ok() &&
      (!status.ok() || owned->unchecked)) {
    status = *owned->peer_failure;
  }
  if (owned->kind == Operation::Kind::kSend && !owned->internal) {
    if (status.ok()) {
      counters_.messages_sent.fetch_add(1, std::memory_order_relaxed);
      counters_.payload_bytes_sent.fetch_add(owned->bytes, std::memory_order_relaxed);
    } else {
      counters_.send_failures.fetch_add(1, std::memory_order_relaxed);
    }
  } else if (owned->kind == Operation::Kind::kReceive) {
    if (status.ok()) {
      counters_.payload_bytes_received.fetch_add(owned->bytes, std::memory_order_relaxed);
    } else {
      counters_.receive_failures.fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::move(owned->done)(std::move(status));
}

void MessengerImpl::OrphanOperations(PeerId peer, const absl::Status& why) {
  std::vector<Operation*> victims;
  for (const auto& [raw, op] : operations_) {
    // Never a receive: UCX keeps copying into its buffer (CMA, chunk by chunk) until the
    // copy finishes or fails, and a receive over CMA always does one or the other.
    if (op->peer == peer && op->unchecked && op->kind != Operation::Kind::kReceive) {
      victims.push_back(raw);
    }
  }
  for (Operation* raw : victims) {
    auto it = operations_.find(raw);
    std::unique_ptr<Operation>& op = orphans_[raw];
    op = std::move(it->second);
    operations_.erase(it);
    if (op->kind == Operation::Kind::kSend && !op->internal) {
      counters_.send_failures.fetch_add(1, std::memory_order_relaxed);
    } else if (op->kind == Operation::Kind::kReceive) {
      counters_.receive_failures.fetch_add(1, std::memory_order_relaxed);
    }
    std::move(op->done)(why);
  }
}

void MessengerImpl::TrackRequest(Operation* op, void* request) {
  if (request == nullptr) {
    FinishOperation(op, UCS_OK);
  } else if (UCS_PTR_IS_ERR(request)) {
    FinishOperation(op, UCS_PTR_STATUS(request));
  }
  // Otherwise UCX calls OnSendComplete / OnReceiveComplete later.
}

void MessengerImpl::OnSendComplete(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<Operation*>(user_data);
  ucp_request_free(request);
  op->impl->FinishOperation(op, status);
}

void MessengerImpl::OnReceiveComplete(void* request, ucs_status_t status, size_t length,
                                      void* user_data) {
  auto* op = static_cast<Operation*>(user_data);
  ucp_request_free(request);
  op->impl->FinishOperation(op, status);
}

// ---------------------------------------------------------------------------------------
// Sending.

void MessengerImpl::Send(PeerId peer, uint16_t id, absl::Span<const uint8_t> header,
                         absl::Span<const uint8_t> payload, SendOptions options,
                         CompletionCallback done) {
  if (header.size() > max_header_size()) {
    std::move(done)(absl::InvalidArgumentError(absl::StrCat(
        "header of ", header.size(), " bytes exceeds the transport's ", max_header_size())));
    return;
  }
  if (options.region != nullptr && !payload.empty() &&
      !options.region->Contains(payload.data(), payload.size())) {
    std::move(done)(absl::InvalidArgumentError("payload lies outside the given MemoryRegion"));
    return;
  }
  std::string owned_header(reinterpret_cast<const char*>(header.data()), header.size());
  if (OnProgressThread()) {
    SendNow(peer, id, std::move(owned_header), payload, options, std::move(done));
    return;
  }
  queue_->Push([this, peer, id, owned_header = std::move(owned_header), payload, options,
                done = std::move(done)](bool cancelled) mutable {
    if (cancelled) {
      std::move(done)(absl::CancelledError(absl::StrCat(options_.name, " is shutting down")));
      return;
    }
    SendNow(peer, id, std::move(owned_header), payload, options, std::move(done));
  });
}

void MessengerImpl::SendNow(PeerId peer_id, uint16_t id, std::string header,
                            absl::Span<const uint8_t> payload, SendOptions options,
                            CompletionCallback done) {
  absl::Status unusable = PeerUnusable(peer_id);
  if (unusable.ok() && shutting_down_) {
    unusable = absl::CancelledError(absl::StrCat(options_.name, " is shutting down"));
  }
  if (unusable.ok() && !FindPeer(peer_id)->announced) {
    unusable = absl::UnavailableError(
        absl::StrCat("peer ", static_cast<uint64_t>(peer_id), " is still connecting"));
  }
  if (!unusable.ok()) {
    counters_.send_failures.fetch_add(1, std::memory_order_relaxed);
    std::move(done)(std::move(unusable));
    return;
  }
  Peer& peer = *FindPeer(peer_id);
  if (peer.data != nullptr) {
    SendOnEndpoint(peer_id, peer.data->get(), id, std::move(header), payload, options,
                   std::move(done));
  } else {
    SendOnStream(peer, id, std::move(header), payload,
                 options.protocol == DataProtocol::kRendezvous, std::move(done));
  }
}

void MessengerImpl::SendOnEndpoint(PeerId peer_id, ucp_ep_h ep, uint16_t id, std::string header,
                                   absl::Span<const uint8_t> payload, SendOptions options,
                                   CompletionCallback done) {
  Operation* op = NewOperation(Operation::Kind::kSend, peer_id, payload.size(), std::move(done));
  op->header = std::move(header);
  op->internal = id >= kFirstReservedId;
  if (const Peer* peer = FindPeer(peer_id); peer != nullptr && peer->data != nullptr) {
    op->unchecked = ep == peer->data->get();
  }
  ucp_request_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                       UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.send = &MessengerImpl::OnSendComplete;
  param.user_data = op;
  param.datatype = ucp_dt_make_contig(1);
  // REPLY: the receiver learns which endpoint (peer) sent the message.
  param.flags = UCP_AM_SEND_FLAG_REPLY;
  if (options.protocol == DataProtocol::kEager) param.flags |= UCP_AM_SEND_FLAG_EAGER;
  if (options.protocol == DataProtocol::kRendezvous) param.flags |= UCP_AM_SEND_FLAG_RNDV;
  SetRegion(options.region, param);
  TrackRequest(op, ucp_am_send_nbx(ep, id, op->header.data(), op->header.size(), payload.data(),
                                   payload.size(), &param));
}

// ---------------------------------------------------------------------------------------
// Receiving.

ucs_status_t MessengerImpl::OnActiveMessage(void* arg, const void* header, size_t header_length,
                                            void* data, size_t length,
                                            const ucp_am_recv_param_t* param) {
  auto* slot = static_cast<HandlerSlot*>(arg);
  return slot->impl->Deliver(slot, header, header_length, data, length, param);
}

ucs_status_t MessengerImpl::Deliver(HandlerSlot* slot, const void* header, size_t header_length,
                                    void* data, size_t length, const ucp_am_recv_param_t* param) {
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  PeerId from = PeerId::kNone;
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) != 0) {
    auto it = peer_by_endpoint_.find(param->reply_ep);
    if (it != peer_by_endpoint_.end()) from = it->second;
  }
  if (from == PeerId::kNone) {
    LOG(WARNING) << options_.name << ": dropping message " << slot->id
                 << " from an unknown endpoint";
    return rendezvous ? UCS_ERR_REJECTED : UCS_OK;
  }
  if (slot->id < kFirstReservedId) {
    counters_.messages_received.fetch_add(1, std::memory_order_relaxed);
  }
  const absl::Span<const uint8_t> header_bytes =
      header_length == 0
          ? absl::Span<const uint8_t>()
          : absl::Span<const uint8_t>(static_cast<const uint8_t*>(header), header_length);
  if (length == 0 && !rendezvous) {
    slot->handler(from, header_bytes, IncomingData());
    return UCS_OK;
  }
  std::shared_ptr<IncomingData::Rep> rep = NewRep(from, length, rendezvous, /*stream=*/false, data);
  slot->handler(from, header_bytes, IncomingData(rep));
  return FinishHandler(rep);
}

std::shared_ptr<IncomingData::Rep> MessengerImpl::NewRep(PeerId from, size_t size, bool rendezvous,
                                                         bool stream, void* data) {
  auto rep = std::make_shared<IncomingData::Rep>();
  rep->impl = this;
  rep->queue = queue_;
  rep->progress_thread = progress_thread_id_;
  rep->peer = from;
  rep->size = size;
  rep->rendezvous = rendezvous;
  rep->stream = stream;
  absl::MutexLock lock(&rep->mu);
  rep->ucx_data = data;
  return rep;
}

void MessengerImpl::RunHandler(HandlerSlot& slot, PeerId from, absl::Span<const uint8_t> header,
                               const std::shared_ptr<IncomingData::Rep>& rep) {
  if (rep == nullptr) {
    slot.handler(from, header, IncomingData());
    return;
  }
  slot.handler(from, header, IncomingData(rep));
  FinishHandler(rep);
}

ucs_status_t MessengerImpl::FinishHandler(const std::shared_ptr<IncomingData::Rep>& rep) {
  absl::MutexLock lock(&rep->mu);
  rep->in_handler = false;
  switch (rep->state) {
    case State::kUndecided:
    case State::kQueued:
      // Kept for later: make the payload outlive this callback.
      if (!rep->rendezvous) {
        const auto* bytes = static_cast<const uint8_t*>(rep->ucx_data);
        rep->kept_bytes.assign(bytes, bytes + rep->size);
        rep->ucx_data = nullptr;
      }
      kept_.emplace(rep.get(), rep);
      return rep->rendezvous ? UCS_INPROGRESS : UCS_OK;
    case State::kReceiving:
      return UCS_INPROGRESS;
    case State::kDroppedInHandler:
      // A stream's payload is read and thrown away (the sender's send ends ABORTED); UCX
      // completes the rendezvous sender's request with this status.
      if (rep->stream && rep->rendezvous) DiscardStreamPayload(rep->peer, rep->stream_sequence);
      return rep->rendezvous ? UCS_ERR_REJECTED : UCS_OK;
    case State::kFinished:
    case State::kGone:
      return UCS_OK;
  }
  return UCS_OK;
}

void MessengerImpl::ReleaseKept(IncomingData::Rep& rep) {
  if (rep.stream && rep.rendezvous) DiscardStreamPayload(rep.peer, rep.stream_sequence);
  if (!rep.stream && rep.rendezvous && rep.ucx_data != nullptr) {
    ucp_am_data_release(worker_->get(), rep.ucx_data);
  }
  rep.ucx_data = nullptr;
  rep.kept_bytes.clear();
  rep.kept_bytes.shrink_to_fit();
  kept_.erase(&rep);
}

void MessengerImpl::AbandonKeptPayloads(PeerId peer, const absl::Status& why,
                                        std::vector<void*>& descriptors) {
  for (auto it = kept_.begin(); it != kept_.end();) {
    IncomingData::Rep& rep = *it->second;
    if (peer != PeerId::kNone && rep.peer != peer) {
      ++it;
      continue;
    }
    {
      absl::MutexLock lock(&rep.mu);
      if (rep.rendezvous && rep.ucx_data != nullptr) descriptors.push_back(rep.ucx_data);
      rep.ucx_data = nullptr;
      rep.kept_bytes.clear();
      rep.state = State::kGone;
      rep.gone_status = why;
    }
    kept_.erase(it++);
  }
}

void MessengerImpl::ReleaseDescriptors(std::vector<void*>& descriptors) {
  for (void* descriptor : descriptors) ucp_am_data_release(worker_->get(), descriptor);
  descriptors.clear();
}

void MessengerImpl::AcceptNow(const std::shared_ptr<IncomingData::Rep>& rep,
                              absl::Span<uint8_t> dest, CompletionCallback done,
                              const MemoryRegion* region) {
  absl::Status early;  // set when `done` runs without a UCX receive
  Operation* op = nullptr;
  void* descriptor = nullptr;
  {
    absl::MutexLock lock(&rep->mu);
    if (rep->state == State::kGone) {
      early = rep->gone_status;
    } else if (dest.size() < rep->size) {
      early = absl::InvalidArgumentError(absl::StrCat(
          "destination of ", dest.size(), " bytes cannot hold the ", rep->size, "-byte payload"));
      if (rep->in_handler) {
        rep->state = State::kDroppedInHandler;
      } else {
        rep->state = State::kFinished;
        ReleaseKept(*rep);
      }
    } else if (region != nullptr && !region->Contains(dest.data(), rep->size)) {
      early = absl::InvalidArgumentError("destination lies outside the given MemoryRegion");
      if (rep->in_handler) {
        rep->state = State::kDroppedInHandler;
      } else {
        rep->state = State::kFinished;
        ReleaseKept(*rep);
      }
    } else if (!rep->rendezvous) {
      const void* source = rep->in_handler ? rep->ucx_data : rep->kept_bytes.data();
      std::memcpy(dest.data(), source, rep->size);
      rep->state = State::kFinished;
      counters_.payload_bytes_received.fetch_add(rep->size, std::memory_order_relaxed);
      if (!rep->in_handler) ReleaseKept(*rep);
    } else if (rep->stream) {
      rep->state = State::kReceiving;
      kept_.erase(rep.get());
      Peer* peer = FindPeer(rep->peer);
      Operation* receive =
          peer == nullptr || peer->stream == nullptr
              ? nullptr
              : NewOperation(Operation::Kind::kReceive, rep->peer, rep->size, std::move(done));
      if (receive != nullptr &&
          peer->stream->ReceivePayload(rep->stream_sequence, dest.first(rep->size),
                                       [this, receive](absl::Status status) {
                                         FinishOperation(receive, std::move(status));
                                       })) {
        QueueStreamWork(rep->peer);
        return;
      }
      if (receive != nullptr) {
        // Not undecided on the connection any more (it failed meanwhile).
        FinishOperation(
            receive, absl::UnavailableError(absl::StrCat("peer ", static_cast<uint64_t>(rep->peer),
                                                         " is disconnected")));
        return;
      }
      early = absl::UnavailableError(
          absl::StrCat("peer ", static_cast<uint64_t>(rep->peer), " is disconnected"));
    } else {
      // UCX takes the descriptor over: it is no longer ours to release.
      descriptor = rep->ucx_data;
      rep->ucx_data = nullptr;
      rep->state = State::kReceiving;
      kept_.erase(rep.get());
      op = NewOperation(Operation::Kind::kReceive, rep->peer, rep->size, std::move(done));
      const Peer* peer = FindPeer(rep->peer);
      op->unchecked = peer != nullptr && peer->data != nullptr;
    }
  }
  if (op == nullptr) {
    if (!early.ok()) counters_.receive_failures.fetch_add(1, std::memory_order_relaxed);
    std::move(done)(std::move(early));
    return;
  }
  ucp_request_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_DATATYPE;
  param.cb.recv_am = &MessengerImpl::OnReceiveComplete;
  param.user_data = op;
  param.datatype = ucp_dt_make_contig(1);
  SetRegion(region, param);
  TrackRequest(op,
               ucp_am_recv_data_nbx(worker_->get(), descriptor, dest.data(), op->bytes, &param));
}

void MessengerImpl::DropNow(const std::shared_ptr<IncomingData::Rep>& rep) {
  absl::MutexLock lock(&rep->mu);
  if (rep->state == State::kGone) return;
  if (rep->in_handler) {
    rep->state = State::kDroppedInHandler;
    return;
  }
  rep->state = State::kFinished;
  ReleaseKept(*rep);
}

// ---------------------------------------------------------------------------------------
// Memory registration.

absl::StatusOr<std::unique_ptr<MemoryRegion>> MessengerImpl::RegisterMemory(void* data,
                                                                            size_t size) {
  if (data == nullptr || size == 0) {
    return absl::InvalidArgumentError("cannot register an empty or null range");
  }
  ucp_mem_map_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = data;
  params.length = size;
  auto rep = std::make_unique<MemoryRegion::Rep>();
  if (context_ == nullptr) {  // nothing to register with: the stream reads and writes directly
    return std::unique_ptr<MemoryRegion>(
        new MemoryRegion(static_cast<const uint8_t*>(data), size, std::move(rep)));
  }
  rep->context = context_;
  const ucs_status_t status = ucp_mem_map(rep->context->get(), &params, &rep->memh);
  if (status != UCS_OK) {
    return ucx::UcsToStatus(status, absl::StrCat("ucp_mem_map of ", size, " bytes"));
  }
  return std::unique_ptr<MemoryRegion>(
      new MemoryRegion(static_cast<const uint8_t*>(data), size, std::move(rep)));
}

}  // namespace strata::store::transport
