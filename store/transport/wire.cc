#include "strata/store/transport/wire.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::transport::wire {
namespace {

constexpr uint32_t kLastStatusCode = 16;  // absl::StatusCode::kUnauthenticated

void PutU16(uint8_t* p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t GetU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

const char* TypeName(MessageType type) {
  switch (type) {
    case MessageType::kFetch:
      return "FETCH";
    case MessageType::kFetchData:
      return "FETCH_DATA";
    case MessageType::kFetchDone:
      return "FETCH_DONE";
    case MessageType::kPutData:
      return "PUT_DATA";
    case MessageType::kPutDone:
      return "PUT_DONE";
    case MessageType::kRead:
      return "READ";
    case MessageType::kReadGrant:
      return "READ_GRANT";
    case MessageType::kPut:
      return "PUT";
    case MessageType::kPutResult:
      return "PUT_RESULT";
  }
  return "?";
}

void PutPrefix(uint8_t* p, MessageType type) {
  p[0] = kWireMagic;
  p[1] = kWireVersion;
  p[2] = static_cast<uint8_t>(type);
  p[3] = 0;
}

absl::Status Malformed(MessageType type, std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed ", TypeName(type), " header: ", std::string(problem)));
}

// Checks the prefix and the size; `exact` false allows a longer header (the variable part
// is checked by the caller).
absl::Status CheckHeader(MessageType type, absl::Span<const uint8_t> bytes, size_t size,
                         bool exact) {
  if (bytes.size() < size) {
    return Malformed(type, absl::StrCat("truncated: ", bytes.size(), " bytes, needs ", size));
  }
  if (exact && bytes.size() > size) {
    return Malformed(type, absl::StrCat("oversized: ", bytes.size(), " bytes, layout is ", size));
  }
  if (bytes[0] != kWireMagic) return Malformed(type, "bad magic");
  if (bytes[1] != kWireVersion) {
    return Malformed(type, absl::StrCat("unsupported wire version ", bytes[1]));
  }
  if (bytes[2] != static_cast<uint8_t>(type)) {
    return Malformed(type, absl::StrCat("type byte is ", bytes[2]));
  }
  if (bytes[3] != 0) return Malformed(type, "non-zero flags");
  return absl::OkStatus();
}

absl::StatusOr<absl::StatusCode> DecodeStatusCode(MessageType type, uint32_t code) {
  if (code > kLastStatusCode) return Malformed(type, absl::StrCat("status code ", code));
  return static_cast<absl::StatusCode>(code);
}

// A status's message as it goes on the wire (at most kMaxStatusMessageBytes; none when OK).
size_t WireMessageLength(const absl::Status& status) {
  return status.ok() ? 0 : std::min(status.message().size(), kMaxStatusMessageBytes);
}

// Reads into `*out` the status of a header whose code is at `code_at` and whose message, of
// the u16 length at `length_at`, follows `fixed` bytes of header; the header's own error
// when it is malformed.
absl::Status DecodeStatus(MessageType type, absl::Span<const uint8_t> bytes, size_t code_at,
                          size_t length_at, size_t fixed, absl::Status* out) {
  auto code = DecodeStatusCode(type, GetU32(bytes.data() + code_at));
  if (!code.ok()) return code.status();
  const size_t message_len = GetU16(bytes.data() + length_at);
  if (message_len > kMaxStatusMessageBytes) {
    return Malformed(
        type, absl::StrCat("message length ", message_len, " exceeds ", kMaxStatusMessageBytes));
  }
  if (bytes.size() != fixed + message_len) {
    return Malformed(type, absl::StrCat(bytes.size(), " bytes for a ", message_len,
                                        "-byte message (", fixed + message_len, " expected)"));
  }
  if (*code == absl::StatusCode::kOk && message_len != 0) {
    return Malformed(type, "OK status with a message");
  }
  *out = absl::Status(
      *code, absl::string_view(reinterpret_cast<const char*>(bytes.data()) + fixed, message_len));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MessageType> PeekType(absl::Span<const uint8_t> header) {
  if (header.size() < kPrefixBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("data-plane header of ", header.size(), " bytes is truncated"));
  }
  if (header[0] != kWireMagic) return absl::InvalidArgumentError("data-plane header: bad magic");
  if (header[1] != kWireVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("data-plane header: unsupported wire version ", header[1]));
  }
  if (header[2] < 1 || header[2] > kLastMessageType) {
    return absl::InvalidArgumentError(absl::StrCat("data-plane header: unknown type ", header[2]));
  }
  return static_cast<MessageType>(header[2]);
}

std::array<uint8_t, kFetchHeaderBytes> EncodeFetchHeader(const FetchHeader& header) {
  std::array<uint8_t, kFetchHeaderBytes> out{};
  PutPrefix(out.data(), MessageType::kFetch);
  PutU32(out.data() + 4, header.range_count);
  PutU64(out.data() + 8, header.request_id);
  PutU64(out.data() + 16, header.lease_id);
  PutU64(out.data() + 24, header.key.hi);
  PutU64(out.data() + 32, header.key.lo);
  return out;
}

absl::StatusOr<FetchHeader> DecodeFetchHeader(absl::Span<const uint8_t> bytes) {
  const absl::Status ok = CheckHeader(MessageType::kFetch, bytes, kFetchHeaderBytes, true);
  if (!ok.ok()) return ok;
  FetchHeader h;
  h.range_count = GetU32(bytes.data() + 4);
  h.request_id = GetU64(bytes.data() + 8);
  h.lease_id = GetU64(bytes.data() + 16);
  h.key.hi = GetU64(bytes.data() + 24);
  h.key.lo = GetU64(bytes.data() + 32);
  if (h.range_count == 0 || h.range_count > kMaxFetchRanges) {
    return Malformed(MessageType::kFetch,
                     absl::StrCat("range count ", h.range_count, " outside 1..", kMaxFetchRanges));
  }
  return h;
}

std::vector<uint8_t> EncodeFetchRanges(absl::Span<const ByteRange> ranges) {
  std::vector<uint8_t> out(ranges.size() * kFetchRangeBytes);
  for (size_t i = 0; i < ranges.size(); ++i) {
    PutU64(out.data() + i * kFetchRangeBytes, ranges[i].offset);
    PutU64(out.data() + i * kFetchRangeBytes + 8, ranges[i].length);
  }
  return out;
}

absl::StatusOr<std::vector<ByteRange>> DecodeFetchRanges(const FetchHeader& header,
                                                         absl::Span<const uint8_t> payload) {
  const size_t expected = size_t{header.range_count} * kFetchRangeBytes;
  if (payload.size() != expected) {
    return Malformed(MessageType::kFetch,
                     absl::StrCat("payload of ", payload.size(), " bytes for ", header.range_count,
                                  " ranges (", expected, " expected)"));
  }
  std::vector<ByteRange> ranges(header.range_count);
  for (size_t i = 0; i < ranges.size(); ++i) {
    ranges[i].offset = GetU64(payload.data() + i * kFetchRangeBytes);
    ranges[i].length = GetU64(payload.data() + i * kFetchRangeBytes + 8);
    if (ranges[i].length == 0 ||
        ranges[i].offset > std::numeric_limits<uint64_t>::max() - ranges[i].length) {
      return Malformed(MessageType::kFetch,
                       absl::StrCat("range ", i, " {", ranges[i].offset, ", ", ranges[i].length,
                                    "} is empty or overflows"));
    }
  }
  return ranges;
}

std::array<uint8_t, kFetchDataHeaderBytes> EncodeFetchDataHeader(const FetchDataHeader& header) {
  std::array<uint8_t, kFetchDataHeaderBytes> out{};
  PutPrefix(out.data(), MessageType::kFetchData);
  PutU32(out.data() + 4, header.index);
  PutU64(out.data() + 8, header.request_id);
  PutU32(out.data() + 16, static_cast<uint32_t>(header.status));
  PutU32(out.data() + 20, header.count);
  return out;
}

absl::StatusOr<FetchDataHeader> DecodeFetchDataHeader(absl::Span<const uint8_t> bytes) {
  const absl::Status ok = CheckHeader(MessageType::kFetchData, bytes, kFetchDataHeaderBytes, true);
  if (!ok.ok()) return ok;
  FetchDataHeader h;
  h.count = GetU32(bytes.data() + 20);
  if (h.count == 0) return Malformed(MessageType::kFetchData, "item count 0");
  h.index = GetU32(bytes.data() + 4);
  h.request_id = GetU64(bytes.data() + 8);
  auto code = DecodeStatusCode(MessageType::kFetchData, GetU32(bytes.data() + 16));
  if (!code.ok()) return code.status();
  h.status = *code;
  return h;
}

std::vector<uint8_t> EncodeDone(MessageType type, uint64_t request_id, const absl::Status& status) {
  CHECK(type == MessageType::kFetchDone || type == MessageType::kPutDone)
      << "EncodeDone of " << TypeName(type);
  const size_t message_len = WireMessageLength(status);
  std::vector<uint8_t> out(kDoneHeaderFixedBytes + message_len);
  PutPrefix(out.data(), type);
  PutU32(out.data() + 4, static_cast<uint32_t>(status.code()));
  PutU64(out.data() + 8, request_id);
  PutU16(out.data() + 16, static_cast<uint16_t>(message_len));
  std::copy_n(status.message().data(), message_len, out.data() + kDoneHeaderFixedBytes);
  return out;
}

absl::StatusOr<DoneHeader> DecodeDone(MessageType type, absl::Span<const uint8_t> bytes) {
  CHECK(type == MessageType::kFetchDone || type == MessageType::kPutDone)
      << "DecodeDone of " << TypeName(type);
  const absl::Status ok = CheckHeader(type, bytes, kDoneHeaderFixedBytes, false);
  if (!ok.ok()) return ok;
  if (GetU16(bytes.data() + 18) != 0) return Malformed(type, "reserved bits");
  DoneHeader h;
  const absl::Status status = DecodeStatus(type, bytes, 4, 16, kDoneHeaderFixedBytes, &h.status);
  if (!status.ok()) return status;
  h.request_id = GetU64(bytes.data() + 8);
  return h;
}

std::array<uint8_t, kPutDataHeaderBytes> EncodePutDataHeader(const PutDataHeader& header) {
  std::array<uint8_t, kPutDataHeaderBytes> out{};
  PutPrefix(out.data(), MessageType::kPutData);
  PutU32(out.data() + 4, header.of_put ? kPutDataOfPut : 0);
  PutU64(out.data() + 8, header.request_id);
  PutU64(out.data() + 16, header.put_id);
  PutU64(out.data() + 24, header.offset);
  return out;
}

absl::StatusOr<PutDataHeader> DecodePutDataHeader(absl::Span<const uint8_t> bytes) {
  const absl::Status ok = CheckHeader(MessageType::kPutData, bytes, kPutDataHeaderBytes, true);
  if (!ok.ok()) return ok;
  const uint32_t flags = GetU32(bytes.data() + 4);
  if ((flags & ~kPutDataOfPut) != 0) {
    return Malformed(MessageType::kPutData, absl::StrCat("unknown flags ", flags));
  }
  PutDataHeader h;
  h.of_put = (flags & kPutDataOfPut) != 0;
  h.request_id = GetU64(bytes.data() + 8);
  h.put_id = GetU64(bytes.data() + 16);
  h.offset = GetU64(bytes.data() + 24);
  return h;
}

std::array<uint8_t, kReadHeaderBytes> EncodeReadHeader(const ReadHeader& header) {
  std::array<uint8_t, kReadHeaderBytes> out{};
  PutPrefix(out.data(), MessageType::kRead);
  PutU32(out.data() + 4, header.range_count);
  PutU64(out.data() + 8, header.request_id);
  PutU32(out.data() + 16, header.lease_ttl_ms);
  PutU32(out.data() + 20, header.ns_bytes);
  out[24] = static_cast<uint8_t>(header.order);
  out[25] = header.merge ? 1 : 0;
  return out;
}

absl::StatusOr<ReadHeader> DecodeReadHeader(absl::Span<const uint8_t> bytes) {
  const absl::Status ok = CheckHeader(MessageType::kRead, bytes, kReadHeaderBytes, true);
  if (!ok.ok()) return ok;
  for (size_t i = 26; i < kReadHeaderBytes; ++i) {
    if (bytes[i] != 0) return Malformed(MessageType::kRead, "reserved bits");
  }
  ReadHeader h;
  h.range_count = GetU32(bytes.data() + 4);
  h.request_id = GetU64(bytes.data() + 8);
  h.lease_ttl_ms = GetU32(bytes.data() + 16);
  h.ns_bytes = GetU32(bytes.data() + 20);
  if (h.range_count == 0 || h.range_count > kMaxReadRanges) {
    return Malformed(MessageType::kRead,
                     absl::StrCat("range count ", h.range_count, " outside 1..", kMaxReadRanges));
  }
  if (h.ns_bytes == 0 || h.ns_bytes > kMaxNamespaceBytes) {
    return Malformed(MessageType::kRead, absl::StrCat("namespace length ", h.ns_bytes,
                                                      " outside 1..", kMaxNamespaceBytes));
  }
  if (bytes[24] > static_cast<uint8_t>(ReadOrder::kLayerMajor)) {
    return Malformed(MessageType::kRead, absl::StrCat("order ", bytes[24]));
  }
  h.order = static_cast<ReadOrder>(bytes[24]);
  if (bytes[25] > 1) return Malformed(MessageType::kRead, absl::StrCat("merge flag ", bytes[25]));
  h.merge = bytes[25] == 1;
  return h;
}

std::vector<uint8_t> EncodeReadPayload(absl::Span<const uint8_t> ns_encoding,
                                       absl::Span<const ReadRangeBits> ranges) {
  std::vector<uint8_t> out(ns_encoding.size() + ranges.size() * kReadRangeBytes);
  std::copy(ns_encoding.begin(), ns_encoding.end(), out.begin());
  uint8_t* p = out.data() + ns_encoding.size();
  for (const ReadRangeBits& r : ranges) {
    PutU64(p, r.key.hi);
    PutU64(p + 8, r.key.lo);
    PutU32(p + 16, r.first_page);
    PutU32(p + 20, r.num_pages);
    PutU32(p + 24, r.layer_begin);
    PutU32(p + 28, r.layer_end);
    p += kReadRangeBytes;
  }
  return out;
}

absl::StatusOr<ReadPayload> DecodeReadPayload(const ReadHeader& header,
                                              absl::Span<const uint8_t> payload) {
  const size_t expected = header.ns_bytes + size_t{header.range_count} * kReadRangeBytes;
  if (payload.size() != expected) {
    return Malformed(MessageType::kRead,
                     absl::StrCat("payload of ", payload.size(), " bytes for a ", header.ns_bytes,
                                  "-byte namespace and ", header.range_count, " ranges (", expected,
                                  " expected)"));
  }
  ReadPayload out;
  out.ns_encoding = payload.subspan(0, header.ns_bytes);
  out.ranges.resize(header.range_count);
  const uint8_t* p = payload.data() + header.ns_bytes;
  for (ReadRangeBits& r : out.ranges) {
    r.key.hi = GetU64(p);
    r.key.lo = GetU64(p + 8);
    r.first_page = GetU32(p + 16);
    r.num_pages = GetU32(p + 20);
    r.layer_begin = GetU32(p + 24);
    r.layer_end = GetU32(p + 28);
    p += kReadRangeBytes;
  }
  return out;
}

std::array<uint8_t, kReadGrantHeaderBytes> EncodeReadGrantHeader(const ReadGrantHeader& header) {
  std::array<uint8_t, kReadGrantHeaderBytes> out{};
  PutPrefix(out.data(), MessageType::kReadGrant);
  PutU32(out.data() + 4, header.checksum_count);
  PutU64(out.data() + 8, header.request_id);
  PutU64(out.data() + 16, header.lease_id);
  return out;
}

absl::StatusOr<ReadGrantHeader> DecodeReadGrantHeader(absl::Span<const uint8_t> bytes) {
  const absl::Status ok = CheckHeader(MessageType::kReadGrant, bytes, kReadGrantHeaderBytes, true);
  if (!ok.ok()) return ok;
  if (GetU64(bytes.data() + 24) != 0) return Malformed(MessageType::kReadGrant, "reserved bits");
  ReadGrantHeader h;
  h.checksum_count = GetU32(bytes.data() + 4);
  h.request_id = GetU64(bytes.data() + 8);
  h.lease_id = GetU64(bytes.data() + 16);
  return h;
}

std::array<uint8_t, kPutHeaderBytes> EncodePutHeader(const PutHeader& header) {
  std::array<uint8_t, kPutHeaderBytes> out{};
  PutPrefix(out.data(), MessageType::kPut);
  PutU32(out.data() + 4, header.token_count);
  PutU64(out.data() + 8, header.request_id);
  PutU64(out.data() + 16, header.bytes);
  PutU32(out.data() + 24, header.ns_bytes);
  PutU32(out.data() + 28, header.checksum_count);
  PutU32(out.data() + 32, header.parent_pages);
  out[36] = static_cast<uint8_t>((header.has_parent ? 1 : 0) | (header.has_key ? 2 : 0) |
                                 (header.has_segment_start ? 4 : 0));
  PutU32(out.data() + 37, header.segment_pages);
  return out;
}

absl::StatusOr<PutHeader> DecodePutHeader(absl::Span<const uint8_t> bytes) {
  constexpr MessageType kType = MessageType::kPut;
  const absl::Status ok = CheckHeader(kType, bytes, kPutHeaderBytes, true);
  if (!ok.ok()) return ok;
  for (size_t i = 41; i < kPutHeaderBytes; ++i) {
    if (bytes[i] != 0) return Malformed(kType, "reserved bits");
  }
  if ((bytes[36] & ~7) != 0) return Malformed(kType, absl::StrCat("unknown flags ", bytes[36]));
  PutHeader h;
  h.token_count = GetU32(bytes.data() + 4);
  h.request_id = GetU64(bytes.data() + 8);
  h.bytes = GetU64(bytes.data() + 16);
  h.ns_bytes = GetU32(bytes.data() + 24);
  h.checksum_count = GetU32(bytes.data() + 28);
  h.parent_pages = GetU32(bytes.data() + 32);
  h.has_parent = (bytes[36] & 1) != 0;
  h.has_key = (bytes[36] & 2) != 0;
  h.has_segment_start = (bytes[36] & 4) != 0;
  h.segment_pages = GetU32(bytes.data() + 37);
  if (h.token_count == 0 || h.token_count > kMaxPutTokens) {
    return Malformed(kType,
                     absl::StrCat("token count ", h.token_count, " outside 1..", kMaxPutTokens));
  }
  if (h.checksum_count == 0 || h.checksum_count > kMaxPutChecksums) {
    return Malformed(
        kType, absl::StrCat("checksum count ", h.checksum_count, " outside 1..", kMaxPutChecksums));
  }
  if (h.ns_bytes == 0 || h.ns_bytes > kMaxNamespaceBytes) {
    return Malformed(
        kType, absl::StrCat("namespace length ", h.ns_bytes, " outside 1..", kMaxNamespaceBytes));
  }
  if (h.bytes == 0) return Malformed(kType, "a blob of 0 bytes");
  if (!h.has_parent && h.parent_pages != 0) {
    return Malformed(kType, "parent pages without a parent");
  }
  if (h.has_segment_start && h.has_parent) {
    return Malformed(kType, "a parent and a segment start");
  }
  if (h.has_segment_start != (h.segment_pages != 0)) {
    return Malformed(kType, h.has_segment_start ? "a segment start at page 0"
                                                : "segment pages without a segment start");
  }
  return h;
}

size_t PutPayloadBytes(const PutHeader& header) {
  return size_t{header.ns_bytes} + (header.has_parent ? 16 : 0) + (header.has_key ? 16 : 0) +
         (header.has_segment_start ? 16 : 0) + size_t{header.token_count} * 4 +
         size_t{header.checksum_count} * 8;
}

std::vector<uint8_t> EncodePutPayload(const PutHeader& header,
                                      absl::Span<const uint8_t> ns_encoding,
                                      const BlobKeyBits& parent_key, const BlobKeyBits& key,
                                      absl::Span<const uint32_t> tokens,
                                      absl::Span<const uint64_t> checksums,
                                      const BlobKeyBits& segment_hash) {
  DCHECK_EQ(ns_encoding.size(), header.ns_bytes);
  DCHECK_EQ(tokens.size(), header.token_count);
  DCHECK_EQ(checksums.size(), header.checksum_count);
  std::vector<uint8_t> out(PutPayloadBytes(header));
  uint8_t* p = std::copy(ns_encoding.begin(), ns_encoding.end(), out.data());
  for (const auto& [present, bits] :
       {std::pair{header.has_parent, parent_key}, std::pair{header.has_key, key},
        std::pair{header.has_segment_start, segment_hash}}) {
    if (!present) continue;
    PutU64(p, bits.hi);
    PutU64(p + 8, bits.lo);
    p += 16;
  }
  for (uint32_t token : tokens) {
    PutU32(p, token);
    p += 4;
  }
  for (uint64_t checksum : checksums) {
    PutU64(p, checksum);
    p += 8;
  }
  return out;
}

absl::StatusOr<PutPayload> DecodePutPayload(const PutHeader& header,
                                            absl::Span<const uint8_t> payload) {
  const size_t expected = PutPayloadBytes(header);
  if (payload.size() != expected) {
    return Malformed(MessageType::kPut, absl::StrCat("payload of ", payload.size(),
                                                     " bytes, the header announces ", expected));
  }
  PutPayload out;
  out.ns_encoding = payload.subspan(0, header.ns_bytes);
  const uint8_t* p = payload.data() + header.ns_bytes;
  for (auto [present, bits] :
       {std::pair{header.has_parent, &out.parent_key}, std::pair{header.has_key, &out.key},
        std::pair{header.has_segment_start, &out.segment_hash}}) {
    if (!present) continue;
    bits->hi = GetU64(p);
    bits->lo = GetU64(p + 8);
    p += 16;
  }
  out.tokens.resize(header.token_count);
  for (uint32_t& token : out.tokens) {
    token = GetU32(p);
    p += 4;
  }
  out.checksums.resize(header.checksum_count);
  for (uint64_t& checksum : out.checksums) {
    checksum = GetU64(p);
    p += 8;
  }
  return out;
}

std::vector<uint8_t> EncodePutResult(const PutResultHeader& header) {
  const size_t message_len = WireMessageLength(header.status);
  std::vector<uint8_t> out(kPutResultHeaderFixedBytes + message_len);
  PutPrefix(out.data(), MessageType::kPutResult);
  PutU32(out.data() + 4, static_cast<uint32_t>(header.status.code()));
  PutU64(out.data() + 8, header.request_id);
  PutU64(out.data() + 16, header.key.hi);
  PutU64(out.data() + 24, header.key.lo);
  PutU32(out.data() + 32, header.indexed_pages);
  out[36] = static_cast<uint8_t>(header.stage);
  out[37] = header.exists ? 1 : 0;
  PutU16(out.data() + 38, static_cast<uint16_t>(message_len));
  std::copy_n(header.status.message().data(), message_len, out.data() + kPutResultHeaderFixedBytes);
  return out;
}

absl::StatusOr<PutResultHeader> DecodePutResult(absl::Span<const uint8_t> bytes) {
  constexpr MessageType kType = MessageType::kPutResult;
  const absl::Status ok = CheckHeader(kType, bytes, kPutResultHeaderFixedBytes, false);
  if (!ok.ok()) return ok;
  if (GetU64(bytes.data() + 40) != 0) return Malformed(kType, "reserved bits");
  PutResultHeader h;
  const absl::Status status =
      DecodeStatus(kType, bytes, 4, 38, kPutResultHeaderFixedBytes, &h.status);
  if (!status.ok()) return status;
  h.request_id = GetU64(bytes.data() + 8);
  h.key = BlobKeyBits{GetU64(bytes.data() + 16), GetU64(bytes.data() + 24)};
  h.indexed_pages = GetU32(bytes.data() + 32);
  if (bytes[36] != 1 && bytes[36] != 2) return Malformed(kType, absl::StrCat("stage ", bytes[36]));
  h.stage = static_cast<PutResultHeader::Stage>(bytes[36]);
  if (bytes[37] > 1) return Malformed(kType, absl::StrCat("exists flag ", bytes[37]));
  h.exists = bytes[37] == 1;
  if (h.stage == PutResultHeader::Stage::kGranted && (!h.status.ok() || h.exists)) {
    return Malformed(kType, "a grant that is not OK or names an existing key");
  }
  return h;
}

ReadItems::ReadItems(absl::Span<const ReadRangeBits> ranges)
    : first_item_(ranges.size() + 1, 0), first_checksum_(ranges.size() + 1, 0) {
  layer_begin_.reserve(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const ReadRangeBits& r = ranges[i];
    const uint32_t layers = r.layer_end > r.layer_begin ? r.layer_end - r.layer_begin : 0;
    layer_begin_.push_back(r.layer_begin);
    first_item_[i + 1] = first_item_[i] + layers;
    first_checksum_[i + 1] = first_checksum_[i] + uint64_t{layers} * r.num_pages;
  }
}

size_t ReadItems::RangeOf(uint32_t item) const {
  // The last range whose first item is <= item (ranges without items share their First
  // with the next range and are skipped).
  return static_cast<size_t>(std::upper_bound(first_item_.begin(), first_item_.end(), item) -
                             first_item_.begin() - 1);
}

}  // namespace strata::store::transport::wire
