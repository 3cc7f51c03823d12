// Chunk checksums of a blob, as the store keeps and verifies them
// (docs/design/node-and-client.md, "Byte layout and checksums").
//
// A chunk is one layer of one page: BytesPerLayerPage() bytes at
// radix::BlobLayout's offset (l * n + p) * BytesPerLayerPage() in a blob of n
// pages. Its checksum is XXH3_64bits_withSeed(chunk, radix::kPrefixHashSeed).
// A blob's checksums are listed layer-major:
//
//   index      chunk
//   ---------  -------------------------------
//   l * n + p  layer l, page p   (0 <= p < n)
//
// so the checksums of pages [a, a+k) of layer l are entries [l*n + a, l*n + a+k).
//
// All functions are pure and thread-safe.
//
// Errors:
//   ChunkChecksums        INVALID_ARGUMENT: invalid layout, num_pages == 0, or
//                         blob.size() != num_pages * layout.BytesPerPage().
//   VerifyChunkChecksums  those, INVALID_ARGUMENT when expected.size() !=
//                         num_layers * num_pages, and DATA_LOSS naming the first
//                         (layer, page) whose bytes do not match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/radix/chunk_checksum.h"
#include "strata/radix/kv_layout.h"

namespace strata::worker {

// XXH3-64 of one chunk's bytes with seed radix::kPrefixHashSeed (one implementation:
// strata/radix/chunk_checksum.h).
using radix::ChunkChecksum;

// The num_layers * num_pages chunk checksums of `blob`, layer-major.
absl::StatusOr<std::vector<uint64_t>> ChunkChecksums(absl::Span<const std::byte> blob,
                                                     const radix::KvLayout& layout,
                                                     uint32_t num_pages);

// OK when every chunk of `blob` has the checksum listed in `expected`.
absl::Status VerifyChunkChecksums(absl::Span<const std::byte> blob, const radix::KvLayout& layout,
                                  uint32_t num_pages, absl::Span<const uint64_t> expected);

}  // namespace strata::worker
