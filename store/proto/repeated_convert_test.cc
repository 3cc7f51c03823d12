#include "strata/proto/repeated_convert.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/limits.h"

namespace strata::proto {
namespace {

TEST(RepeatedConvertTest, TokensRoundTripAsAViewOfTheMessage) {
  const std::vector<radix::TokenId> tokens = {0, 1, 127, 128, 151'935, 0xffffffffu};
  v1::MatchRequest request;
  TokensToProto(tokens, request.mutable_tokens());
  EXPECT_EQ(request.tokens().size(), tokens.size() * 4);
  ASSERT_OK_AND_ASSIGN(TokenView view, TokensFromProto(request.tokens(), "tokens"));
  EXPECT_EQ(std::vector<radix::TokenId>(view.span().begin(), view.span().end()), tokens);
  EXPECT_FALSE(view.copied());
  EXPECT_EQ(static_cast<const void*>(view.span().data()),
            static_cast<const void*>(request.tokens().data()));  // no copy

  // Replaces, not appends.
  TokensToProto(std::vector<radix::TokenId>{7}, request.mutable_tokens());
  EXPECT_EQ(request.tokens(), std::string("\x07\x00\x00\x00", 4));
}

TEST(RepeatedConvertTest, TokensAreLittleEndianUint32s) {
  v1::MatchRequest request;
  TokensToProto(std::vector<radix::TokenId>{1, 0x01020304u, 0xffffffffu}, request.mutable_tokens());
  // One length-delimited field 2 (tag 0x12) of 12 bytes, each id 4 bytes low byte first.
  EXPECT_EQ(request.SerializeAsString(), std::string("\x12\x0c"
                                                     "\x01\x00\x00\x00"
                                                     "\x04\x03\x02\x01"
                                                     "\xff\xff\xff\xff",
                                                     14));
  // And the same bytes parse back to the same ids.
  v1::MatchRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(request.SerializeAsString()));
  ASSERT_OK_AND_ASSIGN(TokenView view, TokensFromProto(parsed.tokens(), "tokens"));
  EXPECT_EQ(std::vector<radix::TokenId>(view.span().begin(), view.span().end()),
            (std::vector<radix::TokenId>{1, 0x01020304u, 0xffffffffu}));
}

TEST(RepeatedConvertTest, LengthNotAMultipleOfFourIsInvalidArgument) {
  for (const size_t length : {1, 2, 3, 5, 4099}) {
    const std::string bytes(length, '\x01');
    const auto out = TokensFromProto(bytes, "tokens");
    EXPECT_CODE(out, absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(), "tokens: " + std::to_string(length) +
                                          " bytes is not a whole number of 4-byte token ids");
  }
  // The field name leads the message, whichever field it is.
  const auto blob = TokensFromProto(std::string(6, '\0'), "blob.tokens");
  EXPECT_EQ(blob.status().message(),
            "blob.tokens: 6 bytes is not a whole number of 4-byte token ids");
}

TEST(RepeatedConvertTest, TooManyTokensIsInvalidArgumentNamingTheLimitInTokens) {
  std::string bytes(kMaxTokensPerRequest * 4, '\x05');
  EXPECT_OK(TokensFromProto(bytes, "tokens"));
  bytes.append(4, '\x05');
  const auto out = TokensFromProto(bytes, "tokens");
  EXPECT_CODE(out, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "tokens: 2097153 entries exceed the limit of 2097152");
  // A ragged length is reported as such even past the limit.
  bytes.push_back('\x05');
  EXPECT_EQ(TokensFromProto(bytes, "tokens").status().message(),
            "tokens: 8388613 bytes is not a whole number of 4-byte token ids");
}

TEST(RepeatedConvertTest, EmptyTokensAreAnEmptyView) {
  v1::MatchRequest request;
  ASSERT_OK_AND_ASSIGN(TokenView view, TokensFromProto(request.tokens(), "tokens"));
  EXPECT_TRUE(view.empty());
  EXPECT_EQ(view.size(), 0u);
  TokensToProto({}, request.mutable_tokens());
  EXPECT_TRUE(request.tokens().empty());
  EXPECT_EQ(request.ByteSizeLong(), 0u);  // proto3: an empty bytes field is not sent
}

TEST(RepeatedConvertTest, MisalignedBytesAreCopied) {
  const std::vector<radix::TokenId> tokens = {3, 0x00abcdefu, 0xfffffffeu, 42, 7};
  std::string wire;
  TokensToProto(tokens, &wire);
  // The same bytes at offsets 0..3 of a larger buffer: offset 0 is aligned (heap buffer).
  std::string buffer(wire.size() + 8, '\0');
  for (size_t offset = 0; offset < 4; ++offset) {
    wire.copy(buffer.data() + offset, wire.size());
    const std::string_view slice(buffer.data() + offset, wire.size());
    const bool aligned = reinterpret_cast<uintptr_t>(slice.data()) % alignof(radix::TokenId) == 0;
    ASSERT_OK_AND_ASSIGN(TokenView view, TokensFromProto(slice, "tokens"));
    EXPECT_EQ(std::vector<radix::TokenId>(view.span().begin(), view.span().end()), tokens)
        << "offset " << offset;
    EXPECT_EQ(view.copied(), !aligned) << "offset " << offset;
    if (aligned) {
      EXPECT_EQ(static_cast<const void*>(view.span().data()),
                static_cast<const void*>(slice.data()));
    } else {
      EXPECT_NE(static_cast<const void*>(view.span().data()),
                static_cast<const void*>(slice.data()));
    }
  }
}

TEST(RepeatedConvertTest, MovingACopiedViewKeepsItsSpanValid) {
  const std::vector<radix::TokenId> tokens = {9, 8, 7, 6};
  std::string buffer(1 + tokens.size() * 4, '\0');
  std::memcpy(buffer.data() + 1, tokens.data(), tokens.size() * 4);
  ASSERT_OK_AND_ASSIGN(TokenView view,
                       TokensFromProto(std::string_view(buffer).substr(1), "tokens"));
  ASSERT_TRUE(view.copied());
  const radix::TokenId* data = view.span().data();
  // Clobber the source: a copy must not see it.
  std::fill(buffer.begin(), buffer.end(), '\xee');

  TokenView moved(std::move(view));
  EXPECT_EQ(moved.span().data(), data);  // the vector's buffer moved with it
  EXPECT_EQ(std::vector<radix::TokenId>(moved.span().begin(), moved.span().end()), tokens);
  EXPECT_TRUE(view.empty());  // NOLINT(bugprone-use-after-move): the source is left empty

  TokenView assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.span().data(), data);
  EXPECT_EQ(std::vector<radix::TokenId>(assigned.span().begin(), assigned.span().end()), tokens);
  EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(moved.copied());
}

TEST(RepeatedConvertTest, ChecksumsRoundTripAndRespectTheLimit) {
  const std::vector<uint64_t> sums = {0, 1, std::numeric_limits<uint64_t>::max()};
  v1::BeginPutRequest request;
  ChecksumsToProto(sums, request.mutable_chunk_checksums());
  ASSERT_OK_AND_ASSIGN(absl::Span<const uint64_t> view,
                       ChecksumsFromProto(request.chunk_checksums(), "chunk_checksums", 3));
  EXPECT_EQ(std::vector<uint64_t>(view.begin(), view.end()), sums);
  EXPECT_CODE(ChecksumsFromProto(request.chunk_checksums(), "chunk_checksums", 2),
              absl::StatusCode::kInvalidArgument);
  // fixed64, packed: tag 0x2a, length 24, then 3 x 8 bytes.
  const std::string bytes = request.SerializeAsString();
  ASSERT_EQ(bytes.size(), 2u + 24u);
  EXPECT_EQ(bytes[0], '\x2a');
  EXPECT_EQ(bytes[1], '\x18');
}

TEST(RepeatedConvertTest, CheckCountBoundary) {
  EXPECT_OK(CheckCount("ranges", 4096, kMaxReadRanges));
  const absl::Status over = CheckCount("ranges", 4097, kMaxReadRanges);
  EXPECT_CODE(over, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(over.message(), "ranges: 4097 entries exceed the limit of 4096");
}

TEST(RepeatedConvertTest, ByteRangeRoundTrips) {
  const radix::ByteRange range{.offset = uint64_t{1} << 40, .length = 65536};
  v1::ByteRange wire;
  ToProto(range, &wire);
  ASSERT_OK_AND_ASSIGN(radix::ByteRange back, ByteRangeFromProto(wire, "r"));
  EXPECT_EQ(back, range);
  // The last byte of the address space is a valid range.
  wire.set_offset(std::numeric_limits<uint64_t>::max() - 1);
  wire.set_length(1);
  EXPECT_OK(ByteRangeFromProto(wire, "r"));
}

TEST(RepeatedConvertTest, MalformedByteRangesAreRejected) {
  v1::ByteRange empty;
  empty.set_offset(10);
  const auto zero = ByteRangeFromProto(empty, "grants[0].layer_ranges[1]");
  EXPECT_CODE(zero, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.status().message(), "grants[0].layer_ranges[1].length: must be > 0, got 0");

  v1::ByteRange wraps;
  wraps.set_offset(std::numeric_limits<uint64_t>::max());
  wraps.set_length(1);
  const auto overflow = ByteRangeFromProto(wraps, "r");
  EXPECT_CODE(overflow, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(overflow.status().message().find("overflows"), absl::string_view::npos);
}

}  // namespace
}  // namespace strata::proto
