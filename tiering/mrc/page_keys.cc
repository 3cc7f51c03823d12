// PrefixPageKeys (page_keys.h).
#include "strata/tiering/mrc/page_keys.h"

#include "glog/logging.h"

#include "xxhash.h"

namespace strata::tiering::mrc {

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t NextPageKey(uint64_t parent, absl::Span<const uint32_t> page) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "page keys hash token ids as little-endian bytes");
  return Mix64(parent ^ XXH3_64bits(page.data(), page.size() * sizeof(uint32_t)));
}

void AppendPrefixPageKeys(uint64_t root, absl::Span<const uint32_t> tokens, uint32_t page_tokens,
                          std::vector<uint64_t>* out) {
  CHECK_GT(page_tokens, 0u);
  const size_t pages = tokens.size() / page_tokens;
  out->reserve(out->size() + pages);
  uint64_t key = root;
  for (size_t i = 0; i < pages; ++i) {
    key = NextPageKey(key, tokens.subspan(i * page_tokens, page_tokens));
    out->push_back(key);
  }
}

}  // namespace strata::tiering::mrc
