// DataPlaneServer: PUT_DATA — a client's bytes straight into a pending put's extent — and
// PUT, a put in one round trip (begin, the bytes, verify and commit; wire.h).
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "store/dataplane/wire_convert.h"
#include "strata/radix/namespace.h"
#include "strata/store/dataplane/data_plane_server.h"

namespace strata::store::dataplane {

namespace wire = transport::wire;
using internal::BitsOf;
using transport::IncomingData;
using transport::PeerId;

void DataPlaneServer::OnPutData(PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
  absl::StatusOr<wire::PutDataHeader> decoded = wire::DecodePutDataHeader(header);
  if (decoded.ok() && decoded->of_put) {
    OnTripData(from, *decoded, std::move(data));  // a PUT's piece: the PUT is the request
    return;
  }
  counters_.put_requests.fetch_add(1, std::memory_order_relaxed);
  const DoneTiming timing{&counters_.put_latency, std::chrono::steady_clock::now()};
  BeginRequest();
  if (!decoded.ok()) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kPutDone, RequestIdOf(header), decoded.status());
    return;
  }
  const wire::PutDataHeader put = *decoded;
  absl::StatusOr<core::HeldSpan> target = engine_->PutTarget(put.put_id, ScopeOf(from));
  if (!target.ok()) {
    data.Drop();
    SendDone(from, wire::MessageType::kPutDone, put.request_id, target.status(), timing);
    return;
  }
  const uint64_t size = data.size();
  if (put.offset > target->size() || size > target->size() - put.offset) {
    data.Drop();
    SendDone(
        from, wire::MessageType::kPutDone, put.request_id,
        absl::OutOfRangeError(absl::StrCat("PUT_DATA: bytes [", put.offset, ", ", put.offset + size,
                                           ") outside the blob's ", target->size(), " bytes")),
        timing);
    return;
  }
  const absl::Span<uint8_t> dest(reinterpret_cast<uint8_t*>(target->data()) + put.offset, size);
  // The HeldSpan rides in the completion: the extent stays allocated until the bytes landed,
  // and is released before PUT_DONE so a CommitPut that follows it is not refused.
  data.Accept(
      dest,
      [this, from, put, size, timing, held = *std::move(target)](absl::Status status) mutable {
        if (status.ok()) status = engine_->PutReceived(put.put_id, put.offset, size, ScopeOf(from));
        held.Reset();
        if (status.ok()) counters_.bytes_in.fetch_add(size, std::memory_order_relaxed);
        SendDone(from, wire::MessageType::kPutDone, put.request_id, std::move(status), timing);
      },
      arena_region_.get());
}

namespace {

// Pieces of one PUT that may wait for its begin (its payload still landing).
constexpr size_t kMaxWaitingPieces = 64;

}  // namespace

void DataPlaneServer::OnPut(PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
  counters_.put_requests.fetch_add(1, std::memory_order_relaxed);
  const DoneTiming timing{&counters_.put_latency, std::chrono::steady_clock::now()};
  BeginRequest();
  absl::StatusOr<wire::PutHeader> decoded = wire::DecodePutHeader(header);
  if (!decoded.ok()) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return RefusePut(from, RequestIdOf(header), decoded.status(), timing);
  }
  const wire::PutHeader put = *decoded;
  auto refuse = [&](absl::Status status) {
    data.Drop();
    RefusePut(from, put.request_id, std::move(status), timing);
  };
  if (stopping_.load(std::memory_order_acquire)) {
    return refuse(absl::CancelledError("data plane stopping"));
  }
  const uint64_t expected = wire::PutPayloadBytes(put);
  if (data.size() != expected) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return refuse(absl::InvalidArgumentError(absl::StrCat(
        "PUT: a payload of ", data.size(), " bytes, the header announces ", expected)));
  }
  const TripKey key{from, put.request_id};
  if (trips_.contains(key)) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("PUT: request ", put.request_id, " is in progress on this connection")));
  }
  if (trips_per_peer_[from] >= options_.max_puts_per_peer) {
    return refuse(absl::ResourceExhaustedError(
        absl::StrCat("PUT: ", options_.max_puts_per_peer,
                     " puts of this connection are unfinished (max_puts_per_peer)")));
  }
  if (put_metadata_receiving_ + expected > options_.max_put_metadata_bytes) {
    return refuse(absl::ResourceExhaustedError(absl::StrCat(
        "PUT: ", put_metadata_receiving_, " bytes of put metadata are arriving; ", expected,
        " more would pass max_put_metadata_bytes (", options_.max_put_metadata_bytes, ")")));
  }
  auto trip = std::make_shared<TripPut>();
  trip->peer = from;
  trip->request_id = put.request_id;
  trip->bytes = put.bytes;
  trip->metadata = expected;
  trip->timing = timing;
  put_metadata_receiving_ += expected;
  ++trips_per_peer_[from];
  trips_.emplace(key, trip);
  if (!data.is_rendezvous()) {
    BeginTrip(trip, put, data.eager_bytes());
    return;
  }
  auto payload = std::make_shared<std::vector<uint8_t>>(expected);
  const absl::Span<uint8_t> dest = absl::MakeSpan(*payload);
  data.Accept(dest, [this, trip, put, payload](absl::Status status) {
    if (trip->finished) return;  // the peer failed meanwhile
    if (!status.ok()) return FinishTrip(trip, std::move(status));
    BeginTrip(trip, put, *payload);
  });
}

void DataPlaneServer::BeginTrip(const std::shared_ptr<TripPut>& trip, const wire::PutHeader& header,
                                absl::Span<const uint8_t> payload) {
  put_metadata_receiving_ -= trip->metadata;
  trip->metadata = 0;
  absl::StatusOr<wire::PutPayload> decoded = wire::DecodePutPayload(header, payload);
  if (!decoded.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return FinishTrip(trip, decoded.status());
  }
  absl::StatusOr<radix::Namespace> ns = internal::NamespaceOf(decoded->ns_encoding, "PUT");
  if (!ns.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return FinishTrip(trip, ns.status());
  }
  absl::StatusOr<core::BeginPutReply> begun =
      engine_->BeginPut(*ns, internal::PutRequestOf(header, *decoded), ScopeOf(trip->peer));
  if (!begun.ok()) return FinishTrip(trip, begun.status());
  trip->key = begun->key;
  if (begun->exists) return FinishTrip(trip, absl::OkStatus(), /*exists=*/true);
  trip->put_id = begun->put_id;
  SendPutResult(trip->peer,
                wire::PutResultHeader{.request_id = trip->request_id,
                                      .key = BitsOf(trip->key),
                                      .stage = wire::PutResultHeader::Stage::kGranted},
                DoneTiming{});
  std::vector<std::pair<wire::PutDataHeader, IncomingData>> waiting = std::move(trip->waiting);
  for (auto& [piece, data] : waiting) {
    if (trip->finished) {
      data.Drop();
      continue;
    }
    ReceivePiece(trip, piece, std::move(data));
  }
}

void DataPlaneServer::OnTripData(PeerId from, const wire::PutDataHeader& header,
                                 IncomingData data) {
  auto it = trips_.find(TripKey{from, header.put_id});
  if (it == trips_.end()) {
    // A PUT that ended (refused, exists, failed): its remaining pieces are dropped.
    data.Drop();
    return;
  }
  std::shared_ptr<TripPut> trip = it->second;
  if (trip->put_id != 0) return ReceivePiece(trip, header, std::move(data));
  if (trip->waiting.size() >= kMaxWaitingPieces) {
    data.Drop();
    return FinishTrip(trip, absl::ResourceExhaustedError(
                                absl::StrCat("PUT: more than ", kMaxWaitingPieces,
                                             " PUT_DATA pieces arrived before the put began")));
  }
  trip->waiting.emplace_back(header, std::move(data));
}

void DataPlaneServer::ReceivePiece(const std::shared_ptr<TripPut>& trip,
                                   const wire::PutDataHeader& header, IncomingData data) {
  absl::StatusOr<core::HeldSpan> target = engine_->PutTarget(trip->put_id);
  if (!target.ok()) {
    data.Drop();
    return FinishTrip(trip, target.status());
  }
  const uint64_t size = data.size();
  if (header.offset > target->size() || size > target->size() - header.offset) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return FinishTrip(trip, absl::OutOfRangeError(absl::StrCat(
                                "PUT_DATA: bytes [", header.offset, ", ", header.offset + size,
                                ") outside the blob's ", target->size(), " bytes")));
  }
  const absl::Span<uint8_t> dest(reinterpret_cast<uint8_t*>(target->data()) + header.offset, size);
  ++trip->receiving;
  // The HeldSpan rides in the completion: the extent stays allocated until the bytes landed,
  // and is released before the commit (which refuses a put with a HeldSpan alive).
  data.Accept(
      dest,
      [this, trip, offset = header.offset, size,
       held = *std::move(target)](absl::Status status) mutable {
        --trip->receiving;
        if (status.ok() && !trip->finished) {
          status = engine_->PutReceived(trip->put_id, offset, size);
        }
        held.Reset();
        if (trip->finished) return;
        if (!status.ok()) return FinishTrip(trip, std::move(status));
        counters_.bytes_in.fetch_add(size, std::memory_order_relaxed);
        trip->landed += size;
        MaybeCommit(trip);
      },
      arena_region_.get());
}

void DataPlaneServer::MaybeCommit(const std::shared_ptr<TripPut>& trip) {
  if (trip->finished || trip->receiving > 0 || trip->landed < trip->bytes) return;
  // Verifies every chunk (CPU over the blob's bytes, on this thread) and links the blob.
  absl::StatusOr<core::CommitPutReply> committed = engine_->CommitPut(trip->put_id);
  if (!committed.ok()) return FinishTrip(trip, committed.status());
  FinishTrip(trip, absl::OkStatus(), /*exists=*/false, committed->indexed_pages);
}

void DataPlaneServer::EndTrip(const std::shared_ptr<TripPut>& trip, bool abort) {
  trip->finished = true;
  put_metadata_receiving_ -= trip->metadata;
  trip->metadata = 0;
  // After a DATA_LOSS, CommitPut aborted the put already (NOT_FOUND here then).
  if (abort && trip->put_id != 0) (void)engine_->AbortPut(trip->put_id);
  for (auto& [piece, data] : trip->waiting) data.Drop();
  trip->waiting.clear();
  trips_.erase(TripKey{trip->peer, trip->request_id});
  if (auto count = trips_per_peer_.find(trip->peer);
      count != trips_per_peer_.end() && --count->second == 0) {
    trips_per_peer_.erase(count);
  }
}

void DataPlaneServer::FinishTrip(const std::shared_ptr<TripPut>& trip, absl::Status status,
                                 bool exists, uint32_t indexed_pages) {
  if (trip->finished) return;
  EndTrip(trip, /*abort=*/!status.ok());
  if (!status.ok()) {
    counters_.put_failures.fetch_add(1, std::memory_order_relaxed);
    VLOG(1) << options_.name << ": PUT " << trip->request_id << " of peer "
            << static_cast<uint64_t>(trip->peer) << " failed: " << status;
  }
  SendPutResult(trip->peer,
                wire::PutResultHeader{.request_id = trip->request_id,
                                      .status = std::move(status),
                                      .key = BitsOf(trip->key),
                                      .indexed_pages = indexed_pages,
                                      .stage = wire::PutResultHeader::Stage::kFinal,
                                      .exists = exists},
                trip->timing);
}

void DataPlaneServer::RefusePut(PeerId peer, uint64_t request_id, absl::Status status,
                                DoneTiming timing) {
  counters_.put_failures.fetch_add(1, std::memory_order_relaxed);
  VLOG(1) << options_.name << ": PUT " << request_id << " of peer " << static_cast<uint64_t>(peer)
          << " refused: " << status;
  SendPutResult(peer, wire::PutResultHeader{.request_id = request_id, .status = std::move(status)},
                timing);
}

void DataPlaneServer::SendPutResult(PeerId peer, const wire::PutResultHeader& result,
                                    DoneTiming timing) {
  const bool final = result.stage == wire::PutResultHeader::Stage::kFinal;
  if (stopping_.load(std::memory_order_acquire)) {
    counters_.replies_failed.fetch_add(1, std::memory_order_relaxed);
    if (final) EndRequest();
    return;
  }
  const std::vector<uint8_t> header = wire::EncodePutResult(result);
  messenger_->Send(peer, static_cast<uint16_t>(wire::MessageType::kPutResult), header, {}, {},
                   [this, final, timing](absl::Status sent) {
                     if (!sent.ok()) {
                       counters_.replies_failed.fetch_add(1, std::memory_order_relaxed);
                     }
                     if (!final) return;
                     if (timing.histogram != nullptr) {
                       timing.histogram->Record(
                           absl::FromChrono(std::chrono::steady_clock::now() - timing.received));
                     }
                     EndRequest();
                   });
}

void DataPlaneServer::ForgetTrips(PeerId peer) {
  std::vector<std::shared_ptr<TripPut>> mine;
  for (const auto& [key, trip] : trips_) {
    if (key.first == peer) mine.push_back(trip);
  }
  for (const std::shared_ptr<TripPut>& trip : mine) {
    EndTrip(trip, /*abort=*/true);
    counters_.put_failures.fetch_add(1, std::memory_order_relaxed);
    EndRequest();  // no PUT_RESULT goes to a failed peer
  }
  if (!mine.empty()) {
    LOG(INFO) << options_.name << ": peer " << static_cast<uint64_t>(peer) << " failed with "
              << mine.size() << " PUTs unfinished; their puts are aborted";
  }
}

}  // namespace strata::store::dataplane
