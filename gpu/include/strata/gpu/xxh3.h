// XXH3-64 with a seed — the chunk checksum (strata/radix/chunk_checksum.h) — written for the
// host and for CUDA kernels, so that bytes received straight into device memory can be
// verified where they landed. It is XXH3 as specified by xxHash 0.8 (the output is stable
// across xxHash versions), computed the portable ("scalar") way; gpu/xxh3_test.cc checks it
// against libxxhash's XXH3_64bits_withSeed for every length class.
//
// The secrets come from the host: Xxh3Secrets::For(seed) (gpu/xxh3.cc) asks libxxhash for
// the default secret and the one it derives from the seed (XXH3_generateSecret_fromSeed), so
// no constant of xxHash is copied here. Inputs of up to 240 bytes hash with the default
// secret and the seed; longer ones with the derived secret.
//
// Header-only, pure functions; little-endian machines (x86-64, aarch64, NVIDIA GPUs).
#pragma once

#include <cstdint>
#include <cstring>

#include "strata/gpu/reference_math.h"  // STRATA_HOST_DEVICE

namespace strata::gpu {

inline constexpr uint32_t kXxh3SecretBytes = 192;

struct Xxh3Secrets {
  uint64_t seed = 0;
  uint8_t base[kXxh3SecretBytes] = {};    // the default secret
  uint8_t seeded[kXxh3SecretBytes] = {};  // derived from the seed (long inputs)

  // The secrets of `seed` (from libxxhash; host only).
  static Xxh3Secrets For(uint64_t seed);
};

namespace xxh3 {

inline constexpr uint64_t kPrime32_1 = 0x9E3779B1U;
inline constexpr uint64_t kPrime32_2 = 0x85EBCA77U;
inline constexpr uint64_t kPrime32_3 = 0xC2B2AE3DU;
inline constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ULL;
inline constexpr uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4FULL;
inline constexpr uint64_t kPrime64_3 = 0x165667B19E3779F9ULL;
inline constexpr uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63ULL;
inline constexpr uint64_t kPrime64_5 = 0x27D4EB2F165667C5ULL;
inline constexpr uint64_t kPrimeMx1 = 0x165667919E3779F9ULL;
inline constexpr uint64_t kPrimeMx2 = 0x9FB21C651E98DF25ULL;

STRATA_HOST_DEVICE inline uint64_t Read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
STRATA_HOST_DEVICE inline uint32_t Read32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
STRATA_HOST_DEVICE inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
STRATA_HOST_DEVICE inline uint32_t Swap32(uint32_t x) {
  return ((x << 24) & 0xff000000) | ((x << 8) & 0x00ff0000) | ((x >> 8) & 0x0000ff00) |
         ((x >> 24) & 0x000000ff);
}
STRATA_HOST_DEVICE inline uint64_t Swap64(uint64_t x) {
  return (static_cast<uint64_t>(Swap32(static_cast<uint32_t>(x))) << 32) |
         Swap32(static_cast<uint32_t>(x >> 32));
}
// The 128-bit product of a and b, its halves xor-ed.
STRATA_HOST_DEVICE inline uint64_t Mul128Fold64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return (a * b) ^ __umul64hi(a, b);
#else
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
#endif
}
STRATA_HOST_DEVICE inline uint64_t Xxh64Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime64_2;
  h ^= h >> 29;
  h *= kPrime64_3;
  h ^= h >> 32;
  return h;
}
STRATA_HOST_DEVICE inline uint64_t Avalanche(uint64_t h) {
  h ^= h >> 37;
  h *= kPrimeMx1;
  h ^= h >> 32;
  return h;
}
STRATA_HOST_DEVICE inline uint64_t Rrmxmx(uint64_t h, uint64_t len) {
  h ^= Rotl64(h, 49) ^ Rotl64(h, 24);
  h *= kPrimeMx2;
  h ^= (h >> 35) + len;
  h *= kPrimeMx2;
  h ^= h >> 28;
  return h;
}
STRATA_HOST_DEVICE inline uint64_t Mix16(const uint8_t* p, const uint8_t* secret, uint64_t seed) {
  return Mul128Fold64(Read64(p) ^ (Read64(secret) + seed),
                      Read64(p + 8) ^ (Read64(secret + 8) - seed));
}

STRATA_HOST_DEVICE inline uint64_t Len0To16(const uint8_t* p, uint64_t len, const uint8_t* secret,
                                            uint64_t seed) {
  if (len > 8) {
    const uint64_t flip1 = (Read64(secret + 24) ^ Read64(secret + 32)) + seed;
    const uint64_t flip2 = (Read64(secret + 40) ^ Read64(secret + 48)) - seed;
    const uint64_t lo = Read64(p) ^ flip1;
    const uint64_t hi = Read64(p + len - 8) ^ flip2;
    return Avalanche(len + Swap64(lo) + hi + Mul128Fold64(lo, hi));
  }
  if (len >= 4) {
    seed ^= static_cast<uint64_t>(Swap32(static_cast<uint32_t>(seed))) << 32;
    const uint32_t in1 = Read32(p);
    const uint32_t in2 = Read32(p + len - 4);
    const uint64_t flip = (Read64(secret + 8) ^ Read64(secret + 16)) - seed;
    const uint64_t in64 = in2 + (static_cast<uint64_t>(in1) << 32);
    return Rrmxmx(in64 ^ flip, len);
  }
  if (len > 0) {
    const uint32_t combined = (static_cast<uint32_t>(p[0]) << 16) |
                              (static_cast<uint32_t>(p[len >> 1]) << 24) |
                              static_cast<uint32_t>(p[len - 1]) | (static_cast<uint32_t>(len) << 8);
    const uint64_t flip = (Read32(secret) ^ Read32(secret + 4)) + seed;
    return Xxh64Avalanche(static_cast<uint64_t>(combined) ^ flip);
  }
  return Xxh64Avalanche(seed ^ (Read64(secret + 56) ^ Read64(secret + 64)));
}

STRATA_HOST_DEVICE inline uint64_t Len17To128(const uint8_t* p, uint64_t len, const uint8_t* secret,
                                              uint64_t seed) {
  uint64_t acc = len * kPrime64_1;
  if (len > 32) {
    if (len > 64) {
      if (len > 96) {
        acc += Mix16(p + 48, secret + 96, seed);
        acc += Mix16(p + len - 64, secret + 112, seed);
      }
      acc += Mix16(p + 32, secret + 64, seed);
      acc += Mix16(p + len - 48, secret + 80, seed);
    }
    acc += Mix16(p + 16, secret + 32, seed);
    acc += Mix16(p + len - 32, secret + 48, seed);
  }
  acc += Mix16(p, secret, seed);
  acc += Mix16(p + len - 16, secret + 16, seed);
  return Avalanche(acc);
}

STRATA_HOST_DEVICE inline uint64_t Len129To240(const uint8_t* p, uint64_t len,
                                               const uint8_t* secret, uint64_t seed) {
  constexpr uint64_t kStartOffset = 3;
  constexpr uint64_t kLastOffset = 17;
  constexpr uint64_t kSecretSizeMin = 136;
  uint64_t acc = len * kPrime64_1;
  const uint64_t rounds = len / 16;
  for (uint64_t i = 0; i < 8; ++i) acc += Mix16(p + 16 * i, secret + 16 * i, seed);
  acc = Avalanche(acc);
  for (uint64_t i = 8; i < rounds; ++i) {
    acc += Mix16(p + 16 * i, secret + 16 * (i - 8) + kStartOffset, seed);
  }
  acc += Mix16(p + len - 16, secret + kSecretSizeMin - kLastOffset, seed);
  return Avalanche(acc);
}

STRATA_HOST_DEVICE inline void Accumulate512(uint64_t* acc, const uint8_t* p,
                                             const uint8_t* secret) {
  for (int i = 0; i < 8; ++i) {
    const uint64_t value = Read64(p + 8 * i);
    const uint64_t key = value ^ Read64(secret + 8 * i);
    acc[i ^ 1] += value;
    acc[i] += (key & 0xFFFFFFFFULL) * (key >> 32);
  }
}

STRATA_HOST_DEVICE inline void ScrambleAcc(uint64_t* acc, const uint8_t* secret) {
  for (int i = 0; i < 8; ++i) {
    uint64_t a = acc[i];
    a ^= a >> 47;
    a ^= Read64(secret + 8 * i);
    a *= kPrime32_1;
    acc[i] = a;
  }
}

STRATA_HOST_DEVICE inline uint64_t HashLong(const uint8_t* p, uint64_t len, const uint8_t* secret) {
  constexpr uint64_t kStripe = 64;
  constexpr uint64_t kConsumeRate = 8;
  constexpr uint64_t kStripesPerBlock = (kXxh3SecretBytes - kStripe) / kConsumeRate;
  constexpr uint64_t kBlock = kStripe * kStripesPerBlock;
  constexpr uint64_t kLastAccStart = 7;
  constexpr uint64_t kMergeAccsStart = 11;
  uint64_t acc[8] = {kPrime32_3, kPrime64_1, kPrime64_2, kPrime64_3,
                     kPrime64_4, kPrime32_2, kPrime64_5, kPrime32_1};
  const uint64_t blocks = (len - 1) / kBlock;
  for (uint64_t n = 0; n < blocks; ++n) {
    for (uint64_t s = 0; s < kStripesPerBlock; ++s) {
      Accumulate512(acc, p + n * kBlock + s * kStripe, secret + s * kConsumeRate);
    }
    ScrambleAcc(acc, secret + kXxh3SecretBytes - kStripe);
  }
  const uint64_t stripes = ((len - 1) - kBlock * blocks) / kStripe;
  for (uint64_t s = 0; s < stripes; ++s) {
    Accumulate512(acc, p + blocks * kBlock + s * kStripe, secret + s * kConsumeRate);
  }
  Accumulate512(acc, p + len - kStripe, secret + kXxh3SecretBytes - kStripe - kLastAccStart);
  uint64_t result = len * kPrime64_1;
  for (int i = 0; i < 4; ++i) {
    const uint8_t* s = secret + kMergeAccsStart + 16 * i;
    result += Mul128Fold64(acc[2 * i] ^ Read64(s), acc[2 * i + 1] ^ Read64(s + 8));
  }
  return Avalanche(result);
}

}  // namespace xxh3

// XXH3_64bits_withSeed(p, len, secrets.seed).
STRATA_HOST_DEVICE inline uint64_t Xxh3(const void* data, uint64_t len,
                                        const Xxh3Secrets& secrets) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (len <= 16) return xxh3::Len0To16(p, len, secrets.base, secrets.seed);
  if (len <= 128) return xxh3::Len17To128(p, len, secrets.base, secrets.seed);
  if (len <= 240) return xxh3::Len129To240(p, len, secrets.base, secrets.seed);
  return xxh3::HashLong(p, len, secrets.seeded);
}

}  // namespace strata::gpu
