// The data plane's wire format: the headers of the five active messages between a client and
// a node (design: docs/design/node-and-client.md, "Data plane").
//
// Each message is an active message whose id is its MessageType; its header is one of the
// byte layouts below; bulk bytes travel as the message payload with the rendezvous protocol,
// straight into the receiver's buffer. All integers are little-endian, fields packed at the
// offsets shown (no padding, no alignment assumed). Every header opens with the same four
// bytes:
//
//   offset size field
//   0      1    magic    0x53 ('S')
//   1      1    version  kWireVersion (1); a decoder rejects any other
//   2      1    type     MessageType (1..5), must match the decoder called
//   3      1    flags    0 (reserved; must be zero in version 1)
//
// FETCH (1, client -> node), header 40 bytes; payload = the ranges, sent eagerly:
//   4      4    range_count  u32, 1..kMaxFetchRanges
//   8      8    request_id   u64, chosen by the client, echoed in FETCH_DATA / FETCH_DONE
//   16     8    lease_id     u64, from the control plane's Read
//   24     8    key.hi       u64 } the blob key (radix::PrefixHash {hi, lo})
//   32     8    key.lo       u64 }
//   payload: range_count x { offset u64, length u64 } (16 bytes each), byte ranges of the
//   blob; length >= 1 and offset + length must not overflow.
//   (The design note put the ranges in the header; UCX 1.13 caps an AM header at about
//   8 KiB — Messenger::max_header_size() — while 4096 ranges take 64 KiB, so they ride as
//   the payload.)
//
// FETCH_DATA (2, node -> client), header 24 bytes; payload = range `index`'s bytes (RNDV)
// when status is OK, none otherwise:
//   4      4    index        u32, which range of the FETCH
//   8      8    request_id   u64
//   16     4    status       u32, an absl::StatusCode (0..16)
//   20     4    reserved     0
//
// FETCH_DONE (3, node -> client) and PUT_DONE (5, node -> client), header 20 + n bytes;
// no payload. Ends a request with its status:
//   4      4    status       u32, an absl::StatusCode (0..16)
//   8      8    request_id   u64
//   16     2    message_len  u16 n, 0..kMaxStatusMessageBytes; 0 when status is OK
//   18     2    reserved     0
//   20     n    message      the status message, UTF-8, not NUL-terminated
//
// PUT_DATA (4, client -> node), header 32 bytes; payload = the bytes (RNDV), which land at
// `offset` in the put's extent:
//   4      4    reserved     0
//   8      8    request_id   u64, echoed in PUT_DONE
//   16     8    put_id       u64, from the control plane's BeginPut
//   24     8    offset       u64, byte offset in the blob
//
// Decoders return INVALID_ARGUMENT, naming the message and the problem, for a header that
// is truncated or longer than its layout, a wrong magic/type, an unknown version, non-zero
// reserved bits, a status code past 16, a message length past the limit or the header's
// end, or (FETCH) a range count or payload that does not match. Encoders cannot fail;
// EncodeDone truncates a status message longer than kMaxStatusMessageBytes.
//
// Thread-safe: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace strata::store::transport::wire {

inline constexpr uint8_t kWireMagic = 0x53;
inline constexpr uint8_t kWireVersion = 1;
inline constexpr uint32_t kMaxFetchRanges = 4096;
inline constexpr size_t kMaxStatusMessageBytes = 1024;

// Also the active-message ids.
enum class MessageType : uint8_t {
  kFetch = 1,
  kFetchData = 2,
  kFetchDone = 3,
  kPutData = 4,
  kPutDone = 5,
};

inline constexpr size_t kPrefixBytes = 4;
inline constexpr size_t kFetchHeaderBytes = 40;
inline constexpr size_t kFetchRangeBytes = 16;
inline constexpr size_t kFetchDataHeaderBytes = 24;
inline constexpr size_t kDoneHeaderFixedBytes = 20;
inline constexpr size_t kPutDataHeaderBytes = 32;

// A blob key's 128 bits, as radix::PrefixHash holds them (transport does not depend on radix).
struct BlobKeyBits {
  uint64_t hi = 0;
  uint64_t lo = 0;
  friend bool operator==(const BlobKeyBits&, const BlobKeyBits&) = default;
};

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

struct FetchHeader {
  uint64_t request_id = 0;
  uint64_t lease_id = 0;
  BlobKeyBits key;
  uint32_t range_count = 0;
  friend bool operator==(const FetchHeader&, const FetchHeader&) = default;
};

struct FetchDataHeader {
  uint64_t request_id = 0;
  uint32_t index = 0;
  absl::StatusCode status = absl::StatusCode::kOk;
  friend bool operator==(const FetchDataHeader&, const FetchDataHeader&) = default;
};

// FETCH_DONE and PUT_DONE.
struct DoneHeader {
  uint64_t request_id = 0;
  absl::Status status;
};

struct PutDataHeader {
  uint64_t request_id = 0;
  uint64_t put_id = 0;
  uint64_t offset = 0;
  friend bool operator==(const PutDataHeader&, const PutDataHeader&) = default;
};

// The type named by a header's prefix. INVALID_ARGUMENT: shorter than the prefix, wrong
// magic, unknown version or type.
absl::StatusOr<MessageType> PeekType(absl::Span<const uint8_t> header);

std::array<uint8_t, kFetchHeaderBytes> EncodeFetchHeader(const FetchHeader& header);
absl::StatusOr<FetchHeader> DecodeFetchHeader(absl::Span<const uint8_t> bytes);
// The FETCH payload.
std::vector<uint8_t> EncodeFetchRanges(absl::Span<const ByteRange> ranges);
// REQUIRES: `header` came from DecodeFetchHeader. `payload` must hold exactly
// header.range_count ranges.
absl::StatusOr<std::vector<ByteRange>> DecodeFetchRanges(const FetchHeader& header,
                                                         absl::Span<const uint8_t> payload);

std::array<uint8_t, kFetchDataHeaderBytes> EncodeFetchDataHeader(const FetchDataHeader& header);
absl::StatusOr<FetchDataHeader> DecodeFetchDataHeader(absl::Span<const uint8_t> bytes);

// REQUIRES: type is kFetchDone or kPutDone.
std::vector<uint8_t> EncodeDone(MessageType type, uint64_t request_id, const absl::Status& status);
absl::StatusOr<DoneHeader> DecodeDone(MessageType type, absl::Span<const uint8_t> bytes);

std::array<uint8_t, kPutDataHeaderBytes> EncodePutDataHeader(const PutDataHeader& header);
absl::StatusOr<PutDataHeader> DecodePutDataHeader(absl::Span<const uint8_t> bytes);

}  // namespace strata::store::transport::wire
