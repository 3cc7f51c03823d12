// DataPlaneServer: PUT_DATA — a client's bytes straight into a pending put's extent.
#include <utility>

#include "absl/strings/str_cat.h"

#include "strata/store/dataplane/data_plane_server.h"

namespace strata::store::dataplane {

namespace wire = transport::wire;
using transport::IncomingData;
using transport::PeerId;

void DataPlaneServer::OnPutData(PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
  counters_.put_requests.fetch_add(1, std::memory_order_relaxed);
  const DoneTiming timing{&counters_.put_latency, std::chrono::steady_clock::now()};
  BeginRequest();
  absl::StatusOr<wire::PutDataHeader> decoded = wire::DecodePutDataHeader(header);
  if (!decoded.ok()) {
    data.Drop();
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    SendDone(from, wire::MessageType::kPutDone, RequestIdOf(header), decoded.status());
    return;
  }
  const wire::PutDataHeader put = *decoded;
  absl::StatusOr<core::HeldSpan> target = engine_->PutTarget(put.put_id);
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
        if (status.ok()) status = engine_->PutReceived(put.put_id, put.offset, size);
        held.Reset();
        if (status.ok()) counters_.bytes_in.fetch_add(size, std::memory_order_relaxed);
        SendDone(from, wire::MessageType::kPutDone, put.request_id, std::move(status), timing);
      },
      arena_region_.get());
}

}  // namespace strata::store::dataplane
