#include "strata/proto/key_convert.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::proto {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(KeyConvertTest, PrefixHashRoundTripsEveryValue) {
  for (const radix::PrefixHash& h : {radix::PrefixHash{0, 0}, radix::PrefixHash{kMax, kMax},
                                     radix::PrefixHash{0x0123456789abcdef, 0xfedcba9876543210}}) {
    v1::PrefixHash wire;
    ToProto(h, &wire);
    EXPECT_EQ(PrefixHashFromProto(wire), h);
  }
}

TEST(KeyConvertTest, BlobKeyRoundTrips) {
  const radix::BlobKey key{.hash = {.hi = 0x0123456789abcdef, .lo = 0xfedcba9876543210}};
  v1::BlobKey wire;
  ToProto(key, &wire);
  EXPECT_EQ(wire.hi(), key.hash.hi);
  EXPECT_EQ(wire.lo(), key.hash.lo);
  ASSERT_OK_AND_ASSIGN(radix::BlobKey back, BlobKeyFromProto(wire, "key"));
  EXPECT_EQ(back, key);
}

TEST(KeyConvertTest, KeysWithOneZeroWordAreValid) {
  v1::BlobKey hi_only;
  hi_only.set_hi(1);
  EXPECT_OK(BlobKeyFromProto(hi_only, "key"));
  v1::BlobKey lo_only;
  lo_only.set_lo(1);
  EXPECT_OK(BlobKeyFromProto(lo_only, "key"));
}

TEST(KeyConvertTest, UnsetOrZeroKeyIsMissing) {
  v1::BlobKey unset;
  const auto out = BlobKeyFromProto(unset, "ranges[2].blob");
  EXPECT_CODE(out, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message().substr(0, 24), "ranges[2].blob: missing ");

  v1::BlobKey zero;
  zero.set_hi(0);
  zero.set_lo(0);
  EXPECT_CODE(BlobKeyFromProto(zero, "key"), absl::StatusCode::kInvalidArgument);
}

TEST(KeyConvertTest, WireEncodingIsTwoLittleEndianFixed64) {
  v1::BlobKey wire;
  wire.set_hi(0x0807060504030201);
  wire.set_lo(0x1817161514131211);
  const std::string bytes = wire.SerializeAsString();
  // field 1 wire type 1 (fixed64) = tag 0x09; field 2 = tag 0x11.
  const std::string expected(
      "\x09\x01\x02\x03\x04\x05\x06\x07\x08"
      "\x11\x11\x12\x13\x14\x15\x16\x17\x18",
      18);
  EXPECT_EQ(bytes, expected);
}

}  // namespace
}  // namespace strata::proto
