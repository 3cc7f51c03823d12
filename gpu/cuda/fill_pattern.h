// FillPatternByte: the byte the fill kernel (kernels.cu) writes at `index` for
// `seed`: a splitmix64 finalizer of (index, seed), top byte. A pure constexpr
// function, compiled for the device too (nvcc --expt-relaxed-constexpr), so a
// test can check device-side writes against the host's own evaluation.
#pragma once

#include <cstdint>

namespace strata::gpu {

constexpr uint8_t FillPatternByte(uint64_t index, uint32_t seed) {
  uint64_t x = index * 0x9E3779B97F4A7C15ull + ((uint64_t{seed} << 32) | seed);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<uint8_t>(x >> 56);
}

}  // namespace strata::gpu
