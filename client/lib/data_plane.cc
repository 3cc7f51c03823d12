#include "client/lib/data_plane.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::client_internal {
namespace {

namespace transport = store::transport;
namespace wire = store::transport::wire;

constexpr uint16_t Id(wire::MessageType type) { return static_cast<uint16_t>(type); }

}  // namespace

absl::StatusOr<std::unique_ptr<DataPlane>> DataPlane::Create(DataPlaneOptions options) {
  std::unique_ptr<DataPlane> plane(new DataPlane(std::move(options)));
  if (absl::Status s = plane->Init(); !s.ok()) return s;
  return plane;
}

absl::Status DataPlane::Init() {
  transport::MessengerOptions options;
  options.name = "strata-client";
  options.transports = options_.transports;
  options.on_peer_failed = [this](PeerId peer, absl::Status status) { OnPeerFailed(peer, status); };
  auto messenger = transport::Messenger::Create(std::move(options));
  if (!messenger.ok()) return messenger.status();
  messenger_ = std::move(messenger).value();
  absl::Status s = messenger_->RegisterHandler(
      Id(wire::MessageType::kFetchData),
      [this](PeerId, absl::Span<const uint8_t> header, transport::IncomingData data) {
        OnFetchData(header, std::move(data));
      });
  if (s.ok()) {
    s = messenger_->RegisterHandler(
        Id(wire::MessageType::kReadGrant),
        [this](PeerId, absl::Span<const uint8_t> header, transport::IncomingData data) {
          OnReadGrant(header, std::move(data));
        });
  }
  if (s.ok()) {
    s = messenger_->RegisterHandler(
        Id(wire::MessageType::kPutResult),
        [this](PeerId, absl::Span<const uint8_t> header, transport::IncomingData data) {
          OnPutResult(header, std::move(data));
        });
  }
  if (s.ok()) {
    s = messenger_->RegisterHandler(
        Id(wire::MessageType::kFetchDone),
        [this](PeerId, absl::Span<const uint8_t> header, transport::IncomingData data) {
          OnFetchDone(header, std::move(data));
        });
  }
  return s;
}

DataPlane::~DataPlane() { messenger_.reset(); }

absl::StatusOr<DataPlane::PeerId> DataPlane::Connect(
    const std::string& address, absl::Time deadline,
    absl::FunctionRef<absl::StatusOr<std::string>()> credential) {
  absl::MutexLock connect_lock(&connect_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = peers_.find(address); it != peers_.end()) return it->second;
  }
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError(
        absl::StrCat("deadline passed before connecting to the data plane at ", address));
  }
  absl::StatusOr<std::string> presented = credential();
  if (!presented.ok()) return presented.status();
  auto peer = messenger_->Connect(address, std::min(left, options_.connect_timeout), *presented);
  if (!peer.ok()) {
    return absl::Status(peer.status().code(),
                        absl::StrCat("data plane at ", address, ": ", peer.status().message()));
  }
  absl::MutexLock lock(&mu_);
  peers_[address] = *peer;
  peer_addresses_[*peer] = address;
  return *peer;
}

uint64_t DataPlane::AddRequest(std::shared_ptr<Request> request) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_request_id_++;
  requests_.emplace(id, std::move(request));
  return id;
}

std::shared_ptr<DataPlane::Request> DataPlane::FindRequest(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second;
}

std::shared_ptr<DataPlane::Request> DataPlane::TakeRequest(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = requests_.find(id);
  if (it == requests_.end()) return nullptr;
  std::shared_ptr<Request> request = std::move(it->second);
  requests_.erase(it);
  ForgetLocked(*request);
  return request;
}

void DataPlane::ForgetLocked(const Request& request) {
  if (request.kind != Kind::kFetch) return;
  auto it = fetches_in_flight_.find(request.peer);
  if (it == fetches_in_flight_.end()) return;  // the peer failed: its count went with it
  if (--it->second == 0) fetches_in_flight_.erase(it);
}

absl::Status DataPlane::TakeFetchSlot(PeerId peer, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto slot_free = [this, peer]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = fetches_in_flight_.find(peer);
    return it == fetches_in_flight_.end() || it->second < options_.max_fetches_per_peer;
  };
  if (!mu_.AwaitWithDeadline(absl::Condition(&slot_free), deadline)) {
    return absl::DeadlineExceededError(
        "deadline passed while waiting to send READ (the connection has its limit in flight)");
  }
  ++fetches_in_flight_[peer];
  return absl::OkStatus();
}

void DataPlane::SendRequest(PeerId peer, uint64_t id, uint16_t type,
                            absl::Span<const uint8_t> header,
                            std::shared_ptr<std::vector<uint8_t>> payload) {
  // The payload (ranges) is borrowed by the messenger until `done`; long lists go by
  // rendezvous.
  const auto protocol = payload->size() <= 8192 ? transport::DataProtocol::kEager
                                                : transport::DataProtocol::kRendezvous;
  const char* what = type == Id(wire::MessageType::kRead) ? "READ: " : "request: ";
  messenger_->Send(
      peer, type, header, *payload, transport::SendOptions{protocol, nullptr},
      [this, id, payload, what](absl::Status status) {
        if (status.ok()) return;
        // Never reached the node: no FETCH_DONE will come.
        if (std::shared_ptr<Request> r = TakeRequest(id)) {
          r->group->RequestEnded(absl::Status(status.code(), absl::StrCat(what, status.message())));
        }
      });
}

absl::Status DataPlane::StartRead(PeerId peer, const wire::ReadHeader& header,
                                  std::vector<uint8_t> payload,
                                  std::vector<absl::Span<uint8_t>> dests,
                                  absl::Span<uint64_t> grant, uint32_t first_item,
                                  const std::shared_ptr<TransferGroup>& group,
                                  std::shared_ptr<const MemoryRegion> region, absl::Time deadline) {
  STRATA_RETURN_IF_ERROR(TakeFetchSlot(peer, deadline));
  auto request = std::make_shared<Request>();
  request->kind = Kind::kFetch;
  request->peer = peer;
  request->group = group;
  request->first_item = first_item;
  request->dests = std::move(dests);
  request->grant = grant;
  request->region = std::move(region);
  group->NotePeer(static_cast<uint64_t>(peer));
  group->RequestStarted();
  const uint64_t id = AddRequest(std::move(request));  // holds the slot taken above

  wire::ReadHeader with_id = header;
  with_id.request_id = id;
  const auto header_bytes = wire::EncodeReadHeader(with_id);
  SendRequest(peer, id, Id(wire::MessageType::kRead), header_bytes,
              std::make_shared<std::vector<uint8_t>>(std::move(payload)));
  return absl::OkStatus();
}

void DataPlane::OnFetchData(absl::Span<const uint8_t> header, transport::IncomingData data) {
  auto decoded = wire::DecodeFetchDataHeader(header);
  if (!decoded.ok()) {
    LOG(WARNING) << "strata client: dropping a malformed FETCH_DATA: " << decoded.status();
    return;  // `data` drops on destruction
  }
  std::shared_ptr<Request> request = FindRequest(decoded->request_id);
  if (request == nullptr || request->kind != Kind::kFetch) return;
  // A failed range: the node's FETCH_DONE carries the status and its message.
  if (decoded->status != absl::StatusCode::kOk) return;
  TransferGroup& group = *request->group;
  const size_t first = decoded->index;
  const size_t count = decoded->count;
  if (first >= request->dests.size() || count > request->dests.size() - first) {
    group.Fail(
        absl::InternalError(absl::StrCat("FETCH_DATA names ranges ", first, "..", first + count - 1,
                                         " of a request of ", request->dests.size())));
    return;
  }
  // Several items in one payload: their memory must be contiguous (the READ allowed
  // merging only where it is).
  const absl::Span<uint8_t> head = request->dests[first];
  size_t total = head.size();
  for (size_t k = first + 1; k < first + count; ++k) {
    if (request->dests[k].data() != head.data() + total) {
      group.Fail(absl::InternalError(absl::StrCat("FETCH_DATA merged ranges ", first, "..",
                                                  first + count - 1,
                                                  " whose destinations are not contiguous")));
      return;
    }
    total += request->dests[k].size();
  }
  const absl::Span<uint8_t> dest(head.data(), total);
  if (data.size() != dest.size()) {
    group.Fail(
        absl::InternalError(absl::StrCat("FETCH_DATA ranges ", first, "..", first + count - 1, ": ",
                                         data.size(), " bytes, asked for ", dest.size())));
    return;
  }
  if (!group.TryBeginTransfer()) return;
  std::vector<std::pair<uint32_t, uint64_t>> items;
  items.reserve(count);
  for (size_t k = first; k < first + count; ++k) {
    items.emplace_back(request->first_item + static_cast<uint32_t>(k), request->dests[k].size());
  }
  data.Accept(
      dest,
      [group = request->group, region = request->region,
       items = std::move(items)](absl::Status status) {
        if (status.ok()) {
          for (const auto& [item, bytes] : items) group->ItemLanded(item, bytes);
        }
        group->EndTransfer(status);
      },
      request->region.get());
}

void DataPlane::OnReadGrant(absl::Span<const uint8_t> header, transport::IncomingData data) {
  auto decoded = wire::DecodeReadGrantHeader(header);
  if (!decoded.ok()) {
    LOG(WARNING) << "strata client: dropping a malformed READ_GRANT: " << decoded.status();
    return;  // `data` drops on destruction
  }
  std::shared_ptr<Request> request = FindRequest(decoded->request_id);
  if (request == nullptr || request->kind != Kind::kFetch) return;
  TransferGroup& group = *request->group;
  const absl::Span<uint8_t> dest(reinterpret_cast<uint8_t*>(request->grant.data()),
                                 request->grant.size() * sizeof(uint64_t));
  if (decoded->checksum_count != request->grant.size() || data.size() != dest.size()) {
    group.Fail(absl::InternalError(
        absl::StrCat("READ_GRANT carries ", decoded->checksum_count, " checksums in ", data.size(),
                     " bytes; the read covers ", request->grant.size(), " chunks")));
    return;
  }
  if (!group.TryBeginTransfer()) return;
  data.Accept(dest, [group = request->group](absl::Status status) {
    if (status.ok()) group->ItemLanded(kGrantItem, 0);
    group->EndTransfer(status);
  });
}

void DataPlane::StartPutBlob(PeerId peer, wire::PutHeader header, std::vector<uint8_t> metadata,
                             absl::Span<const uint8_t> bytes, size_t piece, uint64_t window,
                             const std::shared_ptr<TransferGroup>& group,
                             std::shared_ptr<const MemoryRegion> region,
                             std::shared_ptr<PutOutcome> outcome) {
  if (!group->TryBeginTransfer()) return;  // the group already failed: send nothing
  auto request = std::make_shared<Request>();
  request->kind = Kind::kPutBlob;
  request->peer = peer;
  request->group = group;
  request->put_bytes = bytes.size();
  request->region = std::move(region);
  request->source = bytes;
  request->piece = piece;
  request->outcome = std::move(outcome);
  group->NotePeer(static_cast<uint64_t>(peer));
  group->RequestStarted();
  const uint64_t id = AddRequest(std::move(request));
  header.request_id = id;
  const auto encoded = wire::EncodePutHeader(header);
  auto payload = std::make_shared<std::vector<uint8_t>>(std::move(metadata));
  const auto protocol = payload->size() <= 8192 ? transport::DataProtocol::kEager
                                                : transport::DataProtocol::kRendezvous;
  messenger_->Send(peer, Id(wire::MessageType::kPut), encoded, *payload,
                   transport::SendOptions{protocol, nullptr},
                   [this, id, group, payload](absl::Status status) {
                     // Never reached the node: no PUT_RESULT will come.
                     if (!status.ok()) {
                       if (std::shared_ptr<Request> r = TakeRequest(id)) {
                         r->group->RequestEnded(
                             absl::Status(status.code(), absl::StrCat("PUT: ", status.message())));
                       }
                     }
                     group->EndTransfer(status);
                   });
  SendPieces(id, std::min<uint64_t>(window, bytes.size()));
}

void DataPlane::SendPieces(uint64_t id, uint64_t upto) {
  std::shared_ptr<Request> request;
  uint64_t from = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = requests_.find(id);
    if (it == requests_.end()) return;  // ended: nothing more to send
    request = it->second;
    from = request->claimed;
    if (upto <= from) return;
    request->claimed = upto;
  }
  for (uint64_t offset = from; offset < upto; offset += request->piece) {
    if (!request->group->TryBeginTransfer()) return;
    const uint64_t size = std::min<uint64_t>(request->piece, upto - offset);
    const auto header = wire::EncodePutDataHeader(
        wire::PutDataHeader{.request_id = 0, .put_id = id, .offset = offset, .of_put = true});
    std::shared_ptr<TransferGroup> group = request->group;
    messenger_->Send(
        request->peer, Id(wire::MessageType::kPutData), header,
        request->source.subspan(offset, size),
        transport::SendOptions{transport::DataProtocol::kRendezvous, request->region.get()},
        [this, id, group, region = request->region](absl::Status status) {
          // ABORTED: the node dropped the piece (the key exists, or the put failed: its
          // PUT_RESULT says which). Any other failure: the put cannot complete.
          if (!status.ok() && status.code() != absl::StatusCode::kAborted) {
            if (std::shared_ptr<Request> r = TakeRequest(id)) {
              r->group->RequestEnded(
                  absl::Status(status.code(), absl::StrCat("PUT_DATA: ", status.message())));
            }
          }
          group->EndTransfer(status.code() == absl::StatusCode::kAborted ? absl::OkStatus()
                                                                         : status);
        });
  }
}

void DataPlane::OnPutResult(absl::Span<const uint8_t> header, transport::IncomingData data) {
  data.Drop();
  absl::StatusOr<wire::PutResultHeader> decoded = wire::DecodePutResult(header);
  if (!decoded.ok()) {
    LOG(WARNING) << "strata client: dropping a malformed PUT_RESULT: " << decoded.status();
    return;
  }
  if (decoded->stage == wire::PutResultHeader::Stage::kGranted) {
    std::shared_ptr<Request> request = FindRequest(decoded->request_id);
    if (request == nullptr || request->kind != Kind::kPutBlob) return;
    SendPieces(decoded->request_id, request->put_bytes);
    return;
  }
  std::shared_ptr<Request> request = TakeRequest(decoded->request_id);
  if (request == nullptr) return;
  if (request->kind != Kind::kPutBlob) {
    request->group->RequestEnded(
        absl::InternalError("the node answered a request with PUT_RESULT"));
    return;
  }
  if (decoded->status.ok()) {
    *request->outcome = PutOutcome{
        .key = radix::BlobKey{radix::PrefixHash{.hi = decoded->key.hi, .lo = decoded->key.lo}},
        .exists = decoded->exists,
        .indexed_pages = decoded->indexed_pages};
    request->group->ItemLanded(0, request->put_bytes);
  }
  request->group->RequestEnded(decoded->status);
}

void DataPlane::OnFetchDone(absl::Span<const uint8_t> header, transport::IncomingData data) {
  data.Drop();
  auto decoded = wire::DecodeDone(wire::MessageType::kFetchDone, header);
  if (!decoded.ok()) {
    LOG(WARNING) << "strata client: dropping a malformed FETCH_DONE: " << decoded.status();
    return;
  }
  std::shared_ptr<Request> request = TakeRequest(decoded->request_id);
  if (request == nullptr) return;
  if (request->kind != Kind::kFetch) {
    request->group->RequestEnded(absl::InternalError("the node answered a PUT with FETCH_DONE"));
    return;
  }
  request->group->RequestEnded(decoded->status);
}

void DataPlane::OnPeerFailed(PeerId peer, const absl::Status& status) {
  std::vector<std::shared_ptr<Request>> failed;
  std::string address;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = peer_addresses_.find(peer); it != peer_addresses_.end()) {
      address = it->second;
      peers_.erase(address);
      peer_addresses_.erase(it);
    }
    fetches_in_flight_.erase(peer);
    for (auto it = requests_.begin(); it != requests_.end();) {
      if (it->second->peer == peer) {
        failed.push_back(std::move(it->second));
        requests_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  const absl::Status why = absl::UnavailableError(
      absl::StrCat("data plane connection to ", address, " failed: ", status.message()));
  for (const std::shared_ptr<Request>& request : failed) request->group->RequestEnded(why);
}

void DataPlane::Abandon(const std::shared_ptr<TransferGroup>& group) {
  group->Cancel();
  std::vector<std::shared_ptr<Request>> forgotten;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = requests_.begin(); it != requests_.end();) {
      if (it->second->group == group) {
        ForgetLocked(*it->second);
        forgotten.push_back(std::move(it->second));
        requests_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (const std::shared_ptr<Request>& request : forgotten) {
    request->group->RequestEnded(absl::CancelledError("abandoned"));
  }
  if (group->WaitIdle(absl::Now() + options_.abandon_grace)) return;
  // Something still borrows the caller's memory: close the connections so the transport
  // fails it, and wait for that (the messenger always runs every completion).
  const std::vector<uint64_t> peer_ids = group->peers();
  LOG(WARNING) << "strata client: transfers still in flight " << options_.abandon_grace
               << " after giving up; disconnecting " << peer_ids.size() << " peer(s)";
  for (uint64_t id : peer_ids) {
    const PeerId peer = static_cast<PeerId>(id);
    {
      absl::MutexLock lock(&mu_);
      if (auto it = peer_addresses_.find(peer); it != peer_addresses_.end()) {
        peers_.erase(it->second);
        peer_addresses_.erase(it);
      }
    }
    messenger_->Disconnect(peer);
  }
  group->WaitIdle(absl::InfiniteFuture());
}

absl::StatusOr<std::unique_ptr<DataPlane::MemoryRegion>> DataPlane::Register(void* data,
                                                                             size_t size) {
  return messenger_->RegisterMemory(data, size);
}

absl::StatusOr<std::string> DataPlane::Describe(PeerId peer) {
  return messenger_->DescribePeer(peer);
}

store::transport::MessengerStats DataPlane::stats() const { return messenger_->stats(); }

}  // namespace strata::client_internal
