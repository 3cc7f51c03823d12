#include "strata/worker/dtype_encoding.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::worker {
namespace {

using radix::DType;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

// IEEE binary16 values worked out by hand from the format (bias 15, 10
// mantissa bits, largest finite 65504, smallest subnormal 2^-24).
TEST(Float16Test, KnownValues) {
  EXPECT_EQ(FloatToFloat16(1.0f), 0x3C00);
  EXPECT_EQ(FloatToFloat16(-2.0f), 0xC000);
  EXPECT_EQ(FloatToFloat16(0.5f), 0x3800);
  EXPECT_EQ(FloatToFloat16(0.1f), 0x2E66);
  EXPECT_EQ(FloatToFloat16(0.0f), 0x0000);
  EXPECT_EQ(FloatToFloat16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToFloat16(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToFloat16(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(FloatToFloat16(65520.0f), 0x7C00);  // tie between 65504 (odd) and 2^16: infinity
  EXPECT_EQ(FloatToFloat16(1e10f), 0x7C00);
  EXPECT_EQ(FloatToFloat16(kInf), 0x7C00);
  EXPECT_EQ(FloatToFloat16(-kInf), 0xFC00);
  EXPECT_EQ(FloatToFloat16(kNaN), 0x7E00);
  EXPECT_EQ(FloatToFloat16(0x1p-14f), 0x0400);             // smallest normal
  EXPECT_EQ(FloatToFloat16(0x1p-14f - 0x1p-24f), 0x03FF);  // largest subnormal
  EXPECT_EQ(FloatToFloat16(0x1p-24f), 0x0001);             // smallest subnormal
  EXPECT_EQ(FloatToFloat16(0x1p-25f), 0x0000);             // tie: to even (0)
  EXPECT_EQ(FloatToFloat16(0x1.8p-25f), 0x0001);           // 0.75 ulp: up
  EXPECT_EQ(FloatToFloat16(0x1.8p-24f), 0x0002);           // 1.5 ulp tie: to even (2)
  EXPECT_EQ(FloatToFloat16(1e-10f), 0x0000);
  EXPECT_EQ(FloatToFloat16(1.0f + 0x1p-11f), 0x3C00);    // tie: to even
  EXPECT_EQ(FloatToFloat16(1.0f + 0x1.8p-10f), 0x3C02);  // tie: to even
  EXPECT_EQ(FloatToFloat16(1.0f + 0x1.2p-11f), 0x3C01);  // past the tie: up
  EXPECT_EQ(Float16ToFloat(0x3C00), 1.0f);
  EXPECT_EQ(Float16ToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(Float16ToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(Float16ToFloat(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(Float16ToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(Float16ToFloat(0x7C01)));
}

TEST(BFloat16Test, KnownValues) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBFloat16(-1.0f), 0xBF80);
  EXPECT_EQ(FloatToBFloat16(1.0f + 0x1p-8f), 0x3F80);                     // tie: to even
  EXPECT_EQ(FloatToBFloat16(1.0f + 0x1.8p-7f), 0x3F82);                   // tie: to even
  EXPECT_EQ(FloatToBFloat16(0.1f), 0x3DCD);                               // 0x3DCCCCCD rounds up
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7F80);  // overflow: inf
  EXPECT_EQ(FloatToBFloat16(kInf), 0x7F80);
  EXPECT_EQ(FloatToBFloat16(-kInf), 0xFF80);
  EXPECT_EQ(FloatToBFloat16(kNaN), 0x7FC0);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(FloatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(BFloat16ToFloat(0x3DCD), 0.10009765625f);
  EXPECT_EQ(BFloat16ToFloat(0x3F80), 1.0f);
}

// OCP FP8 E4M3 ("e4m3fn"): bias 7, largest finite 448 (0x7E), 0x7F is NaN, no
// infinity; smallest subnormal 2^-9.
TEST(Float8E4M3Test, KnownValues) {
  EXPECT_EQ(FloatToFloat8E4M3(1.0f), 0x38);
  EXPECT_EQ(FloatToFloat8E4M3(-1.0f), 0xB8);
  EXPECT_EQ(FloatToFloat8E4M3(0.1f), 0x1D);  // 1.6 * 2^-4: mantissa 4.8/8 -> 5
  EXPECT_EQ(FloatToFloat8E4M3(240.0f), 0x77);
  EXPECT_EQ(FloatToFloat8E4M3(448.0f), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3(464.0f), 0x7E);  // tie between 448 and 480: even 448
  EXPECT_EQ(FloatToFloat8E4M3(480.0f), 0x7E);  // past 448: saturates
  EXPECT_EQ(FloatToFloat8E4M3(1e6f), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3(kInf), 0x7E);
  EXPECT_EQ(FloatToFloat8E4M3(-kInf), 0xFE);
  EXPECT_EQ(FloatToFloat8E4M3(-448.0f), 0xFE);
  EXPECT_EQ(FloatToFloat8E4M3(kNaN), 0x7F);
  EXPECT_EQ(FloatToFloat8E4M3(0x1p-6f), 0x08);     // smallest normal
  EXPECT_EQ(FloatToFloat8E4M3(0x1p-9f), 0x01);     // smallest subnormal
  EXPECT_EQ(FloatToFloat8E4M3(0x1p-10f), 0x00);    // tie: to even (0)
  EXPECT_EQ(FloatToFloat8E4M3(0x1.8p-10f), 0x01);  // 0.75 ulp: up
  EXPECT_EQ(Float8E4M3ToFloat(0x1D), 0.1015625f);
  EXPECT_EQ(Float8E4M3ToFloat(0x7E), 448.0f);
  EXPECT_EQ(Float8E4M3ToFloat(0x01), 0x1p-9f);
  EXPECT_EQ(Float8E4M3ToFloat(0x80), -0.0f);
  EXPECT_TRUE(std::signbit(Float8E4M3ToFloat(0x80)));
  EXPECT_TRUE(std::isnan(Float8E4M3ToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(Float8E4M3ToFloat(0xFF)));
}

// OCP FP8 E5M2: bias 15, largest finite 57344 (0x7B), infinity 0x7C.
TEST(Float8E5M2Test, KnownValues) {
  EXPECT_EQ(FloatToFloat8E5M2(1.0f), 0x3C);
  EXPECT_EQ(FloatToFloat8E5M2(0.1f), 0x2E);  // 1.6 * 2^-4: mantissa 2.4/4 -> 2
  EXPECT_EQ(FloatToFloat8E5M2(57344.0f), 0x7B);
  EXPECT_EQ(FloatToFloat8E5M2(61440.0f), 0x7B);  // tie rounds to 2^16: saturates
  EXPECT_EQ(FloatToFloat8E5M2(kInf), 0x7B);
  EXPECT_EQ(FloatToFloat8E5M2(-kInf), 0xFB);
  EXPECT_EQ(FloatToFloat8E5M2(kNaN), 0x7E);
  EXPECT_EQ(FloatToFloat8E5M2(0x1p-14f), 0x04);  // smallest normal
  EXPECT_EQ(FloatToFloat8E5M2(0x1p-16f), 0x01);  // smallest subnormal
  EXPECT_EQ(FloatToFloat8E5M2(0x1p-17f), 0x00);  // tie: to even (0)
  EXPECT_EQ(Float8E5M2ToFloat(0x2E), 0.09375f);
  EXPECT_EQ(Float8E5M2ToFloat(0x7C), kInf);
  EXPECT_EQ(Float8E5M2ToFloat(0xFC), -kInf);
  EXPECT_TRUE(std::isnan(Float8E5M2ToFloat(0x7D)));
}

TEST(IntegerTest, KnownValues) {
  EXPECT_EQ(FloatToInt8(0.0f), 0);
  EXPECT_EQ(FloatToInt8(1.0f / 64), 1);
  EXPECT_EQ(FloatToInt8(0.5f / 64), 0);    // tie: to even
  EXPECT_EQ(FloatToInt8(1.5f / 64), 2);    // tie: to even
  EXPECT_EQ(FloatToInt8(2.5f / 64), 2);    // tie: to even
  EXPECT_EQ(FloatToInt8(-2.5f / 64), -2);  // tie: to even
  EXPECT_EQ(FloatToInt8(-2.6f / 64), -3);
  EXPECT_EQ(FloatToInt8(1.0f), 64);
  EXPECT_EQ(FloatToInt8(127.0f / 64), 127);
  EXPECT_EQ(FloatToInt8(2.0f), 127);  // clamps
  EXPECT_EQ(FloatToInt8(-2.0f), -128);
  EXPECT_EQ(FloatToInt8(-3.0f), -128);
  EXPECT_EQ(FloatToInt8(kInf), 127);
  EXPECT_EQ(FloatToInt8(-kInf), -128);
  EXPECT_EQ(FloatToInt8(kNaN), 0);
  EXPECT_EQ(FloatToInt8(1e-30f), 0);
  EXPECT_EQ(Int8ToFloat(-128), -2.0f);
  EXPECT_EQ(Int8ToFloat(64), 1.0f);

  EXPECT_EQ(FloatToUInt8(0.0f), 128);
  EXPECT_EQ(FloatToUInt8(1.0f / 64), 129);
  EXPECT_EQ(FloatToUInt8(-2.0f), 0);
  EXPECT_EQ(FloatToUInt8(2.0f), 255);
  EXPECT_EQ(FloatToUInt8(-0.5f / 64), 128);
  EXPECT_EQ(FloatToUInt8(kNaN), 128);
  EXPECT_EQ(UInt8ToFloat(0), -2.0f);
  EXPECT_EQ(UInt8ToFloat(255), 127.0f / 64);
}

// The float formats: every finite code decodes and re-encodes to itself, and
// between two neighbouring codes the exact midpoint goes to the even code, the
// floats just below and above it to the nearer code. This exercises RNE at every
// exponent, subnormals included, without a reference implementation.
struct FloatFormat {
  const char* name;
  int magnitude_codes;  // codes of non-negative finite values: [0, magnitude_codes)
  uint32_t sign_bit;
  std::function<uint32_t(float)> encode;
  std::function<float(uint32_t)> decode;
};

std::vector<FloatFormat> FloatFormats() {
  return {
      {"float16", 0x7C00, 0x8000, [](float x) { return uint32_t{FloatToFloat16(x)}; },
       [](uint32_t c) { return Float16ToFloat(static_cast<uint16_t>(c)); }},
      {"bfloat16", 0x7F80, 0x8000, [](float x) { return uint32_t{FloatToBFloat16(x)}; },
       [](uint32_t c) { return BFloat16ToFloat(static_cast<uint16_t>(c)); }},
      {"e4m3", 0x7F, 0x80, [](float x) { return uint32_t{FloatToFloat8E4M3(x)}; },
       [](uint32_t c) { return Float8E4M3ToFloat(static_cast<uint8_t>(c)); }},
      {"e5m2", 0x7C, 0x80, [](float x) { return uint32_t{FloatToFloat8E5M2(x)}; },
       [](uint32_t c) { return Float8E5M2ToFloat(static_cast<uint8_t>(c)); }},
  };
}

TEST(FloatFormatTest, EveryCodeRoundTripsAndMidpointsRoundToEven) {
  for (const FloatFormat& f : FloatFormats()) {
    SCOPED_TRACE(f.name);
    int failures = 0;
    for (int c = 0; c < f.magnitude_codes && failures < 5; ++c) {
      const float value = f.decode(c);
      if (f.encode(value) != static_cast<uint32_t>(c)) ++failures;
      EXPECT_EQ(f.encode(value), static_cast<uint32_t>(c)) << "code " << c;
      EXPECT_EQ(f.encode(-value), f.sign_bit | c) << "code " << c;
      EXPECT_EQ(Bits(f.decode(f.sign_bit | c)), Bits(-value)) << "code " << c;
      if (c + 1 == f.magnitude_codes) break;
      const float next = f.decode(c + 1);
      ASSERT_LT(value, next) << "codes are monotone";
      // Exact: the midpoint of two neighbours has one more significant bit.
      const float mid = static_cast<float>((static_cast<double>(value) + next) / 2);
      ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(value) + next) / 2);
      const uint32_t even = (c % 2 == 0) ? c : c + 1;
      EXPECT_EQ(f.encode(mid), even) << "midpoint above code " << c;
      EXPECT_EQ(f.encode(std::nextafter(mid, 0.0f)), static_cast<uint32_t>(c)) << c;
      EXPECT_EQ(f.encode(std::nextafter(mid, kInf)), static_cast<uint32_t>(c + 1)) << c;
    }
    EXPECT_EQ(failures, 0);
  }
}

#ifdef __FLT16_MAX__
// An independent reference: the compiler's _Float16 conversion (libgcc,
// round-to-nearest-even) on random and special float bit patterns.
TEST(Float16Test, MatchesCompilerFloat16OnRandomFloats) {
  std::mt19937_64 rng(42);
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    // Half the samples get an exponent in float16's range (2^-27 .. 2^18),
    // where its rounding, subnormals and overflow are.
    if (i % 2 == 0) bits = (bits & 0x807FFFFF) | ((100 + static_cast<uint32_t>(i / 2) % 46) << 23);
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    if (std::isnan(x)) continue;
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t want;
    std::memcpy(&want, &h, sizeof(want));
    if (FloatToFloat16(x) != want && ++mismatches <= 5) {
      ADD_FAILURE() << "x=" << x << " bits=" << std::hex << bits << " got " << FloatToFloat16(x)
                    << " want " << want;
    }
  }
  EXPECT_EQ(mismatches, 0);
}
#endif

TEST(EncodeElementsTest, WritesLittleEndianAndRoundTrips) {
  const std::vector<float> values = {1.0f, -0.5f, 0.1f, 1.75f};
  std::vector<std::byte> bytes(4 * 2);
  ASSERT_OK(EncodeElements(DType::kFloat16, values, absl::MakeSpan(bytes)));
  EXPECT_EQ(bytes[0], std::byte{0x00});  // 0x3C00, low byte first
  EXPECT_EQ(bytes[1], std::byte{0x3C});
  EXPECT_EQ(bytes[4], std::byte{0x66});  // 0x2E66
  EXPECT_EQ(bytes[5], std::byte{0x2E});

  std::vector<std::byte> f32(4 * 4);
  ASSERT_OK(EncodeElements(DType::kFloat32, values, absl::MakeSpan(f32)));
  EXPECT_EQ(f32[0], std::byte{0x00});  // 1.0f = 0x3F800000
  EXPECT_EQ(f32[2], std::byte{0x80});
  EXPECT_EQ(f32[3], std::byte{0x3F});

  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat8E4M3,
                      DType::kFloat8E5M2, DType::kInt8, DType::kUInt8}) {
    SCOPED_TRACE(radix::DTypeName(dtype));
    std::vector<std::byte> encoded(values.size() * radix::DTypeSize(dtype));
    ASSERT_OK(EncodeElements(dtype, values, absl::MakeSpan(encoded)));
    std::vector<float> decoded(values.size());
    ASSERT_OK(DecodeElements(dtype, encoded, absl::MakeSpan(decoded)));
    // 1, -0.5 and 1.75 are exact in every dtype, so they come back unchanged.
    for (size_t i : {0, 1, 3}) EXPECT_EQ(decoded[i], values[i]) << i;
  }
}

TEST(EncodeElementsTest, RejectsWrongSizesAndUnknownDTypes) {
  const std::vector<float> values = {1.0f, 2.0f};
  std::vector<std::byte> bytes(3);
  EXPECT_CODE(EncodeElements(DType::kFloat16, values, absl::MakeSpan(bytes)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(EncodeElements(DType{0}, values, absl::MakeSpan(bytes)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(EncodeElements(DType{99}, values, absl::MakeSpan(bytes)),
              absl::StatusCode::kInvalidArgument);
  std::vector<float> out(2);
  EXPECT_CODE(DecodeElements(DType::kFloat32, bytes, absl::MakeSpan(out)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(DecodeElements(DType{8}, bytes, absl::MakeSpan(out)),
              absl::StatusCode::kInvalidArgument);
  // Nothing written on error.
  std::vector<std::byte> untouched(4, std::byte{0xAB});
  EXPECT_CODE(EncodeElements(DType::kFloat32, values, absl::MakeSpan(untouched)),
              absl::StatusCode::kInvalidArgument);
  for (std::byte b : untouched) EXPECT_EQ(b, std::byte{0xAB});
}

}  // namespace
}  // namespace strata::worker
