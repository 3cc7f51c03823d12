#include "client/tools/replay/trace_pages.h"

#include <algorithm>
#include <cstring>

namespace strata::replay {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void BlockTokens(uint64_t block_id, uint64_t seed, absl::Span<radix::TokenId> out) {
  const uint64_t base = SplitMix64(SplitMix64(seed) ^ block_id);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<radix::TokenId>(SplitMix64(base + i) % kVocabulary);
  }
}

void FillBlobBytes(absl::Span<const uint64_t> block_ids, const radix::KvLayout& layout,
                   uint64_t seed, absl::Span<std::byte> out) {
  const size_t n = block_ids.size();
  const size_t chunk = layout.BytesPerLayerPage();
  for (uint32_t l = 0; l < layout.num_layers; ++l) {
    for (size_t p = 0; p < n; ++p) {
      std::byte* dst = out.data() + (l * n + p) * chunk;
      uint64_t state = SplitMix64(SplitMix64(seed ^ 0x6b76) ^ block_ids[p]) + l;
      for (size_t off = 0; off < chunk; off += 8) {
        const uint64_t word = SplitMix64(state++);
        std::memcpy(dst + off, &word, std::min<size_t>(8, chunk - off));
      }
    }
  }
}

}  // namespace strata::replay
