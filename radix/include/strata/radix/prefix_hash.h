// PrefixHash: the stable 128-bit chained hash that names a token prefix.
//
//   h_0 = NamespaceHash(namespace)
//   h_i = ChainPageHash(h_{i-1}, tokens of page i)
//
// XXH3-128 with a fixed seed over a fixed little-endian encoding, so clients and
// nodes on any machine and any strata version compute identical values. The
// golden vectors in prefix_hash_test.cc pin the function: changing any output
// is a wire-format break.
//
// Hash inputs (all integers little-endian, no padding):
//
//   NamespaceHash(ns)      = XXH3_128(ns.CanonicalEncoding(), kPrefixHashSeed)
//                            (encoding drawn in namespace.h)
//
//   ChainPageHash(parent, page) = XXH3_128(bytes below, kPrefixHashSeed):
//     offset  size  field
//     ------  ----  ---------------------------------
//     0       8     u64 parent.lo
//     8       8     u64 parent.hi
//     16      4*n   u32 page[0], page[1], ..., page[n-1]
//
// XXH3_128's result maps as hi = XXH128_hash_t.high64, lo = .low64 (so
// Python's xxhash.xxh3_128_intdigest(data, seed) == hi << 64 | lo).
//
// PrefixHash is a value type; all functions here are pure and thread-safe, and
// none fails: an empty page or a page size of 0 is hashed or yields no pages as
// documented, never an error. Callers that need page alignment check it with
// CheckPageAligned (token_span.h).
//
// Cost (these run on client hot paths): no allocation per page. PrefixHashAt
// and ChainPageHash allocate nothing (beyond one XXH3 state per thread, made on
// first use of a page longer than 256 tokens); PrefixHashes allocates its
// result once; AppendPrefixHashes reserves once. Tokens are hashed straight
// from the caller's span on little-endian hosts (big-endian hosts byte-swap).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"

#include "strata/radix/token_span.h"

namespace strata::radix {

class Namespace;

// The XXH3 seed of every prefix hash: the ASCII bytes "strata.1" read as a
// big-endian u64. Frozen.
inline constexpr uint64_t kPrefixHashSeed = 0x7374726174612E31;

struct PrefixHash {
  uint64_t hi = 0;
  uint64_t lo = 0;

  friend bool operator==(const PrefixHash&, const PrefixHash&) = default;
  friend auto operator<=>(const PrefixHash&, const PrefixHash&) = default;

  // 32 lowercase hex digits, hi first.
  std::string ToHex() const;
  // Parses exactly 32 hex digits (either case), hi first, as ToHex() writes
  // them. Returns false, leaving *out unchanged, on any other input.
  static bool FromHex(std::string_view hex, PrefixHash* out);

  template <typename H>
  friend H AbslHashValue(H h, const PrefixHash& p) {
    return H::combine(std::move(h), p.hi, p.lo);
  }
};

// Writes ToHex().
std::ostream& operator<<(std::ostream& os, const PrefixHash& hash);

// h_0 of a namespace.
PrefixHash NamespaceHash(const Namespace& ns);

// h_i from h_{i-1} = `parent` and the tokens of page i. Any page length is
// hashed as given (an empty page too); the chain functions below only ever pass
// whole pages.
PrefixHash ChainPageHash(const PrefixHash& parent, absl::Span<const TokenId> page);

// h_1 .. h_n chained from `root` (= h_0, or the hash of the page before
// `tokens`), for the n = WholePages(tokens.size(), page_tokens) whole pages of
// `tokens`; a trailing partial page is ignored. Empty when n == 0 (which
// includes page_tokens == 0).
std::vector<PrefixHash> PrefixHashes(const PrefixHash& root, absl::Span<const TokenId> tokens,
                                     uint32_t page_tokens);

// As PrefixHashes, but appends h_1 .. h_n to *out (reusing its capacity).
// REQUIRES: out != nullptr.
void AppendPrefixHashes(const PrefixHash& root, absl::Span<const TokenId> tokens,
                        uint32_t page_tokens, std::vector<PrefixHash>* out);

// Only the last of PrefixHashes: h_n for the n whole pages of `tokens`, or
// `root` itself when n == 0. No allocation.
PrefixHash PrefixHashAt(const PrefixHash& root, absl::Span<const TokenId> tokens,
                        uint32_t page_tokens);

}  // namespace strata::radix
