// The portable XXH3-64 (strata/gpu/xxh3.h, what the CUDA checksum kernel runs) against
// libxxhash's XXH3_64bits_withSeed: every length of every class (0-16, 17-128, 129-240, the
// long loop's partial and whole blocks) and chunk sizes strata uses, several seeds.
#include "strata/gpu/xxh3.h"

#include <cstdint>
#include <random>
#include <vector>

#include <xxhash.h>

#include "gtest/gtest.h"

namespace strata::gpu {
namespace {

TEST(Xxh3Test, MatchesLibxxhashForEveryLengthClassAndSeed) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> data(uint64_t{1} << 20);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  for (const uint64_t seed :
       {uint64_t{0}, uint64_t{1}, uint64_t{0x5354524154414b56}, ~uint64_t{0}}) {
    const Xxh3Secrets secrets = Xxh3Secrets::For(seed);
    for (uint64_t len = 0; len <= 2100; ++len) {
      const uint64_t offset = len % 13;  // unaligned starts too
      ASSERT_EQ(Xxh3(data.data() + offset, len, secrets),
                XXH3_64bits_withSeed(data.data() + offset, len, seed))
          << "len " << len << " seed " << seed;
    }
    for (const uint64_t len : {uint64_t{4096}, uint64_t{8192}, uint64_t{32768}, uint64_t{65536},
                               uint64_t{65537}, uint64_t{262144}, uint64_t{1} << 20}) {
      ASSERT_EQ(Xxh3(data.data(), len, secrets), XXH3_64bits_withSeed(data.data(), len, seed))
          << "len " << len << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace strata::gpu
