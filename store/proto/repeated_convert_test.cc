#include "strata/proto/repeated_convert.h"

#include <cstdint>
#include <limits>
#include <string>
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
  ASSERT_OK_AND_ASSIGN(absl::Span<const radix::TokenId> view,
                       TokensFromProto(request.tokens(), "tokens"));
  EXPECT_EQ(std::vector<radix::TokenId>(view.begin(), view.end()), tokens);
  EXPECT_EQ(view.data(), request.tokens().data());  // no copy

  // Replaces, not appends.
  TokensToProto(std::vector<radix::TokenId>{7}, request.mutable_tokens());
  EXPECT_EQ(request.tokens_size(), 1);
}

TEST(RepeatedConvertTest, TokensArePacked) {
  v1::MatchRequest request;
  TokensToProto(std::vector<radix::TokenId>{1, 2, 300}, request.mutable_tokens());
  // One length-delimited field 2 (tag 0x12) of 4 bytes: 01 02 ac 02.
  EXPECT_EQ(request.SerializeAsString(), std::string("\x12\x04\x01\x02\xac\x02", 6));
}

TEST(RepeatedConvertTest, TooManyTokensIsInvalidArgumentNamingTheLimit) {
  v1::MatchRequest request;
  request.mutable_tokens()->Resize(static_cast<int>(kMaxTokensPerRequest), 5);
  EXPECT_OK(TokensFromProto(request.tokens(), "tokens"));
  request.add_tokens(5);
  const auto out = TokensFromProto(request.tokens(), "tokens");
  EXPECT_CODE(out, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "tokens: 2097153 entries exceed the limit of 2097152");
}

TEST(RepeatedConvertTest, EmptyTokensAreAnEmptyView) {
  v1::MatchRequest request;
  ASSERT_OK_AND_ASSIGN(absl::Span<const radix::TokenId> view,
                       TokensFromProto(request.tokens(), "tokens"));
  EXPECT_TRUE(view.empty());
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
