// libFuzzer: every decoder of the data plane's wire format (wire.h) and of the stream
// framing (stream_frame.h) on arbitrary bytes. Each must return a value or INVALID_ARGUMENT,
// never crash, read out of bounds or hit undefined behaviour; a decoded PUT or READ header
// then meets the payload decoder, and a decoded value must re-encode to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

#include "store/transport/stream_frame.h"
#include "strata/store/transport/wire.h"

namespace wire = strata::store::transport::wire;
namespace transport = strata::store::transport;

namespace {

// A decoder may only refuse with INVALID_ARGUMENT.
void Check(const absl::Status& status) {
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) std::abort();
}

template <typename Array>
void SameBytes(const Array& encoded, absl::Span<const uint8_t> bytes) {
  if (encoded.size() != bytes.size() ||
      !std::equal(encoded.begin(), encoded.end(), bytes.begin())) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte says how many of the rest are a header; what follows is its payload, so
  // the payload decoders see inputs that got past their header. The whole rest is fed to
  // the decoders of payload-less messages.
  const absl::Span<const uint8_t> bytes(data + 1, size - 1);
  const size_t split = std::min<size_t>(data[0], bytes.size());
  const absl::Span<const uint8_t> header = bytes.subspan(0, split);
  const absl::Span<const uint8_t> payload = bytes.subspan(split);

  Check(wire::PeekType(bytes).status());
  Check(wire::DecodeFetchDataHeader(bytes).status());
  Check(wire::DecodeReadGrantHeader(bytes).status());
  Check(wire::DecodeDone(wire::MessageType::kFetchDone, bytes).status());
  Check(wire::DecodeDone(wire::MessageType::kPutDone, bytes).status());
  Check(wire::DecodePutResult(bytes).status());
  if (auto put_data = wire::DecodePutDataHeader(bytes); put_data.ok()) {
    SameBytes(wire::EncodePutDataHeader(*put_data), bytes);
  } else {
    Check(put_data.status());
  }
  if (auto fetch = wire::DecodeFetchHeader(header); fetch.ok()) {
    SameBytes(wire::EncodeFetchHeader(*fetch), header);
    Check(wire::DecodeFetchRanges(*fetch, payload).status());
  } else {
    Check(fetch.status());
  }
  if (auto read = wire::DecodeReadHeader(header); read.ok()) {
    SameBytes(wire::EncodeReadHeader(*read), header);
    auto ranges = wire::DecodeReadPayload(*read, payload);
    Check(ranges.status());
    if (ranges.ok()) {
      const wire::ReadItems items(ranges->ranges);
      for (uint32_t item = 0; item < std::min<uint32_t>(items.total(), 64); ++item) {
        if (items.RangeOf(item) >= items.ranges()) std::abort();
      }
    }
  } else {
    Check(read.status());
  }
  if (auto put = wire::DecodePutHeader(header); put.ok()) {
    SameBytes(wire::EncodePutHeader(*put), header);
    auto decoded = wire::DecodePutPayload(*put, payload);
    Check(decoded.status());
    if (decoded.ok() && (decoded->tokens.size() != put->token_count ||
                         decoded->checksums.size() != put->checksum_count)) {
      std::abort();
    }
  } else {
    Check(put.status());
  }

  if (bytes.size() >= transport::kFrameHeaderBytes) {
    Check(transport::DecodeFrameHeader(bytes, transport::FrameLimits{}).status());
    Check(transport::DecodeFrameHeader(
              bytes, transport::FrameLimits{.max_header_size = 64, .max_payload_size = 4096})
              .status());
  }
  Check(transport::DecodeAckHeader(bytes).status());
  return 0;
}
