// How strata-replay turns a trace's blocks into pages: a block id becomes a deterministic
// page of token ids, and a run of blocks a deterministic blob of KV bytes.
//
// Equal block ids give equal pages (so the trace's prefix structure — equal ids mean equal
// prefixes — is kept in the token sequences the node hashes), different ids different
// pages (with overwhelming probability: ids are mixed with splitmix64). The KV bytes are
// not a model's KV, only deterministic: chunk (layer l, page p) of a blob is a function of
// (the page's block id, l, seed), so a page has the same bytes in whichever blob it is put.
// The client computes the chunk checksums from these bytes as it writes them.
//
// Pure functions; thread-safe. REQUIRES: page_tokens > 0; out sized as documented.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

#include "strata/radix/kv_layout.h"
#include "strata/radix/token_span.h"

namespace strata::replay {

// Token ids are below this (a typical vocabulary).
inline constexpr uint32_t kVocabulary = 128000;

// The token ids of block `block_id`'s page, one per element of `out` (out.size() is the
// page size).
void BlockTokens(uint64_t block_id, uint64_t seed, absl::Span<radix::TokenId> out);

// The KV bytes of a blob whose pages are `block_ids` (in order), laid out as
// radix::BlobLayout: chunk (l, p) at (l * n + p) * layout.BytesPerLayerPage().
// REQUIRES: out.size() == block_ids.size() * layout.BytesPerPage(), layout valid.
void FillBlobBytes(absl::Span<const uint64_t> block_ids, const radix::KvLayout& layout,
                   uint64_t seed, absl::Span<std::byte> out);

}  // namespace strata::replay
