#include "store/transport/stream_frame.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::transport {
namespace {

TEST(StreamFrameTest, GoldenBytesRoundTrip) {
  uint8_t bytes[kFrameHeaderBytes];
  EncodeFrameHeader(
      {.id = 0x0102, .acked = true, .header_size = 0x0304, .payload_size = 0x05060708}, bytes);
  const std::vector<uint8_t> expected = {0x53, 0x01, 0x02, 0x01, 0x01, 0x00, 0x04, 0x03,
                                         0x08, 0x07, 0x06, 0x05, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + kFrameHeaderBytes), expected);
  ASSERT_OK_AND_ASSIGN(const FrameHeader frame, DecodeFrameHeader(bytes, FrameLimits{}));
  EXPECT_EQ(frame.id, 0x0102);
  EXPECT_TRUE(frame.acked);
  EXPECT_EQ(frame.header_size, 0x0304);
  EXPECT_EQ(frame.payload_size, 0x05060708u);
}

TEST(StreamFrameTest, RejectsWhatIsNotAFrameOrBreaksALimit) {
  const FrameLimits limits{.max_header_size = 100, .max_payload_size = 1 << 20};
  auto decode = [&](FrameHeader frame, int corrupt_byte = -1, uint8_t value = 0) {
    uint8_t bytes[kFrameHeaderBytes];
    EncodeFrameHeader(frame, bytes);
    if (corrupt_byte >= 0) bytes[corrupt_byte] = value;
    return DecodeFrameHeader(bytes, limits).status();
  };
  EXPECT_OK(decode({.id = 1, .header_size = 100, .payload_size = kMaxEagerPayload}));
  EXPECT_OK(decode({.id = 1, .acked = true, .header_size = 0, .payload_size = 1 << 20}));
  EXPECT_CODE(decode({.id = 1}, 0, 0x54), absl::StatusCode::kInvalidArgument);  // magic
  EXPECT_CODE(decode({.id = 1}, 1, 2), absl::StatusCode::kInvalidArgument);     // version
  EXPECT_CODE(decode({.id = 1}, 4, 0x02), absl::StatusCode::kInvalidArgument);  // flag
  EXPECT_CODE(decode({.id = 1}, 5, 0x01), absl::StatusCode::kInvalidArgument);  // reserved
  EXPECT_CODE(decode({.id = 1, .header_size = 101}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(decode({.id = 1, .acked = true, .payload_size = (1 << 20) + 1}),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(decode({.id = 1, .payload_size = kMaxEagerPayload + 1}),
              absl::StatusCode::kInvalidArgument);
  const uint8_t short_input[4] = {0x53, 0x01, 0, 0};
  EXPECT_CODE(DecodeFrameHeader(short_input, limits).status(), absl::StatusCode::kInvalidArgument);
}

TEST(StreamFrameTest, AckRoundTripAndRejects) {
  uint8_t bytes[kAckHeaderBytes];
  EncodeAckHeader({.sequence = 77, .outcome = kAckDropped}, bytes);
  ASSERT_OK_AND_ASSIGN(const AckHeader ack, DecodeAckHeader(bytes));
  EXPECT_EQ(ack.sequence, 77u);
  EXPECT_EQ(ack.outcome, kAckDropped);
  bytes[8] = 9;
  EXPECT_CODE(DecodeAckHeader(bytes).status(), absl::StatusCode::kInvalidArgument);
  bytes[8] = kAckReceived;
  bytes[15] = 1;
  EXPECT_CODE(DecodeAckHeader(bytes).status(), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(DecodeAckHeader(absl::MakeConstSpan(bytes, 15)).status(),
              absl::StatusCode::kInvalidArgument);
}

// Random input decodes to a frame within the limits or to INVALID_ARGUMENT, never more.
TEST(StreamFrameTest, RandomInputIsAFrameWithinLimitsOrInvalidArgument) {
  const FrameLimits limits{.max_header_size = 8192, .max_payload_size = uint64_t{1} << 32};
  std::mt19937_64 rng(3);
  int valid = 0;
  for (int i = 0; i < 200000; ++i) {
    uint8_t bytes[kFrameHeaderBytes];
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    if (i % 2 == 0) {
      bytes[0] = kFrameMagic;
      bytes[1] = kFrameVersion;
      bytes[5] = 0;
      bytes[4] &= 1;
      bytes[7] &= 0x1f;
      for (int k = 12; k < 16; ++k) bytes[k] = 0;
    }
    absl::StatusOr<FrameHeader> frame = DecodeFrameHeader(bytes, limits);
    if (!frame.ok()) {
      ASSERT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
      continue;
    }
    ++valid;
    ASSERT_LE(frame->header_size, limits.max_header_size);
    ASSERT_LE(frame->payload_size, limits.max_payload_size);
    if (!frame->acked) {
      ASSERT_LE(frame->payload_size, kMaxEagerPayload);
    }
  }
  EXPECT_GT(valid, 0);
}

}  // namespace
}  // namespace strata::store::transport
