#include "strata/store/transport/wire.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::transport::wire {
namespace {

using absl::StatusCode;

template <size_t N>
std::vector<uint8_t> ToVector(const std::array<uint8_t, N>& a) {
  return std::vector<uint8_t>(a.begin(), a.end());
}

TEST(WireTest, FetchHeaderGoldenBytes) {
  FetchHeader h{.request_id = 0x0102030405060708,
                .lease_id = 0x1112131415161718,
                .key = {.hi = 0x2122232425262728, .lo = 0x3132333435363738},
                .range_count = 0x0a0b};
  const std::vector<uint8_t> bytes = ToVector(EncodeFetchHeader(h));
  const std::vector<uint8_t> expected = {
      0x53, 0x01, 0x01, 0x00, 0x0b, 0x0a, 0x00, 0x00,  // prefix, range_count
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // request_id
      0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,  // lease_id
      0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21,  // key.hi
      0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31,  // key.lo
  };
  EXPECT_EQ(bytes, expected);
  ASSERT_OK_AND_ASSIGN(FetchHeader back, DecodeFetchHeader(bytes));
  EXPECT_EQ(back, h);
  ASSERT_OK_AND_ASSIGN(MessageType type, PeekType(bytes));
  EXPECT_EQ(type, MessageType::kFetch);
}

TEST(WireTest, FetchRangesRoundTrip) {
  const std::vector<ByteRange> ranges = {{0, 4096}, {1 << 20, 7}, {~0ull - 9, 9}};
  FetchHeader h{.request_id = 1, .lease_id = 2, .key = {3, 4}, .range_count = 3};
  const std::vector<uint8_t> payload = EncodeFetchRanges(ranges);
  ASSERT_EQ(payload.size(), 3 * kFetchRangeBytes);
  EXPECT_EQ(payload[8], 0x00);  // length of range 0 = 4096 = 0x1000, little-endian
  EXPECT_EQ(payload[9], 0x10);
  ASSERT_OK_AND_ASSIGN(std::vector<ByteRange> back, DecodeFetchRanges(h, payload));
  EXPECT_EQ(back, ranges);
}

TEST(WireTest, FetchRejectsBadCountsAndRanges) {
  FetchHeader h{.request_id = 1, .lease_id = 2, .key = {3, 4}, .range_count = 0};
  EXPECT_CODE(DecodeFetchHeader(ToVector(EncodeFetchHeader(h))), StatusCode::kInvalidArgument);
  h.range_count = kMaxFetchRanges + 1;
  EXPECT_CODE(DecodeFetchHeader(ToVector(EncodeFetchHeader(h))), StatusCode::kInvalidArgument);
  h.range_count = kMaxFetchRanges;
  EXPECT_OK(DecodeFetchHeader(ToVector(EncodeFetchHeader(h))));

  h.range_count = 2;
  const std::vector<ByteRange> one = {{0, 1}};
  EXPECT_CODE(DecodeFetchRanges(h, EncodeFetchRanges(one)), StatusCode::kInvalidArgument);
  std::vector<uint8_t> extra = EncodeFetchRanges(std::vector<ByteRange>{{0, 1}, {1, 1}});
  extra.push_back(0);
  EXPECT_CODE(DecodeFetchRanges(h, extra), StatusCode::kInvalidArgument);
  EXPECT_CODE(DecodeFetchRanges(h, EncodeFetchRanges(std::vector<ByteRange>{{0, 1}, {5, 0}})),
              StatusCode::kInvalidArgument)
      << "empty range";
  EXPECT_CODE(DecodeFetchRanges(h, EncodeFetchRanges(std::vector<ByteRange>{{0, 1}, {~0ull, 2}})),
              StatusCode::kInvalidArgument)
      << "offset + length overflows";
}

TEST(WireTest, FetchDataRoundTripAndGolden) {
  FetchDataHeader h{.request_id = 77, .index = 4095, .status = StatusCode::kNotFound};
  const std::vector<uint8_t> bytes = ToVector(EncodeFetchDataHeader(h));
  ASSERT_EQ(bytes.size(), kFetchDataHeaderBytes);
  EXPECT_EQ(bytes[2], 2);
  EXPECT_EQ(bytes[4], 0xff);  // index 4095 = 0x0fff
  EXPECT_EQ(bytes[5], 0x0f);
  EXPECT_EQ(bytes[16], 5);  // NOT_FOUND
  EXPECT_EQ(bytes[20], 1);  // count
  ASSERT_OK_AND_ASSIGN(FetchDataHeader back, DecodeFetchDataHeader(bytes));
  EXPECT_EQ(back, h);
  h.count = 80;
  ASSERT_OK_AND_ASSIGN(back, DecodeFetchDataHeader(ToVector(EncodeFetchDataHeader(h))));
  EXPECT_EQ(back.count, 80u);
  h.count = 0;
  EXPECT_CODE(DecodeFetchDataHeader(ToVector(EncodeFetchDataHeader(h))),
              StatusCode::kInvalidArgument);
}

TEST(WireTest, DoneCarriesStatusAndMessage) {
  for (MessageType type : {MessageType::kFetchDone, MessageType::kPutDone}) {
    const std::vector<uint8_t> ok = EncodeDone(type, 9, absl::OkStatus());
    EXPECT_EQ(ok.size(), kDoneHeaderFixedBytes);
    ASSERT_OK_AND_ASSIGN(DoneHeader ok_back, DecodeDone(type, ok));
    EXPECT_EQ(ok_back.request_id, 9u);
    EXPECT_OK(ok_back.status);

    const absl::Status error = absl::DataLossError("chunk 3 checksum mismatch");
    ASSERT_OK_AND_ASSIGN(DoneHeader back, DecodeDone(type, EncodeDone(type, 10, error)));
    EXPECT_EQ(back.status, error);
    EXPECT_EQ(back.request_id, 10u);
  }
}

TEST(WireTest, DoneTruncatesLongMessages) {
  const std::string long_message(5000, 'x');
  const std::vector<uint8_t> bytes =
      EncodeDone(MessageType::kPutDone, 1, absl::InternalError(long_message));
  EXPECT_EQ(bytes.size(), kDoneHeaderFixedBytes + kMaxStatusMessageBytes);
  ASSERT_OK_AND_ASSIGN(DoneHeader back, DecodeDone(MessageType::kPutDone, bytes));
  EXPECT_EQ(back.status.message().size(), kMaxStatusMessageBytes);
}

TEST(WireTest, DoneRejectsInconsistentLengths) {
  std::vector<uint8_t> bytes =
      EncodeDone(MessageType::kFetchDone, 1, absl::UnavailableError("gone"));
  std::vector<uint8_t> short_message(bytes.begin(), bytes.end() - 1);
  EXPECT_CODE(DecodeDone(MessageType::kFetchDone, short_message), StatusCode::kInvalidArgument);
  std::vector<uint8_t> long_message = bytes;
  long_message.push_back('!');
  EXPECT_CODE(DecodeDone(MessageType::kFetchDone, long_message), StatusCode::kInvalidArgument);
  std::vector<uint8_t> ok_with_text = bytes;
  ok_with_text[4] = 0;  // status OK, message still 4 bytes
  EXPECT_CODE(DecodeDone(MessageType::kFetchDone, ok_with_text), StatusCode::kInvalidArgument);
  std::vector<uint8_t> bad_code = bytes;
  bad_code[4] = 17;
  EXPECT_CODE(DecodeDone(MessageType::kFetchDone, bad_code), StatusCode::kInvalidArgument);
  std::vector<uint8_t> huge_len = bytes;
  huge_len[16] = 0xff;
  huge_len[17] = 0xff;
  EXPECT_CODE(DecodeDone(MessageType::kFetchDone, huge_len), StatusCode::kInvalidArgument);
  // A PUT_DONE is not a FETCH_DONE.
  EXPECT_CODE(DecodeDone(MessageType::kPutDone, bytes), StatusCode::kInvalidArgument);
}

TEST(WireTest, PutDataRoundTrip) {
  PutDataHeader h{.request_id = 5, .put_id = 0xdeadbeefcafe, .offset = 1ull << 40};
  const std::vector<uint8_t> bytes = ToVector(EncodePutDataHeader(h));
  ASSERT_EQ(bytes.size(), kPutDataHeaderBytes);
  ASSERT_OK_AND_ASSIGN(PutDataHeader back, DecodePutDataHeader(bytes));
  EXPECT_EQ(back, h);
}

TEST(WireTest, PutDataOfAPutCarriesItsFlag) {
  PutDataHeader h{.request_id = 5, .put_id = 77, .offset = 4096, .of_put = true};
  const std::vector<uint8_t> bytes = ToVector(EncodePutDataHeader(h));
  EXPECT_EQ(bytes[4], kPutDataOfPut);
  ASSERT_OK_AND_ASSIGN(PutDataHeader back, DecodePutDataHeader(bytes));
  EXPECT_EQ(back, h);
  std::vector<uint8_t> unknown = bytes;
  unknown[4] = 2;
  EXPECT_CODE(DecodePutDataHeader(unknown), StatusCode::kInvalidArgument);
}

TEST(WireTest, PutHeaderGoldenBytesAndPayloadRoundTrip) {
  const PutHeader h{.request_id = 0x0102030405060708,
                    .bytes = 0x1000,
                    .token_count = 2,
                    .ns_bytes = 3,
                    .checksum_count = 1,
                    .has_parent = true,
                    .parent_pages = 9,
                    .has_key = true};
  const std::vector<uint8_t> bytes = ToVector(EncodePutHeader(h));
  const std::vector<uint8_t> golden = {0x53, 1,    8, 0, 2, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1,
                                       0,    0x10, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0,
                                       9,    0,    0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(bytes, golden);
  ASSERT_OK_AND_ASSIGN(PutHeader back, DecodePutHeader(bytes));
  EXPECT_EQ(back, h);

  const std::vector<uint8_t> ns = {'a', 'b', 'c'};
  const std::vector<uint32_t> tokens = {7, 0xffffffff};
  const std::vector<uint64_t> checksums = {0x1122334455667788};
  const std::vector<uint8_t> payload =
      EncodePutPayload(h, ns, BlobKeyBits{1, 2}, BlobKeyBits{3, 4}, tokens, checksums);
  ASSERT_EQ(payload.size(), PutPayloadBytes(h));
  EXPECT_EQ(payload.size(), 3u + 16 + 16 + 8 + 8);
  ASSERT_OK_AND_ASSIGN(PutPayload decoded, DecodePutPayload(h, payload));
  EXPECT_EQ(std::vector<uint8_t>(decoded.ns_encoding.begin(), decoded.ns_encoding.end()), ns);
  EXPECT_EQ(decoded.parent_key, (BlobKeyBits{1, 2}));
  EXPECT_EQ(decoded.key, (BlobKeyBits{3, 4}));
  EXPECT_EQ(decoded.tokens, tokens);
  EXPECT_EQ(decoded.checksums, checksums);
  EXPECT_CODE(DecodePutPayload(h, absl::MakeConstSpan(payload).subspan(1)),
              StatusCode::kInvalidArgument);
  // Without parent and key the payload shrinks by 32 bytes.
  const PutHeader bare{.token_count = 2, .ns_bytes = 3, .checksum_count = 1};
  EXPECT_EQ(PutPayloadBytes(bare), payload.size() - 32);

  // A segment start: its page in the header (bytes 37..40), its hash after the key.
  PutHeader segment = bare;
  segment.bytes = 5;
  segment.has_key = true;
  segment.has_segment_start = true;
  segment.segment_pages = 0x01020304;
  const std::array<uint8_t, kPutHeaderBytes> segment_bytes = EncodePutHeader(segment);
  EXPECT_EQ(segment_bytes[36], 6);
  EXPECT_EQ(segment_bytes[37], 4);
  EXPECT_EQ(segment_bytes[40], 1);
  ASSERT_OK_AND_ASSIGN(back, DecodePutHeader(segment_bytes));
  EXPECT_EQ(back, segment);
  const std::vector<uint8_t> segment_payload = EncodePutPayload(
      segment, ns, BlobKeyBits{}, BlobKeyBits{3, 4}, tokens, checksums, BlobKeyBits{5, 6});
  EXPECT_EQ(segment_payload.size(), PutPayloadBytes(bare) + 32);
  ASSERT_OK_AND_ASSIGN(decoded, DecodePutPayload(segment, segment_payload));
  EXPECT_EQ(decoded.key, (BlobKeyBits{3, 4}));
  EXPECT_EQ(decoded.segment_hash, (BlobKeyBits{5, 6}));
  EXPECT_EQ(decoded.tokens, tokens);
}

TEST(WireTest, PutHeaderRejectsBadCountsAndFlags) {
  const PutHeader good{.bytes = 1, .token_count = 1, .ns_bytes = 1, .checksum_count = 1};
  ASSERT_OK(DecodePutHeader(ToVector(EncodePutHeader(good))).status());
  auto bad = [&](PutHeader h) {
    return DecodePutHeader(ToVector(EncodePutHeader(h))).status().code();
  };
  PutHeader h = good;
  h.token_count = 0;
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h.token_count = kMaxPutTokens + 1;
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h = good;
  h.checksum_count = kMaxPutChecksums + 1;
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h = good;
  h.ns_bytes = kMaxNamespaceBytes + 1;
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h = good;
  h.bytes = 0;
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h = good;
  h.parent_pages = 3;  // without a parent
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h = good;
  h.has_segment_start = true;  // at page 0
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h.segment_pages = 4;
  EXPECT_OK(DecodePutHeader(ToVector(EncodePutHeader(h))).status());
  h.has_parent = true;  // and a parent
  h.parent_pages = 2;
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  h = good;
  h.segment_pages = 4;  // without a segment start
  EXPECT_EQ(bad(h), StatusCode::kInvalidArgument);
  std::vector<uint8_t> flags = ToVector(EncodePutHeader(good));
  flags[36] = 8;
  EXPECT_CODE(DecodePutHeader(flags), StatusCode::kInvalidArgument);
  flags = ToVector(EncodePutHeader(good));
  flags[41] = 1;  // reserved
  EXPECT_CODE(DecodePutHeader(flags), StatusCode::kInvalidArgument);
}

TEST(WireTest, PutResultCarriesStageKeyAndStatus) {
  const PutResultHeader granted{
      .request_id = 9, .key = {5, 6}, .stage = PutResultHeader::Stage::kGranted};
  ASSERT_OK_AND_ASSIGN(PutResultHeader back, DecodePutResult(EncodePutResult(granted)));
  EXPECT_EQ(back.request_id, 9u);
  EXPECT_EQ(back.key, (BlobKeyBits{5, 6}));
  EXPECT_EQ(back.stage, PutResultHeader::Stage::kGranted);
  EXPECT_OK(back.status);

  const PutResultHeader failed{.request_id = 10,
                               .status = absl::DataLossError("chunk 3 does not match"),
                               .indexed_pages = 0};
  ASSERT_OK_AND_ASSIGN(back, DecodePutResult(EncodePutResult(failed)));
  EXPECT_EQ(back.status, failed.status);
  EXPECT_EQ(back.stage, PutResultHeader::Stage::kFinal);

  ASSERT_OK_AND_ASSIGN(
      back,
      DecodePutResult(EncodePutResult({.request_id = 11, .indexed_pages = 12, .exists = true})));
  EXPECT_TRUE(back.exists);
  EXPECT_EQ(back.indexed_pages, 12u);

  std::vector<uint8_t> bytes = EncodePutResult(granted);
  bytes[36] = 3;  // no such stage
  EXPECT_CODE(DecodePutResult(bytes), StatusCode::kInvalidArgument);
  bytes = EncodePutResult(granted);
  bytes[37] = 1;  // a grant of an existing key
  EXPECT_CODE(DecodePutResult(bytes), StatusCode::kInvalidArgument);
  bytes = EncodePutResult(failed);
  bytes.pop_back();  // the message is shorter than announced
  EXPECT_CODE(DecodePutResult(bytes), StatusCode::kInvalidArgument);
}

// Every fixed-size header: each truncation, one extra byte, and each corrupted prefix byte
// and reserved field is INVALID_ARGUMENT.
TEST(WireTest, ReadHeaderGoldenBytes) {
  const ReadHeader h{.request_id = 0x0102030405060708,
                     .range_count = 0x0a0b,
                     .lease_ttl_ms = 0x11121314,
                     .ns_bytes = 0x0155,
                     .order = ReadOrder::kLayerMajor};
  const std::vector<uint8_t> bytes = ToVector(EncodeReadHeader(h));
  const std::vector<uint8_t> expected = {
      0x53, 0x01, 0x06, 0x00, 0x0b, 0x0a, 0x00, 0x00,  // prefix, range_count
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // request_id
      0x14, 0x13, 0x12, 0x11, 0x55, 0x01, 0x00, 0x00,  // lease_ttl_ms, ns_bytes
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // order, reserved
  };
  EXPECT_EQ(bytes, expected);
  ASSERT_OK_AND_ASSIGN(ReadHeader back, DecodeReadHeader(bytes));
  EXPECT_EQ(back, h);
  ASSERT_OK_AND_ASSIGN(MessageType type, PeekType(bytes));
  EXPECT_EQ(type, MessageType::kRead);
}

TEST(WireTest, ReadPayloadRoundTripAndBadSizes) {
  const std::vector<uint8_t> ns = {'n', 's', 0, 1, 2};
  const std::vector<ReadRangeBits> ranges = {
      {.key = {1, 2}, .first_page = 3, .num_pages = 4, .layer_begin = 5, .layer_end = 6},
      {.key = {~0ull, 7}, .first_page = 0, .num_pages = ~0u, .layer_begin = 0, .layer_end = 80}};
  const std::vector<uint8_t> payload = EncodeReadPayload(ns, ranges);
  ASSERT_EQ(payload.size(), ns.size() + 2 * kReadRangeBytes);
  EXPECT_EQ(payload[ns.size()], 0x01);  // key.hi of range 0, little-endian
  const ReadHeader h{.request_id = 9, .range_count = 2, .ns_bytes = 5};
  ASSERT_OK_AND_ASSIGN(ReadPayload back, DecodeReadPayload(h, payload));
  EXPECT_EQ(std::vector<uint8_t>(back.ns_encoding.begin(), back.ns_encoding.end()), ns);
  EXPECT_EQ(back.ranges, ranges);
  for (size_t cut : {size_t{0}, size_t{5}, payload.size() - 1}) {
    EXPECT_CODE(DecodeReadPayload(h, absl::MakeConstSpan(payload.data(), cut)),
                StatusCode::kInvalidArgument);
  }
  std::vector<uint8_t> longer = payload;
  longer.push_back(0);
  EXPECT_CODE(DecodeReadPayload(h, longer), StatusCode::kInvalidArgument);
}

TEST(WireTest, ReadHeaderRejectsBadCountsLengthsAndOrder) {
  ReadHeader h{.request_id = 1, .range_count = 0, .ns_bytes = 50};
  EXPECT_CODE(DecodeReadHeader(ToVector(EncodeReadHeader(h))), StatusCode::kInvalidArgument);
  h.range_count = kMaxReadRanges + 1;
  EXPECT_CODE(DecodeReadHeader(ToVector(EncodeReadHeader(h))), StatusCode::kInvalidArgument);
  h.range_count = kMaxReadRanges;
  EXPECT_OK(DecodeReadHeader(ToVector(EncodeReadHeader(h))));
  h.ns_bytes = 0;
  EXPECT_CODE(DecodeReadHeader(ToVector(EncodeReadHeader(h))), StatusCode::kInvalidArgument);
  h.ns_bytes = kMaxNamespaceBytes + 1;
  EXPECT_CODE(DecodeReadHeader(ToVector(EncodeReadHeader(h))), StatusCode::kInvalidArgument);
  h.ns_bytes = 50;
  std::vector<uint8_t> bad_order = ToVector(EncodeReadHeader(h));
  bad_order[24] = 2;
  EXPECT_CODE(DecodeReadHeader(bad_order), StatusCode::kInvalidArgument);
  std::vector<uint8_t> bad_merge = ToVector(EncodeReadHeader(h));
  bad_merge[25] = 2;
  EXPECT_CODE(DecodeReadHeader(bad_merge), StatusCode::kInvalidArgument);
  h.merge = true;
  ASSERT_OK_AND_ASSIGN(ReadHeader merged, DecodeReadHeader(ToVector(EncodeReadHeader(h))));
  EXPECT_TRUE(merged.merge);
}

TEST(WireTest, ReadGrantRoundTrip) {
  const ReadGrantHeader h{.request_id = 7, .lease_id = 0xfedcba9876543210, .checksum_count = 512};
  ASSERT_OK_AND_ASSIGN(ReadGrantHeader back,
                       DecodeReadGrantHeader(ToVector(EncodeReadGrantHeader(h))));
  EXPECT_EQ(back, h);
}

TEST(WireTest, FixedHeadersRejectEveryTruncationAndCorruption) {
  struct Case {
    std::vector<uint8_t> bytes;
    std::function<absl::Status(absl::Span<const uint8_t>)> decode;
    std::vector<size_t> reserved_offsets;
  };
  const std::vector<Case> cases = {
      {ToVector(EncodeFetchHeader({1, 2, {3, 4}, 5})),
       [](absl::Span<const uint8_t> b) { return DecodeFetchHeader(b).status(); },
       {}},
      {ToVector(EncodeFetchDataHeader({1, 2, StatusCode::kOk})),
       [](absl::Span<const uint8_t> b) { return DecodeFetchDataHeader(b).status(); },
       {}},
      {ToVector(EncodePutDataHeader({1, 2, 3})),
       [](absl::Span<const uint8_t> b) { return DecodePutDataHeader(b).status(); },
       {5, 6, 7}},
      {ToVector(EncodePutHeader(
           {.request_id = 1, .bytes = 2, .token_count = 3, .ns_bytes = 4, .checksum_count = 5})),
       [](absl::Span<const uint8_t> b) { return DecodePutHeader(b).status(); },
       {32, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47}},
      {EncodePutResult({.request_id = 1, .key = {2, 3}}),
       [](absl::Span<const uint8_t> b) { return DecodePutResult(b).status(); },
       {40, 41, 42, 43, 44, 45, 46, 47}},
      {EncodeDone(MessageType::kPutDone, 1, absl::OkStatus()),
       [](absl::Span<const uint8_t> b) { return DecodeDone(MessageType::kPutDone, b).status(); },
       {18, 19}},
      {ToVector(EncodeReadHeader({.request_id = 1, .range_count = 2, .ns_bytes = 50})),
       [](absl::Span<const uint8_t> b) { return DecodeReadHeader(b).status(); },
       {26, 27, 28, 29, 30, 31}},
      {ToVector(EncodeReadGrantHeader({.request_id = 1, .lease_id = 2, .checksum_count = 3})),
       [](absl::Span<const uint8_t> b) { return DecodeReadGrantHeader(b).status(); },
       {24, 25, 26, 27, 28, 29, 30, 31}},
  };
  for (const Case& c : cases) {
    ASSERT_OK(c.decode(c.bytes));
    for (size_t n = 0; n < c.bytes.size(); ++n) {
      EXPECT_CODE(c.decode(absl::MakeConstSpan(c.bytes.data(), n)), StatusCode::kInvalidArgument)
          << "truncated to " << n;
    }
    std::vector<uint8_t> longer = c.bytes;
    longer.push_back(0);
    EXPECT_CODE(c.decode(longer), StatusCode::kInvalidArgument) << "oversized";
    for (size_t offset : std::vector<size_t>{0, 1, 2, 3}) {
      std::vector<uint8_t> bad = c.bytes;
      bad[offset] ^= 0x40;
      EXPECT_CODE(c.decode(bad), StatusCode::kInvalidArgument) << "prefix byte " << offset;
    }
    for (size_t offset : c.reserved_offsets) {
      std::vector<uint8_t> bad = c.bytes;
      bad[offset] = 1;
      EXPECT_CODE(c.decode(bad), StatusCode::kInvalidArgument) << "reserved byte " << offset;
    }
  }
}

TEST(WireTest, PeekTypeRejectsGarbage) {
  EXPECT_CODE(PeekType({}), StatusCode::kInvalidArgument);
  const std::vector<uint8_t> unknown_type = {kWireMagic, kWireVersion, kLastMessageType + 1, 0};
  EXPECT_CODE(PeekType(unknown_type), StatusCode::kInvalidArgument);
  const std::vector<uint8_t> future_version = {kWireMagic, 2, 1, 0};
  EXPECT_CODE(PeekType(future_version), StatusCode::kInvalidArgument);
}

// Random bytes (fixed seed) never crash a decoder; each answer is a value or
// INVALID_ARGUMENT. A valid prefix is planted in half of the inputs so the decoders get past
// their first check.
TEST(WireTest, RandomInputIsValueOrInvalidArgument) {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(rng() % 64);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    if (bytes.size() >= 4 && (i % 2) == 0) {
      bytes[0] = kWireMagic;
      bytes[1] = kWireVersion;
      bytes[2] = static_cast<uint8_t>(1 + rng() % kLastMessageType);
      bytes[3] = 0;
    }
    for (const absl::Status& s :
         {DecodeFetchHeader(bytes).status(), DecodeFetchDataHeader(bytes).status(),
          DecodePutDataHeader(bytes).status(), DecodeDone(MessageType::kFetchDone, bytes).status(),
          DecodeDone(MessageType::kPutDone, bytes).status(), DecodeReadHeader(bytes).status(),
          DecodeReadGrantHeader(bytes).status(), DecodePutHeader(bytes).status(),
          DecodePutResult(bytes).status(), PeekType(bytes).status()}) {
      EXPECT_TRUE(s.ok() || s.code() == StatusCode::kInvalidArgument) << s;
    }
  }
}

}  // namespace
}  // namespace strata::store::transport::wire

namespace strata::store::transport::wire {
namespace {

TEST(ReadItemsTest, NumbersLayersRangeByRangeAndPlacesTheirChecksums) {
  // Range 0: layers [2, 5) of 3 pages; range 1: no layers; range 2: layers [0, 2) of 1 page.
  const std::vector<ReadRangeBits> ranges = {
      {.key = {1, 2}, .first_page = 0, .num_pages = 3, .layer_begin = 2, .layer_end = 5},
      {.key = {3, 4}, .first_page = 1, .num_pages = 2, .layer_begin = 4, .layer_end = 4},
      {.key = {5, 6}, .first_page = 0, .num_pages = 1, .layer_begin = 0, .layer_end = 2}};
  const ReadItems items(ranges);
  EXPECT_EQ(items.ranges(), 3u);
  EXPECT_EQ(items.total(), 5u);
  EXPECT_EQ(items.total_checksums(), 3u * 3 + 2u * 1);
  EXPECT_EQ(items.First(0), 0u);
  EXPECT_EQ(items.First(1), 3u);
  EXPECT_EQ(items.First(2), 3u);
  EXPECT_EQ(items.Item(0, 2), 0u);
  EXPECT_EQ(items.Item(0, 4), 2u);
  EXPECT_EQ(items.Item(2, 0), 3u);
  EXPECT_EQ(items.Item(2, 1), 4u);
  EXPECT_EQ(items.FirstChecksum(0), 0u);
  EXPECT_EQ(items.FirstChecksum(1), 9u);
  EXPECT_EQ(items.FirstChecksum(2), 9u);
  // Every item maps back to the range that has it (the empty range has none).
  for (uint32_t item = 0; item < items.total(); ++item) {
    EXPECT_EQ(items.RangeOf(item), item < 3 ? 0u : 2u) << item;
  }
}

TEST(ReadItemsTest, InvertedLayerRangeHasNoItems) {
  const std::vector<ReadRangeBits> ranges = {
      {.key = {1, 2}, .first_page = 0, .num_pages = 2, .layer_begin = 3, .layer_end = 1},
      {.key = {1, 2}, .first_page = 0, .num_pages = 2, .layer_begin = 0, .layer_end = 1}};
  const ReadItems items(ranges);
  EXPECT_EQ(items.total(), 1u);
  EXPECT_EQ(items.total_checksums(), 2u);
  EXPECT_EQ(items.RangeOf(0), 1u);
}

}  // namespace
}  // namespace strata::store::transport::wire
