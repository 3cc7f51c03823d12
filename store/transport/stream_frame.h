// The stream transport's framing: how one Messenger message travels on a data-plane TCP
// connection that strata itself owns (no UCX code ever reads these bytes).
//
// Private to store/transport. Pure functions, no I/O; thread-safe.
//
// A message is a 16-byte frame header, then `header_size` header bytes, then
// `payload_size` payload bytes. Little-endian:
//
//   offset size field
//   0      1    magic        0x53 ('S')
//   1      1    version      1
//   2      2    id           u16 message id (ids from kFirstReservedId are the messenger's own)
//   4      1    flags        bit 0 kFrameAcked: the payload is "streamed": the receiver decides
//                            where it lands (IncomingData::Accept) and answers with an ACK
//                            frame once it landed or was dropped. Without it the payload is
//                            eager: at most kMaxEagerPayload bytes, delivered with the header.
//                            Other bits 0.
//   5      1    reserved     0
//   6      2    header_size  u16, at most FrameLimits::max_header_size
//   8      8    payload_size u64, at most FrameLimits::max_payload_size
//
// ACK (id kAckId, no payload) carries a 16-byte header: u64 sequence number of the acked
// frame among the sender's acked frames on this connection (0, 1, 2, ...), u8 outcome
// (kAckReceived or kAckDropped), 7 bytes 0.
//
// Anything else — a wrong magic or version, a flag or reserved bit set, a size over its
// limit, an eager payload over kMaxEagerPayload — is a protocol error: DecodeFrameHeader
// returns INVALID_ARGUMENT and the connection is closed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace strata::store::transport {

inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr uint8_t kFrameMagic = 0x53;
inline constexpr uint8_t kFrameVersion = 1;
inline constexpr uint8_t kFrameAcked = 0x01;
// Largest payload sent eagerly (with its header, copied by the receiver): above it the
// payload is streamed straight into the buffer the receiver's handler picks.
inline constexpr uint64_t kMaxEagerPayload = 16 * 1024;

// The ACK frame's message id and header.
inline constexpr uint16_t kAckId = 0xFFFE;
inline constexpr size_t kAckHeaderBytes = 16;
inline constexpr uint8_t kAckReceived = 1;
inline constexpr uint8_t kAckDropped = 2;

struct FrameHeader {
  uint16_t id = 0;
  bool acked = false;
  uint16_t header_size = 0;
  uint64_t payload_size = 0;
};

struct FrameLimits {
  size_t max_header_size = 8192;
  uint64_t max_payload_size = uint64_t{1} << 32;
};

void EncodeFrameHeader(const FrameHeader& frame, uint8_t (&out)[kFrameHeaderBytes]);
// REQUIRES: bytes.size() >= kFrameHeaderBytes (only the first 16 are read).
absl::StatusOr<FrameHeader> DecodeFrameHeader(absl::Span<const uint8_t> bytes,
                                              const FrameLimits& limits);

struct AckHeader {
  uint64_t sequence = 0;
  uint8_t outcome = kAckReceived;
};
void EncodeAckHeader(const AckHeader& ack, uint8_t (&out)[kAckHeaderBytes]);
absl::StatusOr<AckHeader> DecodeAckHeader(absl::Span<const uint8_t> bytes);

}  // namespace strata::store::transport
