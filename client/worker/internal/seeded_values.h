// The reference model's deterministic value generator (private to
// client/worker; the formulas are part of the model's specification in
// reference_model.h and are frozen with it).
//
// A counter-based generator: every value is a pure function of (seed, stream,
// row, column), so a weight or an embedding entry is computed on demand with
// no table and no sequential state, identically on every machine.
//
//   Mix64(z)              the SplitMix64 finalizer (Steele, Lea, Flood 2014)
//   RowKey(s, stream, r)  = Mix64(Mix64(s ^ (stream * G)) ^ (r * C))
//   ElementBits(k, c)     = Mix64(k + (c + 1) * G)
//   UnitFloat(b)          = (int(b >> 40) - 2^23) * 2^-23, in [-1, 1), exact
//   with G = 0x9E3779B97F4A7C15, C = 0xC2B2AE3D27D4EB4F, all arithmetic mod 2^64.
#pragma once

#include <cstdint>

namespace strata::worker::internal {

inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15;
inline constexpr uint64_t kRowMultiplier = 0xC2B2AE3D27D4EB4F;

// Streams: which family of values. Per-layer streams add the layer index.
inline constexpr uint64_t kEmbeddingStream = 1;
inline constexpr uint64_t kPositionStream = 2;
inline constexpr uint64_t kMixWeightStream = uint64_t{3} << 32;
inline constexpr uint64_t kKeyWeightStream = uint64_t{4} << 32;
inline constexpr uint64_t kValueWeightStream = uint64_t{5} << 32;
inline constexpr uint64_t kLatentWeightStream = uint64_t{6} << 32;

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  return z ^ (z >> 31);
}

inline uint64_t RowKey(uint64_t seed, uint64_t stream, uint64_t row) {
  return Mix64(Mix64(seed ^ (stream * kGoldenGamma)) ^ (row * kRowMultiplier));
}

inline uint64_t ElementBits(uint64_t row_key, uint64_t column) {
  return Mix64(row_key + (column + 1) * kGoldenGamma);
}

// A uniform value in [-1, 1) with 24 bits of resolution; every step exact.
inline float UnitFloat(uint64_t bits) {
  const int32_t n = static_cast<int32_t>(bits >> 40) - (int32_t{1} << 23);
  return static_cast<float>(n) * 0x1p-23f;
}

}  // namespace strata::worker::internal
