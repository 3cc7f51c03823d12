// Conversions between float and the KV element types of radix::DType, with
// explicit round-to-nearest-even done in integer arithmetic on the float's
// bits, so the result never depends on the compiler, the CPU or the floating-
// point environment (rounding mode, flush-to-zero). The reference model
// (reference_model.h) writes its KV through these; tests and demos decode with
// them.
//
// All functions are pure and thread-safe.
//
// Encodings (bytes little-endian; each float type keeps its sign bit):
//
//   dtype        size  float -> code                               overflow
//   -----------  ----  ------------------------------------------  ------------------
//   kFloat16     2     IEEE binary16, RNE, subnormals kept          +-inf (IEEE)
//   kBFloat16    2     bfloat16 (top half of binary32), RNE         +-inf (IEEE)
//   kFloat32     4     the binary32 bits unchanged                  -
//   kFloat8E4M3  1     OCP E4M3 ("e4m3fn": bias 7, no inf), RNE     saturates to +-448
//   kFloat8E5M2  1     OCP E5M2 (bias 15), RNE                      saturates to +-57344
//   kInt8        1     RNE(x * 64) clamped to [-128, 127]           clamps
//   kUInt8       1     RNE(x * 64) + 128 clamped to [0, 255]        clamps
//
// "Saturates" is CUDA's __NV_SATFINITE: finite values past the largest finite
// code and +-infinity become the largest finite code of their sign. NaN becomes
// the format's canonical NaN (fp16 0x7E00, bf16 0x7FC0, E4M3 0x7F, E5M2 0x7E),
// and 0 for the integer types. The integer types are fixed-point with scale
// kIntegerScale (1/64 per step; uint8 has zero point 128), so they hold
// [-2, 2) with a step of 1/64.
//
// Decoding is exact (every code is a float32 value); NaN codes decode to a
// quiet NaN.
//
// Errors: EncodeElements / DecodeElements return INVALID_ARGUMENT for a value
// that is not a DType enumerator, or when the byte count is not
// values * DTypeSize(dtype).
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

#include "strata/radix/kv_layout.h"

namespace strata::worker {

// Values per integer step of kInt8 and kUInt8.
inline constexpr float kIntegerScale = 64.0f;

uint16_t FloatToFloat16(float x);
float Float16ToFloat(uint16_t code);

uint16_t FloatToBFloat16(float x);
float BFloat16ToFloat(uint16_t code);

uint8_t FloatToFloat8E4M3(float x);
float Float8E4M3ToFloat(uint8_t code);

uint8_t FloatToFloat8E5M2(float x);
float Float8E5M2ToFloat(uint8_t code);

int8_t FloatToInt8(float x);
float Int8ToFloat(int8_t code);

uint8_t FloatToUInt8(float x);
float UInt8ToFloat(uint8_t code);

// Writes values[i] encoded as `dtype` at out[i * DTypeSize(dtype)], little-
// endian. `out` needs no alignment. INVALID_ARGUMENT for an unknown dtype or
// out.size() != values.size() * DTypeSize(dtype); nothing is written then.
absl::Status EncodeElements(radix::DType dtype, absl::Span<const float> values,
                            absl::Span<std::byte> out);

// The inverse: decodes bytes.size() / DTypeSize(dtype) elements into `out`.
// INVALID_ARGUMENT for an unknown dtype or bytes.size() != out.size() *
// DTypeSize(dtype).
absl::Status DecodeElements(radix::DType dtype, absl::Span<const std::byte> bytes,
                            absl::Span<float> out);

}  // namespace strata::worker
