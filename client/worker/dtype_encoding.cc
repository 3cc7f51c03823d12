#include "strata/worker/dtype_encoding.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#include "internal/element_encoder.h"

namespace strata::worker {
namespace {

uint32_t FloatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// x / 2^shift rounded to nearest, ties to even. shift >= 1.
uint32_t ShiftRightRoundEven(uint32_t x, uint32_t shift) {
  if (shift > 33) return 0;  // x < 2^32: the quotient is < 1/2
  const uint64_t wide = x;
  const uint64_t quotient = wide >> shift;
  const uint64_t remainder = wide & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  const bool round_up = remainder > half || (remainder == half && (quotient & 1) != 0);
  return static_cast<uint32_t>(quotient + (round_up ? 1 : 0));
}

// A binary floating-point format of at most 16 bits with 1 sign bit.
struct Minifloat {
  uint32_t exponent_bits;
  uint32_t mantissa_bits;
  int32_t bias;
  uint32_t max_finite;  // largest finite magnitude code
  uint32_t infinity;    // magnitude code of infinity; 0 when the format has none
  uint32_t nan;         // canonical NaN magnitude code
  bool saturate;        // overflow -> max_finite (else -> infinity)
};

constexpr Minifloat kFloat16{5, 10, 15, 0x7BFF, 0x7C00, 0x7E00, false};
constexpr Minifloat kE4M3{4, 3, 7, 0x7E, 0, 0x7F, true};
constexpr Minifloat kE5M2{5, 2, 15, 0x7B, 0x7C, 0x7E, true};

uint32_t EncodeMinifloat(const Minifloat& f, float x) {
  const uint32_t bits = FloatBits(x);
  const uint32_t sign = (bits >> 31) << (f.exponent_bits + f.mantissa_bits);
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) return f.nan;  // NaN
  const int32_t exponent_field = static_cast<int32_t>(magnitude >> 23);
  // Unbiased exponent and significand of x (float subnormals: exponent -126,
  // no implicit bit).
  const int32_t exponent = exponent_field == 0 ? -126 : exponent_field - 127;
  const int32_t min_normal_exponent = 1 - f.bias;
  uint32_t code;
  if (exponent >= min_normal_exponent) {
    // Round the float's exponent+mantissa bits at the target's mantissa width;
    // a carry out of the mantissa correctly bumps the exponent.
    const uint32_t rounded = ShiftRightRoundEven(magnitude, 23 - f.mantissa_bits);
    code = rounded - (static_cast<uint32_t>(127 - f.bias) << f.mantissa_bits);
  } else {
    // Subnormal (or zero) in the target: count its ulps 2^(min_normal - m).
    const uint32_t significand =
        exponent_field == 0 ? (magnitude & 0x7FFFFF) : ((magnitude & 0x7FFFFF) | 0x800000);
    const uint32_t shift = static_cast<uint32_t>(23 - static_cast<int32_t>(f.mantissa_bits) +
                                                 min_normal_exponent - exponent);
    code = ShiftRightRoundEven(significand, shift);  // 1 << mantissa_bits = min normal
  }
  if (code > f.max_finite) {
    code = (f.saturate || f.infinity == 0) ? f.max_finite : f.infinity;
  }
  return sign | code;
}

float DecodeMinifloat(const Minifloat& f, uint32_t code) {
  const uint32_t width = f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = ((code >> width) & 1) << 31;
  const uint32_t magnitude = code & ((1u << width) - 1);
  if (f.infinity != 0 && magnitude == f.infinity) return BitsToFloat(sign | 0x7F800000);
  if (magnitude > f.max_finite && magnitude != f.infinity) return BitsToFloat(sign | 0x7FC00000);
  const uint32_t exponent_field = magnitude >> f.mantissa_bits;
  const uint32_t mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
  if (exponent_field == 0) {
    // mantissa * 2^(1 - bias - mantissa_bits): an exact product (the power of
    // two is a normal float for every format here).
    const int32_t scale_exponent = 1 - f.bias - static_cast<int32_t>(f.mantissa_bits);
    const float scale = BitsToFloat(static_cast<uint32_t>(scale_exponent + 127) << 23);
    const float value = static_cast<float>(mantissa) * scale;
    return sign != 0 ? -value : value;
  }
  const uint32_t float_exponent = exponent_field + static_cast<uint32_t>(127 - f.bias);
  return BitsToFloat(sign | (float_exponent << 23) | (mantissa << (23 - f.mantissa_bits)));
}

// RNE(x * 64) as an integer, x * 64 clamped to [-128, 127] first.
int32_t ScaledRoundEven(float x) {
  if (x != x) return 0;         // NaN
  float y = x * kIntegerScale;  // exact unless it overflows, which the clamp absorbs
  if (y < -128.0f) y = -128.0f;
  if (y > 127.0f) y = 127.0f;
  const uint32_t bits = FloatBits(y);
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  const int32_t exponent_field = static_cast<int32_t>(magnitude >> 23);
  if (exponent_field == 0) return 0;              // zero or subnormal: rounds to 0
  const int32_t exponent = exponent_field - 127;  // <= 7 after the clamp
  const uint32_t significand = (magnitude & 0x7FFFFF) | 0x800000;
  // |y| = significand * 2^(exponent - 23); exponent <= 7 so the shift is >= 16.
  const int32_t rounded =
      static_cast<int32_t>(ShiftRightRoundEven(significand, static_cast<uint32_t>(23 - exponent)));
  return (bits >> 31) != 0 ? -rounded : rounded;
}

void PutLittleEndian16(uint16_t v, std::byte* out) {
  out[0] = static_cast<std::byte>(v & 0xFF);
  out[1] = static_cast<std::byte>(v >> 8);
}

uint16_t GetLittleEndian16(const std::byte* in) {
  return static_cast<uint16_t>(static_cast<uint16_t>(in[0]) | (static_cast<uint16_t>(in[1]) << 8));
}

}  // namespace

uint16_t FloatToFloat16(float x) {
  const uint32_t bits = FloatBits(x);
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  // Fast path, the same rounding as EncodeMinifloat's normal case: |x| in
  // [2^-14, 65520), which rounds to a normal float16 without overflowing.
  if (magnitude >= 0x38800000 && magnitude < 0x477FF000) {
    const uint32_t rounded = (magnitude + 0xFFF + ((magnitude >> 13) & 1)) >> 13;
    return static_cast<uint16_t>(((bits >> 16) & 0x8000) | (rounded - (uint32_t{112} << 10)));
  }
  return static_cast<uint16_t>(EncodeMinifloat(kFloat16, x));
}
float Float16ToFloat(uint16_t code) { return DecodeMinifloat(kFloat16, code); }

uint16_t FloatToBFloat16(float x) {
  const uint32_t bits = FloatBits(x);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return 0x7FC0;  // NaN
  // RNE at bit 16; a carry into the exponent is right, up to infinity.
  const uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}
float BFloat16ToFloat(uint16_t code) { return BitsToFloat(static_cast<uint32_t>(code) << 16); }

uint8_t FloatToFloat8E4M3(float x) { return static_cast<uint8_t>(EncodeMinifloat(kE4M3, x)); }
float Float8E4M3ToFloat(uint8_t code) { return DecodeMinifloat(kE4M3, code); }

uint8_t FloatToFloat8E5M2(float x) { return static_cast<uint8_t>(EncodeMinifloat(kE5M2, x)); }
float Float8E5M2ToFloat(uint8_t code) { return DecodeMinifloat(kE5M2, code); }

int8_t FloatToInt8(float x) { return static_cast<int8_t>(ScaledRoundEven(x)); }
float Int8ToFloat(int8_t code) { return static_cast<float>(code) / kIntegerScale; }

uint8_t FloatToUInt8(float x) { return static_cast<uint8_t>(ScaledRoundEven(x) + 128); }
float UInt8ToFloat(uint8_t code) { return static_cast<float>(int32_t{code} - 128) / kIntegerScale; }

namespace internal {

void EncodeRow(radix::DType dtype, const float* values, size_t n, std::byte* dst) {
  switch (dtype) {
    case radix::DType::kFloat16:
      for (size_t i = 0; i < n; ++i) PutLittleEndian16(FloatToFloat16(values[i]), dst + 2 * i);
      break;
    case radix::DType::kBFloat16:
      for (size_t i = 0; i < n; ++i) PutLittleEndian16(FloatToBFloat16(values[i]), dst + 2 * i);
      break;
    case radix::DType::kFloat32:
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = FloatBits(values[i]);
        PutLittleEndian16(static_cast<uint16_t>(bits & 0xFFFF), dst + 4 * i);
        PutLittleEndian16(static_cast<uint16_t>(bits >> 16), dst + 4 * i + 2);
      }
      break;
    case radix::DType::kFloat8E4M3:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<std::byte>(FloatToFloat8E4M3(values[i]));
      break;
    case radix::DType::kFloat8E5M2:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<std::byte>(FloatToFloat8E5M2(values[i]));
      break;
    case radix::DType::kInt8:
      for (size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<std::byte>(static_cast<uint8_t>(FloatToInt8(values[i])));
      }
      break;
    case radix::DType::kUInt8:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<std::byte>(FloatToUInt8(values[i]));
      break;
  }
}

}  // namespace internal

absl::Status EncodeElements(radix::DType dtype, absl::Span<const float> values,
                            absl::Span<std::byte> out) {
  const uint32_t size = radix::DTypeSize(dtype);
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode to ", radix::DTypeName(dtype), ": not a dtype"));
  }
  if (out.size() != values.size() * size) {
    return absl::InvalidArgumentError(
        absl::StrCat("encoding ", values.size(), " ", radix::DTypeName(dtype), " values needs ",
                     values.size() * size, " bytes, got ", out.size()));
  }
  internal::EncodeRow(dtype, values.data(), values.size(), out.data());
  return absl::OkStatus();
}

absl::Status DecodeElements(radix::DType dtype, absl::Span<const std::byte> bytes,
                            absl::Span<float> out) {
  const uint32_t size = radix::DTypeSize(dtype);
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot decode ", radix::DTypeName(dtype), ": not a dtype"));
  }
  if (bytes.size() != out.size() * size) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoding ", out.size(), " ", radix::DTypeName(dtype), " values needs ",
                     out.size() * size, " bytes, got ", bytes.size()));
  }
  const std::byte* src = bytes.data();
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case radix::DType::kFloat16:
        out[i] = Float16ToFloat(GetLittleEndian16(src + 2 * i));
        break;
      case radix::DType::kBFloat16:
        out[i] = BFloat16ToFloat(GetLittleEndian16(src + 2 * i));
        break;
      case radix::DType::kFloat32:
        out[i] = BitsToFloat(static_cast<uint32_t>(GetLittleEndian16(src + 4 * i)) |
                             (static_cast<uint32_t>(GetLittleEndian16(src + 4 * i + 2)) << 16));
        break;
      case radix::DType::kFloat8E4M3:
        out[i] = Float8E4M3ToFloat(static_cast<uint8_t>(src[i]));
        break;
      case radix::DType::kFloat8E5M2:
        out[i] = Float8E5M2ToFloat(static_cast<uint8_t>(src[i]));
        break;
      case radix::DType::kInt8:
        out[i] = Int8ToFloat(static_cast<int8_t>(static_cast<uint8_t>(src[i])));
        break;
      case radix::DType::kUInt8:
        out[i] = UInt8ToFloat(static_cast<uint8_t>(src[i]));
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::worker
