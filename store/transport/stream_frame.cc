#include "store/transport/stream_frame.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace strata::store::transport {
namespace {

void Put16(uint8_t* out, uint16_t v) {
  out[0] = static_cast<uint8_t>(v);
  out[1] = static_cast<uint8_t>(v >> 8);
}
void Put64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t Get16(const uint8_t* in) { return static_cast<uint16_t>(in[0] | (in[1] << 8)); }
uint64_t Get64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | in[i];
  return v;
}

}  // namespace

void EncodeFrameHeader(const FrameHeader& frame, uint8_t (&out)[kFrameHeaderBytes]) {
  out[0] = kFrameMagic;
  out[1] = kFrameVersion;
  Put16(out + 2, frame.id);
  out[4] = frame.acked ? kFrameAcked : 0;
  out[5] = 0;
  Put16(out + 6, frame.header_size);
  Put64(out + 8, frame.payload_size);
}

absl::StatusOr<FrameHeader> DecodeFrameHeader(absl::Span<const uint8_t> bytes,
                                              const FrameLimits& limits) {
  if (bytes.size() < kFrameHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame header of ", bytes.size(), " bytes (", kFrameHeaderBytes, " needed)"));
  }
  const uint8_t* in = bytes.data();
  if (in[0] != kFrameMagic || in[1] != kFrameVersion) {
    return absl::InvalidArgumentError(absl::StrCat("not a strata data-plane frame (magic 0x",
                                                   absl::Hex(in[0]), ", version ", in[1],
                                                   "; expected 0x53, 1)"));
  }
  if ((in[4] & ~kFrameAcked) != 0 || in[5] != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame flags 0x", absl::Hex(in[4]), " / reserved 0x", absl::Hex(in[5])));
  }
  FrameHeader frame;
  frame.id = Get16(in + 2);
  frame.acked = (in[4] & kFrameAcked) != 0;
  frame.header_size = Get16(in + 6);
  frame.payload_size = Get64(in + 8);
  if (frame.header_size > limits.max_header_size) {
    return absl::InvalidArgumentError(absl::StrCat("frame header of ", frame.header_size,
                                                   " bytes exceeds ", limits.max_header_size));
  }
  if (frame.payload_size > limits.max_payload_size) {
    return absl::InvalidArgumentError(absl::StrCat("frame payload of ", frame.payload_size,
                                                   " bytes exceeds ", limits.max_payload_size));
  }
  if (!frame.acked && frame.payload_size > kMaxEagerPayload) {
    return absl::InvalidArgumentError(
        absl::StrCat("eager payload of ", frame.payload_size, " bytes exceeds ", kMaxEagerPayload));
  }
  return frame;
}

void EncodeAckHeader(const AckHeader& ack, uint8_t (&out)[kAckHeaderBytes]) {
  std::memset(out, 0, kAckHeaderBytes);
  Put64(out, ack.sequence);
  out[8] = ack.outcome;
}

absl::StatusOr<AckHeader> DecodeAckHeader(absl::Span<const uint8_t> bytes) {
  if (bytes.size() != kAckHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("ACK header of ", bytes.size(), " bytes"));
  }
  AckHeader ack;
  ack.sequence = Get64(bytes.data());
  ack.outcome = bytes[8];
  if (ack.outcome != kAckReceived && ack.outcome != kAckDropped) {
    return absl::InvalidArgumentError(absl::StrCat("ACK outcome ", ack.outcome));
  }
  for (size_t i = 9; i < kAckHeaderBytes; ++i) {
    if (bytes[i] != 0) return absl::InvalidArgumentError("ACK reserved bytes are not 0");
  }
  return ack;
}

}  // namespace strata::store::transport
