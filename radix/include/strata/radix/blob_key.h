// BlobKey: the name of an immutable KV blob.
//
// A blob holds the KV bytes of pages [a, b) of one token sequence; its key is the
// prefix hash h_b of its last page, so the key names the blob's whole prefix:
// content-addressed, immutable and deduplicated for free. Value type.
#pragma once

#include <string>

#include "strata/radix/prefix_hash.h"

namespace strata::radix {

struct BlobKey {
  PrefixHash hash;

  std::string ToHex() const { return hash.ToHex(); }
  friend bool operator==(const BlobKey&, const BlobKey&) = default;
  friend auto operator<=>(const BlobKey&, const BlobKey&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const BlobKey& k) {
    return H::combine(std::move(h), k.hash);
  }
};

}  // namespace strata::radix
