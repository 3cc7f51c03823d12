// DataPlaneServer: READ — a read in one round trip: the lease, the checksums (READ_GRANT)
// and the bytes (FETCH_DATA), then FETCH_DONE; the lease ends with the transfers.
#include <bit>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "store/dataplane/wire_convert.h"
#include "strata/radix/namespace.h"
#include "strata/store/dataplane/data_plane_server.h"

namespace strata::store::dataplane {

namespace wire = transport::wire;
using transport::IncomingData;
using transport::PeerId;

// READ_GRANT's checksums go out as the vector's own bytes: u64 little-endian on the wire.
static_assert(std::endian::native == std::endian::little);

void DataPlaneServer::OnRead(PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
  counters_.read_requests.fetch_add(1, std::memory_order_relaxed);
  const DoneTiming timing{&counters_.read_latency, std::chrono::steady_clock::now(),
                          /*read=*/true};
  BeginRequest();
  absl::StatusOr<wire::ReadHeader> decoded = wire::DecodeReadHeader(header);
  if (!decoded.ok()) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    counters_.read_failures.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kFetchDone, RequestIdOf(header), decoded.status(),
             DoneTiming{.read = true});
    return;
  }
  if (!data.is_rendezvous()) {
    StartRead(from, *decoded, data.eager_bytes(), timing);
    return;
  }
  // A long range list (up to 128 KiB) comes by rendezvous: receive it first.
  const size_t expected = decoded->ns_bytes + size_t{decoded->range_count} * wire::kReadRangeBytes;
  if (data.size() != expected) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    counters_.read_failures.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kFetchDone, decoded->request_id,
             absl::InvalidArgumentError(absl::StrCat("READ: a payload of ", data.size(),
                                                     " bytes, the header announces ", expected)),
             timing);
    return;
  }
  auto list = std::make_shared<std::vector<uint8_t>>(expected);
  const absl::Span<uint8_t> dest = absl::MakeSpan(*list);
  data.Accept(dest, [this, from, read = *decoded, list, timing](absl::Status status) {
    if (!status.ok()) {
      counters_.read_failures.fetch_add(1, std::memory_order_relaxed);
      SendDone(from, wire::MessageType::kFetchDone, read.request_id, std::move(status), timing);
      return;
    }
    StartRead(from, read, *list, timing);
  });
}

void DataPlaneServer::StartRead(PeerId from, const wire::ReadHeader& header,
                                absl::Span<const uint8_t> payload, DoneTiming timing) {
  auto refuse = [&](absl::Status status) {
    counters_.read_failures.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kFetchDone, header.request_id, std::move(status), timing);
  };
  absl::StatusOr<wire::ReadPayload> decoded = wire::DecodeReadPayload(header, payload);
  if (!decoded.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return refuse(decoded.status());
  }
  absl::StatusOr<radix::Namespace> ns = internal::NamespaceOf(decoded->ns_encoding, "READ");
  if (!ns.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return refuse(ns.status());
  }
  if (stopping_.load(std::memory_order_acquire)) {
    return refuse(absl::CancelledError("data plane stopping"));
  }
  std::shared_ptr<PeerFetches> fetches = FetchesWithRoom(from, header.request_id);
  if (fetches == nullptr) {
    counters_.read_failures.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The grant's size is bounded before anything is leased or allocated.
  absl::StatusOr<std::vector<core::ReadRange>> checked = internal::ReadRangesOf(decoded->ranges);
  if (!checked.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return refuse(checked.status());
  }
  const std::vector<core::ReadRange>& ranges = *checked;
  absl::StatusOr<core::ReadReply> lease =
      engine_->Read(*ns, ranges, absl::Milliseconds(header.lease_ttl_ms), ScopeOf(from));
  if (!lease.ok()) {
    // Erase the queue entry FetchesWithRoom may have made for nothing.
    if (fetches->requests.empty() && fetches->sends_in_flight == 0) fetches_.erase(from);
    return refuse(lease.status());
  }

  // READ_GRANT first: the client verifies each item against these as it lands.
  auto checksums = std::make_shared<std::vector<uint64_t>>();
  for (const core::ReadRangeReply& r : lease->ranges) {
    checksums->insert(checksums->end(), r.checksums.begin(), r.checksums.end());
  }
  const auto grant_header =
      wire::EncodeReadGrantHeader({.request_id = header.request_id,
                                   .lease_id = lease->lease_id,
                                   .checksum_count = static_cast<uint32_t>(checksums->size())});
  messenger_->Send(from, static_cast<uint16_t>(wire::MessageType::kReadGrant), grant_header,
                   absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(checksums->data()),
                                       checksums->size() * sizeof(uint64_t)),
                   {.protocol = transport::DataProtocol::kAuto, .region = nullptr},
                   [checksums](absl::Status) {
                     // A failed grant means a failed connection: the transfers fail with it.
                   });

  // Then the items, each under its item number, in the order asked for.
  auto request = std::make_unique<FetchRequest>();
  request->request_id = header.request_id;
  request->lease_id = lease->lease_id;
  request->owns_lease = true;
  request->timing = timing;
  const wire::ReadItems items(decoded->ranges);  // the wire contract's item numbering
  uint32_t max_layer_end = 0;
  for (const core::ReadRange& r : ranges) max_layer_end = std::max(max_layer_end, r.layer_end);
  const bool merge = header.merge && header.order == wire::ReadOrder::kRangeMajor;
  auto add = [&](size_t i, uint32_t layer) {
    const uint32_t j = layer - ranges[i].layer_begin;
    const radix::ByteRange& bytes = lease->ranges[i].layer_ranges[j];
    // The client's memory for consecutive layers of a range is contiguous (merge): extend
    // the previous send when this layer follows it in the blob too.
    if (merge && j > 0 && !request->ranges.empty()) {
      wire::ByteRange& last = request->ranges.back();
      if (last.offset + last.length == bytes.offset &&
          last.length + bytes.length <= wire::kMaxMergedBytes) {
        last.length += bytes.length;
        ++request->counts.back();
        return;
      }
    }
    request->ranges.push_back(wire::ByteRange{bytes.offset, bytes.length});
    request->blobs.push_back(ranges[i].blob);
    request->indices.push_back(items.Item(i, layer));
    request->counts.push_back(1);
  };
  if (header.order == wire::ReadOrder::kLayerMajor) {
    for (uint32_t layer = 0; layer < max_layer_end; ++layer) {
      for (size_t i = 0; i < ranges.size(); ++i) {
        if (layer >= ranges[i].layer_begin && layer < ranges[i].layer_end) add(i, layer);
      }
    }
  } else {
    for (size_t i = 0; i < ranges.size(); ++i) {
      for (uint32_t layer = ranges[i].layer_begin; layer < ranges[i].layer_end; ++layer) {
        add(i, layer);
      }
    }
  }
  fetches->requests.push_back(std::move(request));
  Pump(std::move(fetches));
}

}  // namespace strata::store::dataplane
