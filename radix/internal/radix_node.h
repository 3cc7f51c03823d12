// RadixNode: one node of strata::radix::RadixTree. Private to radix/.
//
// A node below a root holds `pages` whole pages of one blob: its edge tokens
// (pages * page_tokens ids, owned, exactly sized) and where they live in the
// blob (blob, blob_page_offset). A root sentinel holds no pages; its `blob`
// field carries the root's PrefixHash and its parent is null.
//
// Children are keyed by a span over the child's own first page, so lookups
// compare tokens exactly and the key costs no extra token storage. A child's
// key must be erased from its parent's map before the child's tokens change.
//
// Concurrency: structure (parent, tokens, children, shape fields) changes only
// under the tree's exclusive lock. lock_ref is an atomic, written by matchers
// and handle releases under the shared lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/token_span.h"

namespace strata::radix::internal {

struct RadixNode;

// Hash and equality of one page of tokens (the child key).
struct PageHash {
  size_t operator()(absl::Span<const TokenId> page) const {
    return absl::Hash<absl::Span<const TokenId>>{}(page);
  }
};
struct PageEq {
  bool operator()(absl::Span<const TokenId> a, absl::Span<const TokenId> b) const {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(TokenId)) == 0;
  }
};
using ChildMap = absl::flat_hash_map<absl::Span<const TokenId>, RadixNode*, PageHash, PageEq>;

struct RadixNode {
  bool is_root() const { return parent == nullptr; }
  absl::Span<const TokenId> FirstPage(uint32_t page_tokens) const {
    return absl::MakeConstSpan(tokens.get(), page_tokens);
  }

  RadixNode* parent = nullptr;        // null for a root sentinel
  RadixNode* root = nullptr;          // the root sentinel above (itself for one)
  std::unique_ptr<TokenId[]> tokens;  // pages * page_tokens ids
  ChildMap children;
  BlobKey blob;                       // root sentinel: blob.hash = root hash
  std::atomic<uint32_t> lock_ref{0};  // handles pinning this node
  uint32_t blob_page_offset = 0;
  uint32_t pages = 0;
  uint32_t depth_pages = 0;  // pages from the root to this node's end
  bool leaf = false;         // counted in RadixTree::leaves_
};

// Bytes glibc malloc really takes for an n-byte request (8-byte header, 16-byte
// rounding, 32-byte minimum chunk).
inline uint64_t MallocChunkBytes(size_t n) {
  if (n == 0) return 0;
  return std::max<uint64_t>(32, (static_cast<uint64_t>(n) + 8 + 15) & ~uint64_t{15});
}

// Heap bytes of an absl flat_hash_map/set, from its capacity: control bytes
// (capacity + 1 + 15 cloned), padded to slot alignment, then the slots.
template <typename Map>
uint64_t FlatMapHeapBytes(const Map& map) {
  using Slot = typename Map::value_type;
  const size_t capacity = map.capacity();
  if (capacity == 0) return 0;
  const size_t align = alignof(Slot);
  const size_t control = (capacity + 1 + 15 + align - 1) & ~(align - 1);
  return MallocChunkBytes(control + capacity * sizeof(Slot));
}

inline uint64_t TokenArrayBytes(uint32_t pages, uint32_t page_tokens) {
  return MallocChunkBytes(static_cast<size_t>(pages) * page_tokens * sizeof(TokenId));
}

}  // namespace strata::radix::internal
