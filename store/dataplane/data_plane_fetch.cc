// DataPlaneServer: FETCH — leased blob bytes from the arena to a client, range by range.
#include <array>
#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"

#include "strata/store/dataplane/data_plane_server.h"

namespace strata::store::dataplane {

namespace wire = transport::wire;
using transport::IncomingData;
using transport::PeerId;

void DataPlaneServer::OnFetch(PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
  counters_.fetch_requests.fetch_add(1, std::memory_order_relaxed);
  const DoneTiming timing{&counters_.fetch_latency, std::chrono::steady_clock::now()};
  BeginRequest();
  absl::StatusOr<wire::FetchHeader> decoded = wire::DecodeFetchHeader(header);
  if (!decoded.ok()) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kFetchDone, RequestIdOf(header), decoded.status());
    return;
  }
  if (!data.is_rendezvous()) {
    StartFetch(from, *decoded, data.eager_bytes(), timing);
    return;
  }
  // A long range list (up to 64 KiB) may come by rendezvous: receive it first.
  const size_t expected = size_t{decoded->range_count} * wire::kFetchRangeBytes;
  if (data.size() != expected) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    SendDone(
        from, wire::MessageType::kFetchDone, decoded->request_id,
        absl::InvalidArgumentError(absl::StrCat("FETCH: a range list of ", data.size(),
                                                " bytes for ", decoded->range_count, " ranges")),
        timing);
    return;
  }
  auto list = std::make_shared<std::vector<uint8_t>>(expected);
  const absl::Span<uint8_t> dest = absl::MakeSpan(*list);
  data.Accept(dest, [this, from, fetch = *decoded, list, timing](absl::Status status) {
    if (!status.ok()) {
      SendDone(from, wire::MessageType::kFetchDone, fetch.request_id, std::move(status), timing);
      return;
    }
    StartFetch(from, fetch, *list, timing);
  });
}

void DataPlaneServer::StartFetch(PeerId from, const wire::FetchHeader& header,
                                 absl::Span<const uint8_t> payload, DoneTiming timing) {
  absl::StatusOr<std::vector<wire::ByteRange>> ranges = wire::DecodeFetchRanges(header, payload);
  if (!ranges.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kFetchDone, header.request_id, ranges.status(), timing);
    return;
  }
  if (stopping_.load(std::memory_order_acquire)) {
    SendDone(from, wire::MessageType::kFetchDone, header.request_id,
             absl::CancelledError("data plane stopping"));
    return;
  }
  std::shared_ptr<PeerFetches> fetches = FetchesWithRoom(from, header.request_id);
  if (fetches == nullptr) return;
  auto request = std::make_unique<FetchRequest>();
  request->request_id = header.request_id;
  request->lease_id = header.lease_id;
  request->timing = timing;
  request->blobs.push_back(
      radix::BlobKey{radix::PrefixHash{.hi = header.key.hi, .lo = header.key.lo}});
  request->ranges = *std::move(ranges);
  if (fetches->failed) request->status = absl::UnavailableError("client connection failed");
  fetches->requests.push_back(std::move(request));
  Pump(std::move(fetches));
}

std::shared_ptr<DataPlaneServer::PeerFetches> DataPlaneServer::FetchesWithRoom(
    PeerId from, uint64_t request_id) {
  std::shared_ptr<PeerFetches> fetches;
  if (auto it = fetches_.find(from); it != fetches_.end()) fetches = it->second;
  if (fetches != nullptr && fetches->requests.size() >= options_.max_fetches_per_peer) {
    SendDone(
        from, wire::MessageType::kFetchDone, request_id,
        absl::ResourceExhaustedError(absl::StrCat(
            fetches->requests.size(), " FETCH/READ requests of this client unfinished (at most ",
            options_.max_fetches_per_peer, ")")));
    return nullptr;
  }
  if (fetches == nullptr) {
    fetches = std::make_shared<PeerFetches>();
    fetches->peer = from;
    fetches_.emplace(from, fetches);
  }
  return fetches;
}

void DataPlaneServer::Pump(std::shared_ptr<PeerFetches> fetches) {
  if (fetches->pumping) {
    fetches->pump_again = true;
    return;
  }
  fetches->pumping = true;
  // Indexes, not iterators: a send may complete inside Send and re-enter (it then only sets
  // pump_again); requests are erased only by this loop.
  do {
    fetches->pump_again = false;
    const bool stopping = stopping_.load(std::memory_order_acquire);
    for (size_t i = 0; i < fetches->requests.size(); ++i) {
      FetchRequest& request = *fetches->requests[i];
      if (stopping && request.status.ok()) {
        request.status = absl::CancelledError("data plane stopping");
      }
      while (request.status.ok() && request.next < request.ranges.size() &&
             fetches->sends_in_flight < options_.max_sends_per_peer) {
        StartRangeSend(fetches, request);
      }
    }
    for (size_t i = 0; i < fetches->requests.size();) {
      if (!fetches->requests[i]->Finished()) {
        ++i;
        continue;
      }
      std::unique_ptr<FetchRequest> finished = std::move(fetches->requests[i]);
      fetches->requests.erase(fetches->requests.begin() + static_cast<ptrdiff_t>(i));
      // A READ's lease ends with its transfers (NOT_FOUND: it expired meanwhile).
      if (finished->owns_lease) (void)engine_->Release(finished->lease_id);
      // A READ's transfer failure counts as a READ failure, a FETCH's as a FETCH failure.
      std::atomic<uint64_t>& failures =
          finished->owns_lease ? counters_.read_failures : counters_.fetch_failures;
      if (fetches->failed) {
        // Nobody to answer.
        failures.fetch_add(1, std::memory_order_relaxed);
        EndRequest();
      } else {
        if (!finished->status.ok() && finished->owns_lease) {
          failures.fetch_add(1, std::memory_order_relaxed);
        }
        SendDone(fetches->peer, wire::MessageType::kFetchDone, finished->request_id,
                 std::move(finished->status), finished->timing);
      }
    }
  } while (fetches->pump_again);
  fetches->pumping = false;
  if (fetches->requests.empty() && fetches->sends_in_flight == 0) {
    auto it = fetches_.find(fetches->peer);
    if (it != fetches_.end() && it->second == fetches) fetches_.erase(it);
  }
}

void DataPlaneServer::StartRangeSend(const std::shared_ptr<PeerFetches>& fetches,
                                     FetchRequest& request) {
  const uint32_t position = request.next++;
  const uint32_t index = request.indices.empty() ? position : request.indices[position];
  const wire::ByteRange& range = request.ranges[position];
  const radix::BlobKey& blob = request.blobs[request.blobs.size() == 1 ? 0 : position];
  absl::StatusOr<core::HeldSpan> source = engine_->ReadSource(request.lease_id, blob, range.offset,
                                                              range.length, ScopeOf(fetches->peer));
  if (!source.ok()) {
    request.status = absl::Status(source.status().code(),
                                  absl::StrCat("range ", index, ": ", source.status().message()));
    return;
  }
  const absl::Span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(source->data()),
                                          source->size());
  const std::array<uint8_t, wire::kFetchDataHeaderBytes> header =
      wire::EncodeFetchDataHeader({.request_id = request.request_id,
                                   .index = index,
                                   .status = absl::StatusCode::kOk,
                                   .count = request.counts.empty() ? 1 : request.counts[position]});
  ++request.in_flight;
  ++fetches->sends_in_flight;
  counters_.sends_in_flight.fetch_add(1, std::memory_order_relaxed);
  // The HeldSpan rides in the completion: the bytes stay allocated until the send is over.
  messenger_->Send(
      fetches->peer, static_cast<uint16_t>(wire::MessageType::kFetchData), header, payload,
      {.protocol = transport::DataProtocol::kRendezvous, .region = arena_region_.get()},
      [this, fetches, request = &request, held = *std::move(source)](absl::Status status) mutable {
        const uint64_t bytes = held.size();
        held.Reset();
        OnRangeSent(fetches, *request, bytes, std::move(status));
      });
}

void DataPlaneServer::OnRangeSent(const std::shared_ptr<PeerFetches>& fetches,
                                  FetchRequest& request, uint64_t bytes, absl::Status status) {
  --request.in_flight;
  --fetches->sends_in_flight;
  counters_.sends_in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (status.ok()) {
    counters_.ranges_sent.fetch_add(1, std::memory_order_relaxed);
    counters_.bytes_out.fetch_add(bytes, std::memory_order_relaxed);
  } else if (request.status.ok()) {
    request.status = std::move(status);
  }
  Pump(fetches);
}

}  // namespace strata::store::dataplane
