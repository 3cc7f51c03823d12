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
// PrefixHash is a value type; all functions here are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "strata/radix/token_span.h"

namespace strata::radix {

class Namespace;

struct PrefixHash {
  uint64_t hi = 0;
  uint64_t lo = 0;

  friend bool operator==(const PrefixHash&, const PrefixHash&) = default;
  friend auto operator<=>(const PrefixHash&, const PrefixHash&) = default;

  // 32 lowercase hex digits, hi first.
  std::string ToHex() const;
  // Parses ToHex() output. Returns false on malformed input.
  static bool FromHex(std::string_view hex, PrefixHash* out);

  template <typename H>
  friend H AbslHashValue(H h, const PrefixHash& p) {
    return H::combine(std::move(h), p.hi, p.lo);
  }
};

}  // namespace strata::radix
