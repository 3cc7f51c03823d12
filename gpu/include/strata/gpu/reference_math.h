// The reference model's arithmetic (client/worker/reference_model.h has its specification)
// written once for the host and for CUDA kernels, so that a blob computed on a GPU is the
// same bytes as one computed on the CPU: IEEE-754 binary32 +, *, / and |x| each rounded to
// nearest even, in the specification's order, never fused (on the device __fmul_rn /
// __fadd_rn / __fdiv_rn, which nvcc never contracts into an FMA; on the host plain
// operators, in translation units compiled with -ffp-contract=off), and the KV element
// encodings in integer arithmetic on the float's bits (dtype_encoding.h's table).
//
// Header-only, no dependencies: gpu/cuda/kernels.cu, the host device's reference of the
// kernels (gpu/host_device.cc) and client/worker's encoders include it. All functions are
// pure.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define STRATA_HOST_DEVICE __host__ __device__
#else
#define STRATA_HOST_DEVICE
#endif

namespace strata::gpu::reference {

// The model's residual width (worker::ReferenceModel::kModelDim).
inline constexpr uint32_t kModelDim = 32;

// ---- binary32 operations, rounded to nearest even, never fused

STRATA_HOST_DEVICE inline float Mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
STRATA_HOST_DEVICE inline float Add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
STRATA_HOST_DEVICE inline float Div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// |x|: the sign bit cleared (std::fabs).
STRATA_HOST_DEVICE inline float Abs(float x);

// dot(w, h) = (...((0 + w[0]*h[0]) + w[1]*h[1]) + ...) + w[D-1]*h[D-1], w's rows `stride`
// floats apart.
STRATA_HOST_DEVICE inline float Dot(const float* w, uint64_t stride, const float* h) {
  float acc = 0.0f;
  for (uint32_t r = 0; r < kModelDim; ++r) acc = Add(acc, Mul(w[r * stride], h[r]));
  return acc;
}

// One token's causal mix in one channel: s = 0.875 s + 0.125 u; x = h + s;
// h = (2x) / (2 + |x|).
STRATA_HOST_DEVICE inline void MixStep(float u, float* s, float* h) {
  *s = Add(Mul(0.875f, *s), Mul(0.125f, u));
  const float x = Add(*h, *s);
  *h = Div(Mul(2.0f, x), Add(2.0f, Abs(x)));
}

// ---- KV element encodings (worker/dtype_encoding.h: RNE in integer arithmetic)

enum class Element : uint8_t {
  kFloat16 = 1,
  kBFloat16 = 2,
  kFloat32 = 3,
  kFloat8E4M3 = 4,
  kFloat8E5M2 = 5,
  kInt8 = 6,
  kUInt8 = 7,
};

STRATA_HOST_DEVICE inline uint32_t ElementBytes(Element e) {
  switch (e) {
    case Element::kFloat16:
    case Element::kBFloat16:
      return 2;
    case Element::kFloat32:
      return 4;
    case Element::kFloat8E4M3:
    case Element::kFloat8E5M2:
    case Element::kInt8:
    case Element::kUInt8:
      return 1;
  }
  return 0;
}

STRATA_HOST_DEVICE inline uint32_t FloatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

STRATA_HOST_DEVICE inline float BitsToFloat(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

STRATA_HOST_DEVICE inline float Abs(float x) { return BitsToFloat(FloatBits(x) & 0x7FFFFFFF); }

// x / 2^shift rounded to nearest, ties to even. shift >= 1.
STRATA_HOST_DEVICE inline uint32_t ShiftRightRoundEven(uint32_t x, uint32_t shift) {
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

// The formats (functions, not variables: device code cannot refer to a host variable).
STRATA_HOST_DEVICE constexpr Minifloat Float16Format() {
  return {5, 10, 15, 0x7BFF, 0x7C00, 0x7E00, false};
}
STRATA_HOST_DEVICE constexpr Minifloat E4M3Format() { return {4, 3, 7, 0x7E, 0, 0x7F, true}; }
STRATA_HOST_DEVICE constexpr Minifloat E5M2Format() { return {5, 2, 15, 0x7B, 0x7C, 0x7E, true}; }

STRATA_HOST_DEVICE inline uint32_t EncodeMinifloat(Minifloat f, float x) {
  const uint32_t bits = FloatBits(x);
  const uint32_t sign = (bits >> 31) << (f.exponent_bits + f.mantissa_bits);
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) return f.nan;  // NaN
  const int32_t exponent_field = static_cast<int32_t>(magnitude >> 23);
  // Unbiased exponent and significand of x (float subnormals: exponent -126, no implicit
  // bit).
  const int32_t exponent = exponent_field == 0 ? -126 : exponent_field - 127;
  const int32_t min_normal_exponent = 1 - f.bias;
  uint32_t code;
  if (exponent >= min_normal_exponent) {
    // Round the float's exponent+mantissa bits at the target's mantissa width; a carry out
    // of the mantissa correctly bumps the exponent.
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

STRATA_HOST_DEVICE inline uint16_t FloatToFloat16(float x) {
  const uint32_t bits = FloatBits(x);
  const uint32_t magnitude = bits & 0x7FFFFFFF;
  // Fast path, the same rounding as EncodeMinifloat's normal case: |x| in [2^-14, 65520),
  // which rounds to a normal float16 without overflowing.
  if (magnitude >= 0x38800000 && magnitude < 0x477FF000) {
    const uint32_t rounded = (magnitude + 0xFFF + ((magnitude >> 13) & 1)) >> 13;
    return static_cast<uint16_t>(((bits >> 16) & 0x8000) | (rounded - (uint32_t{112} << 10)));
  }
  return static_cast<uint16_t>(EncodeMinifloat(Float16Format(), x));
}

STRATA_HOST_DEVICE inline uint16_t FloatToBFloat16(float x) {
  const uint32_t bits = FloatBits(x);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return 0x7FC0;  // NaN
  // RNE at bit 16; a carry into the exponent is right, up to infinity.
  const uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// RNE(x * 64) as an integer, x * 64 clamped to [-128, 127] first (int8 and uint8's fixed
// point: 1/64 a step).
STRATA_HOST_DEVICE inline int32_t ScaledRoundEven(float x) {
  if (x != x) return 0;     // NaN
  float y = Mul(x, 64.0f);  // exact unless it overflows, which the clamp absorbs
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

// The float a minifloat code stands for (exact; NaN codes: a quiet NaN).
STRATA_HOST_DEVICE inline float DecodeMinifloat(Minifloat f, uint32_t code) {
  const uint32_t width = f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = ((code >> width) & 1) << 31;
  const uint32_t magnitude = code & ((1u << width) - 1);
  if (f.infinity != 0 && magnitude == f.infinity) return BitsToFloat(sign | 0x7F800000);
  if (magnitude > f.max_finite && magnitude != f.infinity) return BitsToFloat(sign | 0x7FC00000);
  const uint32_t exponent_field = magnitude >> f.mantissa_bits;
  const uint32_t mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
  if (exponent_field == 0) {
    // mantissa * 2^(1 - bias - mantissa_bits): an exact product (the power of two is a
    // normal float for every format here).
    const int32_t scale_exponent = 1 - f.bias - static_cast<int32_t>(f.mantissa_bits);
    const float scale = BitsToFloat(static_cast<uint32_t>(scale_exponent + 127) << 23);
    const float value = Mul(static_cast<float>(mantissa), scale);
    return sign != 0 ? -value : value;
  }
  const uint32_t float_exponent = exponent_field + static_cast<uint32_t>(127 - f.bias);
  return BitsToFloat(sign | (float_exponent << 23) | (mantissa << (23 - f.mantissa_bits)));
}

// The element encoded as `e` at p[0, ElementBytes(e)), little-endian.
STRATA_HOST_DEVICE inline float DecodeElement(Element e, const uint8_t* p) {
  switch (e) {
    case Element::kFloat16:
      return DecodeMinifloat(Float16Format(), p[0] | (uint32_t{p[1]} << 8));
    case Element::kBFloat16:
      return BitsToFloat((p[0] | (uint32_t{p[1]} << 8)) << 16);
    case Element::kFloat32:
      return BitsToFloat(p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
                         (uint32_t{p[3]} << 24));
    case Element::kFloat8E4M3:
      return DecodeMinifloat(E4M3Format(), p[0]);
    case Element::kFloat8E5M2:
      return DecodeMinifloat(E5M2Format(), p[0]);
    case Element::kInt8:
      return Div(static_cast<float>(static_cast<int8_t>(p[0])), 64.0f);
    case Element::kUInt8:
      return Div(static_cast<float>(int32_t{p[0]} - 128), 64.0f);
  }
  return 0.0f;
}

// Writes `x` encoded as `e` at out[0, ElementBytes(e)), little-endian.
STRATA_HOST_DEVICE inline void EncodeElement(Element e, float x, uint8_t* out) {
  switch (e) {
    case Element::kFloat16: {
      const uint16_t v = FloatToFloat16(x);
      out[0] = static_cast<uint8_t>(v & 0xFF);
      out[1] = static_cast<uint8_t>(v >> 8);
      return;
    }
    case Element::kBFloat16: {
      const uint16_t v = FloatToBFloat16(x);
      out[0] = static_cast<uint8_t>(v & 0xFF);
      out[1] = static_cast<uint8_t>(v >> 8);
      return;
    }
    case Element::kFloat32: {
      const uint32_t v = FloatBits(x);
      for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
      return;
    }
    case Element::kFloat8E4M3:
      out[0] = static_cast<uint8_t>(EncodeMinifloat(E4M3Format(), x));
      return;
    case Element::kFloat8E5M2:
      out[0] = static_cast<uint8_t>(EncodeMinifloat(E5M2Format(), x));
      return;
    case Element::kInt8:
      out[0] = static_cast<uint8_t>(static_cast<int8_t>(ScaledRoundEven(x)));
      return;
    case Element::kUInt8:
      out[0] = static_cast<uint8_t>(ScaledRoundEven(x) + 128);
      return;
  }
}

}  // namespace strata::gpu::reference

namespace strata::gpu {

// Device::ReferenceKvAsync's job (strata/gpu/reference_kv.h describes it). Here, free of
// Abseil, so the CUDA kernels take it as their argument.
struct ReferenceKvJob {
  // The weights (device memory): layers x kModelDim x layer_columns floats.
  const float* weights = nullptr;
  uint32_t layers = 0;
  uint32_t layer_columns = 0;
  uint32_t kv_columns = 0;
  uint32_t padded_width = 0;
  uint32_t kv_width = 0;
  bool key_value = true;
  reference::Element element = reference::Element::kBFloat16;
  // h_0 of each token (device memory, tokens x kModelDim), overwritten layer by layer.
  float* hidden = nullptr;
  uint64_t tokens = 0;
  // Scratch (device memory): tokens x layer_columns floats.
  float* projected = nullptr;
  // s_l of the token before the first, per layer (device memory, layers x kModelDim); the
  // last token's once the job ran.
  float* running_mean = nullptr;
  // The blob (device memory; null: only h and the running means advance).
  uint8_t* out = nullptr;
  uint64_t first_position = 0;
  uint32_t page_tokens = 0;
  uint64_t blob_first_page = 0;
  uint64_t blob_pages = 0;
  uint64_t layer_page_bytes = 0;
  uint64_t kv_block_bytes = 0;
  uint64_t row_bytes = 0;

  // Bytes of the blob the job writes to: blob_pages * layers * layer_page_bytes.
  uint64_t OutBytes() const { return blob_pages * layers * layer_page_bytes; }
};

}  // namespace strata::gpu
