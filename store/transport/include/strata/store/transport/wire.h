// The data plane's wire format: the headers of the nine active messages between a client and
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
//   2      1    type     MessageType (1..9), must match the decoder called
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
// FETCH_DATA (2, node -> client), header 24 bytes; payload = the bytes (RNDV) of ranges
// (items) index .. index + count - 1, end to end, when status is OK, none otherwise:
//   4      4    index        u32, which range of the FETCH (item of the READ)
//   8      8    request_id   u64
//   16     4    status       u32, an absl::StatusCode (0..16)
//   20     4    count        u32 >= 1; > 1 only for a READ that allowed merging
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
//   4      4    flags        u32; bit 0 (kPutDataOfPut): `put_id` is the request_id of a PUT
//                            sent earlier on this connection (a put in one round trip: no
//                            PUT_DONE answers the piece; the PUT's PUT_RESULT ends it); other
//                            bits 0
//   8      8    request_id   u64, echoed in PUT_DONE
//   16     8    put_id       u64, from the control plane's BeginPut (or, with bit 0, the PUT's
//                            request_id)
//   24     8    offset       u64, byte offset in the blob
//
// PUT (8, client -> node), header 48 bytes; payload (eager, or RNDV when long) = what the
// control plane's BeginPut carries: the namespace's canonical encoding, the parent's key
// (16 bytes: hi, lo) when flags bit 0, the key the client computed (16 bytes) when flags
// bit 1, the segment start's prefix hash (16 bytes) when flags bit 2, token_count u32
// tokens, checksum_count u64 chunk checksums. A put in one round
// trip: the node begins the put (as BeginPut), answers PUT_RESULT stage 1 (granted) or,
// when the key exists or the put is refused, stage 2 (final); the blob's bytes follow as
// PUT_DATA pieces with kPutDataOfPut, sent without waiting for the grant up to a window
// the client chooses (an existing key costs at most that window; the node drops it); when
// every byte landed the node verifies and commits the blob and answers PUT_RESULT stage 2.
//   4      4    token_count    u32, 1..kMaxPutTokens
//   8      8    request_id     u64, echoed in PUT_RESULT, named by the PUT_DATA pieces
//   16     8    bytes          u64 >= 1, the blob's size
//   24     4    ns_bytes       u32 n, 1..kMaxNamespaceBytes
//   28     4    checksum_count u32, 1..kMaxPutChecksums
//   32     4    parent_pages   u32, pages of the parent's sequence the blob continues
//                              (flags bit 0; 0 otherwise)
//   36     1    flags          bit 0: a parent; bit 1: the client's key; bit 2: a segment
//                              start (BeginPutRequest.segment_start; not with bit 0);
//                              other bits 0
//   37     4    segment_pages  u32, the segment start's page (flags bit 2: >= 1; else 0)
//   41     7    reserved       0
//
// PUT_RESULT (9, node -> client), header 48 + n bytes; no payload:
//   4      4    status         u32, an absl::StatusCode (0..16)
//   8      8    request_id     u64, the PUT's
//   16     8    key.hi         u64 } the blob's key (0 when the put was refused before the
//   24     8    key.lo         u64 }  node computed it)
//   32     4    indexed_pages  u32, stage 2 after a commit: pages the index holds
//   36     1    stage          1 granted (status OK: send the rest), 2 final
//   37     1    exists         1: the key was committed or being put already (final, OK)
//   38     2    message_len    u16 n, 0..kMaxStatusMessageBytes; 0 when status is OK
//   40     8    reserved       0
//   48     n    message        the status message, UTF-8
//
// READ (6, client -> node), header 32 bytes; payload (eager, or RNDV when long) = the
// namespace's canonical encoding (radix/namespace.h) then the ranges. A read in one round
// trip: the node takes a lease over the ranges (as the control plane's Read does), answers
// READ_GRANT, sends every range's layer byte ranges as FETCH_DATA, releases the lease and
// ends with FETCH_DONE (or ends with FETCH_DONE alone, carrying the error):
//   4      4    range_count   u32, 1..kMaxReadRanges
//   8      8    request_id    u64, echoed in READ_GRANT / FETCH_DATA / FETCH_DONE
//   16     4    lease_ttl_ms  u32, how long the node may hold the lease; 0: its default
//   20     4    ns_bytes      u32 n, 1..kMaxNamespaceBytes
//   24     1    order         ReadOrder: 0 range by range, 1 layer by layer across ranges
//   25     1    merge         1: the client's memory for consecutive layers of one range is
//                             contiguous, so the node may send consecutive items that are
//                             also contiguous in the blob as one FETCH_DATA (count > 1, at
//                             most kMaxMergedBytes); 0: one item per FETCH_DATA
//   26     6    reserved      0
//   payload: n bytes of namespace encoding, then range_count x 32 bytes:
//     0  8 key.hi  8  8 key.lo  16 4 first_page  20 4 num_pages  24 4 layer_begin
//     28 4 layer_end
//   FETCH_DATA index i names item i of the READ: range r's layer (layer_begin + j) is item
//   first_item(r) + j, first_item(r) = sum over earlier ranges of (layer_end - layer_begin);
//   its payload is that layer's num_pages pages. `order` only chooses the sending order.
//   ReadItems (below) is this numbering, for the node and the client alike.
//
// READ_GRANT (7, node -> client), header 32 bytes; payload (eager or RNDV) = checksum_count
// x u64: every item's chunk checksums in item order (num_pages per item):
//   4      4    checksum_count u32
//   8      8    request_id     u64
//   16     8    lease_id       u64, the lease the node holds for this READ (informational)
//   24     8    reserved       0
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
inline constexpr uint32_t kMaxReadRanges = 4096;
inline constexpr uint32_t kMaxNamespaceBytes = 1024;
inline constexpr uint64_t kMaxMergedBytes = uint64_t{4} << 20;
// Chunks (layer-pages) one READ may cover, as the control plane's kMaxChunksPerRead: the
// READ_GRANT carries one checksum each.
inline constexpr uint64_t kMaxReadChunks = uint64_t{1} << 20;

// Also the active-message ids.
enum class MessageType : uint8_t {
  kFetch = 1,
  kFetchData = 2,
  kFetchDone = 3,
  kPutData = 4,
  kPutDone = 5,
  kRead = 6,
  kReadGrant = 7,
  kPut = 8,
  kPutResult = 9,
};
inline constexpr uint8_t kLastMessageType = 9;

// PUT_DATA flags.
inline constexpr uint32_t kPutDataOfPut = 1;
// A PUT's limits, as the control plane's BeginPut (proto/limits.h: kMaxTokensPerRequest,
// kMaxChunksPerBlob).
inline constexpr uint32_t kMaxPutTokens = uint32_t{1} << 21;
inline constexpr uint32_t kMaxPutChecksums = uint32_t{1} << 20;

enum class ReadOrder : uint8_t {
  kRangeMajor = 0,  // range 0's layers, then range 1's, ...
  kLayerMajor = 1,  // layer l of every range (in range order) before layer l + 1
};

inline constexpr size_t kPrefixBytes = 4;
inline constexpr size_t kFetchHeaderBytes = 40;
inline constexpr size_t kFetchRangeBytes = 16;
inline constexpr size_t kFetchDataHeaderBytes = 24;
inline constexpr size_t kDoneHeaderFixedBytes = 20;
inline constexpr size_t kPutDataHeaderBytes = 32;
inline constexpr size_t kReadHeaderBytes = 32;
inline constexpr size_t kReadRangeBytes = 32;
inline constexpr size_t kReadGrantHeaderBytes = 32;
inline constexpr size_t kPutHeaderBytes = 48;
inline constexpr size_t kPutResultHeaderFixedBytes = 48;

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
  uint32_t count = 1;
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
  bool of_put = false;  // kPutDataOfPut: put_id is a PUT's request_id
  friend bool operator==(const PutDataHeader&, const PutDataHeader&) = default;
};

struct PutHeader {
  uint64_t request_id = 0;
  uint64_t bytes = 0;
  uint32_t token_count = 0;
  uint32_t ns_bytes = 0;
  uint32_t checksum_count = 0;
  bool has_parent = false;
  uint32_t parent_pages = 0;
  bool has_key = false;
  bool has_segment_start = false;
  uint32_t segment_pages = 0;
  friend bool operator==(const PutHeader&, const PutHeader&) = default;
};

// A decoded PUT payload; the spans point into the payload it came from except `tokens` and
// `checksums`, which are copied (the payload need not be aligned).
struct PutPayload {
  absl::Span<const uint8_t> ns_encoding;
  BlobKeyBits parent_key;    // when has_parent
  BlobKeyBits key;           // when has_key
  BlobKeyBits segment_hash;  // when has_segment_start: its prefix hash (hi, lo)
  std::vector<uint32_t> tokens;
  std::vector<uint64_t> checksums;
};

struct PutResultHeader {
  enum class Stage : uint8_t { kGranted = 1, kFinal = 2 };
  uint64_t request_id = 0;
  absl::Status status;
  BlobKeyBits key;
  uint32_t indexed_pages = 0;
  Stage stage = Stage::kFinal;
  bool exists = false;
};

struct ReadHeader {
  uint64_t request_id = 0;
  uint32_t range_count = 0;
  uint32_t lease_ttl_ms = 0;
  uint32_t ns_bytes = 0;
  ReadOrder order = ReadOrder::kRangeMajor;
  bool merge = false;
  friend bool operator==(const ReadHeader&, const ReadHeader&) = default;
};

struct ReadRangeBits {
  BlobKeyBits key;
  uint32_t first_page = 0;
  uint32_t num_pages = 0;
  uint32_t layer_begin = 0;
  uint32_t layer_end = 0;
  friend bool operator==(const ReadRangeBits&, const ReadRangeBits&) = default;
};

// A decoded READ payload; `ns_encoding` points into the payload it came from.
struct ReadPayload {
  absl::Span<const uint8_t> ns_encoding;
  std::vector<ReadRangeBits> ranges;
};

// The item numbering of a READ (the table above), defined once for both ends: range r's
// layer (layer_begin + j) is item First(r) + j, First(r) = the sum over earlier ranges of
// (layer_end - layer_begin); READ_GRANT lists every item's num_pages chunk checksums in
// item order, so range r's checksums start at FirstChecksum(r). A range with
// layer_end <= layer_begin has no items. Value type; pure.
class ReadItems {
 public:
  explicit ReadItems(absl::Span<const ReadRangeBits> ranges);

  size_t ranges() const { return first_item_.size() - 1; }
  // Items (layer ranges) and chunk checksums of the whole READ.
  uint32_t total() const { return first_item_.back(); }
  uint64_t total_checksums() const { return first_checksum_.back(); }
  // REQUIRES: range < ranges().
  uint32_t First(size_t range) const { return first_item_[range]; }
  uint64_t FirstChecksum(size_t range) const { return first_checksum_[range]; }
  // The item of range `range`'s layer `layer`. REQUIRES: layer_begin <= layer < layer_end.
  uint32_t Item(size_t range, uint32_t layer) const {
    return first_item_[range] + (layer - layer_begin_[range]);
  }
  // The range `item` belongs to. REQUIRES: item < total().
  size_t RangeOf(uint32_t item) const;

 private:
  std::vector<uint32_t> first_item_;      // ranges() + 1 entries
  std::vector<uint64_t> first_checksum_;  // ranges() + 1 entries
  std::vector<uint32_t> layer_begin_;
};

struct ReadGrantHeader {
  uint64_t request_id = 0;
  uint64_t lease_id = 0;
  uint32_t checksum_count = 0;
  friend bool operator==(const ReadGrantHeader&, const ReadGrantHeader&) = default;
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

std::array<uint8_t, kReadHeaderBytes> EncodeReadHeader(const ReadHeader& header);
// Also checks range_count (1..kMaxReadRanges), ns_bytes (1..kMaxNamespaceBytes) and order.
absl::StatusOr<ReadHeader> DecodeReadHeader(absl::Span<const uint8_t> bytes);
std::vector<uint8_t> EncodeReadPayload(absl::Span<const uint8_t> ns_encoding,
                                       absl::Span<const ReadRangeBits> ranges);
// REQUIRES: `header` came from DecodeReadHeader. INVALID_ARGUMENT when `payload` is not
// exactly ns_bytes + range_count * kReadRangeBytes long. (What the ranges mean is checked by
// the node's engine, like the control plane's Read.)
absl::StatusOr<ReadPayload> DecodeReadPayload(const ReadHeader& header,
                                              absl::Span<const uint8_t> payload);

std::array<uint8_t, kReadGrantHeaderBytes> EncodeReadGrantHeader(const ReadGrantHeader& header);
absl::StatusOr<ReadGrantHeader> DecodeReadGrantHeader(absl::Span<const uint8_t> bytes);

std::array<uint8_t, kPutHeaderBytes> EncodePutHeader(const PutHeader& header);
// Also checks token_count, ns_bytes, checksum_count and bytes (>= 1), and that
// parent_pages is 0 without a parent.
absl::StatusOr<PutHeader> DecodePutHeader(absl::Span<const uint8_t> bytes);
// The payload size `header` announces.
size_t PutPayloadBytes(const PutHeader& header);
// REQUIRES: tokens.size() == header.token_count, checksums.size() == header.checksum_count,
// ns_encoding.size() == header.ns_bytes.
std::vector<uint8_t> EncodePutPayload(const PutHeader& header,
                                      absl::Span<const uint8_t> ns_encoding,
                                      const BlobKeyBits& parent_key, const BlobKeyBits& key,
                                      absl::Span<const uint32_t> tokens,
                                      absl::Span<const uint64_t> checksums,
                                      const BlobKeyBits& segment_hash = {});
// REQUIRES: `header` came from DecodePutHeader. INVALID_ARGUMENT when `payload` is not
// exactly PutPayloadBytes(header) long.
absl::StatusOr<PutPayload> DecodePutPayload(const PutHeader& header,
                                            absl::Span<const uint8_t> payload);

// Truncates a status message longer than kMaxStatusMessageBytes.
std::vector<uint8_t> EncodePutResult(const PutResultHeader& header);
absl::StatusOr<PutResultHeader> DecodePutResult(absl::Span<const uint8_t> bytes);

}  // namespace strata::store::transport::wire
