// What the tiering/io tests share: block and size constants, block-aligned buffers
// (O_DIRECT and the MemoryBlockFile's checks need them), and seeded fill. Test-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

#include "absl/types/span.h"

#include "strata/base/byte_size.h"

namespace strata::tiering::io::block_test {

inline constexpr uint64_t kBlock = 4096;
using ::strata::base::kKiB;
using ::strata::base::kMiB;

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte, FreeDeleter>;

// `bytes` (a multiple of kBlock) of kBlock-aligned memory, every byte `fill`.
inline AlignedBytes Aligned(uint64_t bytes, uint8_t fill = 0) {
  AlignedBytes buffer(static_cast<std::byte*>(std::aligned_alloc(kBlock, bytes)));
  std::memset(buffer.get(), fill, bytes);
  return buffer;
}

// Overwrites `bytes` with a pseudo-random sequence determined by `seed`.
inline void Fill(absl::Span<std::byte> bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng());
}

}  // namespace strata::tiering::io::block_test
