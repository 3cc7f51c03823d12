#include "strata/worker/dtype_encoding.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#include "internal/element_encoder.h"
#include "strata/gpu/reference_math.h"

namespace strata::worker {
namespace {

using gpu::reference::BitsToFloat;
using gpu::reference::DecodeMinifloat;
using gpu::reference::FloatBits;
using gpu::reference::Minifloat;
constexpr Minifloat kFloat16 = gpu::reference::Float16Format();
constexpr Minifloat kE4M3 = gpu::reference::E4M3Format();
constexpr Minifloat kE5M2 = gpu::reference::E5M2Format();

void PutLittleEndian16(uint16_t v, std::byte* out) {
  out[0] = static_cast<std::byte>(v & 0xFF);
  out[1] = static_cast<std::byte>(v >> 8);
}

uint16_t GetLittleEndian16(const std::byte* in) {
  return static_cast<uint16_t>(static_cast<uint16_t>(in[0]) | (static_cast<uint16_t>(in[1]) << 8));
}

}  // namespace

uint16_t FloatToFloat16(float x) { return gpu::reference::FloatToFloat16(x); }
float Float16ToFloat(uint16_t code) { return DecodeMinifloat(kFloat16, code); }

uint16_t FloatToBFloat16(float x) { return gpu::reference::FloatToBFloat16(x); }
float BFloat16ToFloat(uint16_t code) { return BitsToFloat(static_cast<uint32_t>(code) << 16); }

uint8_t FloatToFloat8E4M3(float x) {
  return static_cast<uint8_t>(gpu::reference::EncodeMinifloat(kE4M3, x));
}
float Float8E4M3ToFloat(uint8_t code) { return DecodeMinifloat(kE4M3, code); }

uint8_t FloatToFloat8E5M2(float x) {
  return static_cast<uint8_t>(gpu::reference::EncodeMinifloat(kE5M2, x));
}
float Float8E5M2ToFloat(uint8_t code) { return DecodeMinifloat(kE5M2, code); }

int8_t FloatToInt8(float x) { return static_cast<int8_t>(gpu::reference::ScaledRoundEven(x)); }
float Int8ToFloat(int8_t code) { return static_cast<float>(code) / kIntegerScale; }

uint8_t FloatToUInt8(float x) {
  return static_cast<uint8_t>(gpu::reference::ScaledRoundEven(x) + 128);
}
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
