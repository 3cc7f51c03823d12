// PrefixPageKeys: the keys under which a prefix cache's page accesses are fed to a
// miss-ratio-curve estimator (ShardsMrc, ExactMrc).
//
// A page of a token sequence is named by its whole prefix, as the radix index names it:
//
//   k_0 = root                         (the namespace: radix::NamespaceHash's lo ^ hi)
//   k_i = Mix64(k_{i-1} ^ XXH3_64(tokens of page i, 4 bytes each, little-endian))
//
// Mix64 is the SplitMix64 finalizer. This is not the wire's PrefixHash (XXH3-128 over the
// parent hash and the page): it is a 64-bit chain that costs ~5 ns for a 16-token page
// where ChainPageHash costs ~23 ns, because every page of every Match is keyed. Two
// different prefixes collide with probability ~2^-64 per pair. Everyone who wants to
// compare a node's live curve with an offline one (strata-replay) keys pages with this
// function. Pure, thread-safe, allocation-free except for `out`'s growth.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace strata::tiering::mrc {

uint64_t Mix64(uint64_t z);

// The key of the page after `parent` (k_{i-1}) whose tokens are `page`.
uint64_t NextPageKey(uint64_t parent, absl::Span<const uint32_t> page);

// Appends k_1 .. k_n for the n = tokens.size() / page_tokens whole pages of `tokens` (a
// trailing partial page is ignored) to *out. REQUIRES: page_tokens > 0.
void AppendPrefixPageKeys(uint64_t root, absl::Span<const uint32_t> tokens, uint32_t page_tokens,
                          std::vector<uint64_t>* out);

}  // namespace strata::tiering::mrc
