// Chunk checksums of a blob's bytes.
//
// A chunk is one layer of one page: radix::KvLayout::BytesPerLayerPage() bytes. In the
// layer-major blob layout (radix::BlobLayout) chunk (l, p) of a blob of n pages sits at
// byte (l * n + p) * BytesPerLayerPage(), and its checksum is
//
//   ChunkChecksum(chunk) = XXH3_64bits_withSeed(chunk bytes, radix::kPrefixHashSeed)
//
// kept in layer-major order: checksums[l * n + p]. The writer sends them with BeginPut,
// the node verifies every chunk at CommitPut, Read returns those of the chunks it covers,
// and the client verifies each chunk as it lands.
//
// The blob checksum that Stat shows is XXH3-64 (same seed) over the chunk checksums
// encoded as consecutive little-endian u64 (8 * num_layers * n bytes):
//
//   offset      size  field
//   ----------  ----  -----------------------------
//   0           8     u64 checksums[0]
//   8           8     u64 checksums[1]
//   ...
//   8*(k-1)     8     u64 checksums[k-1],  k = num_layers * n
//
// One implementation for every side: the node (store/core) verifies with it, the client
// library and the reference worker compute and verify with it (ChunkChecksums,
// VerifyChunkChecksums: the same over a blob given by its KvLayout and page count).
//
// All functions are pure and thread-safe. Errors: see each function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/radix/kv_layout.h"

namespace strata::radix {

// XXH3-64 of one chunk with seed kPrefixHashSeed.
uint64_t ChunkChecksum(absl::Span<const std::byte> chunk);

// The checksums of every chunk of `blob` (layout.TotalBytes() bytes), layer-major.
// INVALID_ARGUMENT if blob.size() != layout.TotalBytes().
absl::StatusOr<std::vector<uint64_t>> ComputeChunkChecksums(const BlobLayout& layout,
                                                            absl::Span<const std::byte> blob);

// Index into a layer-major checksum array of chunk (layer, page) of a blob of
// `blob_pages` pages.
inline uint64_t ChunkIndex(uint32_t layer, uint32_t page, uint32_t blob_pages) {
  return static_cast<uint64_t>(layer) * blob_pages + page;
}

// XXH3-64 (seed kPrefixHashSeed) of the checksums as little-endian u64s (table above).
uint64_t BlobChecksum(absl::Span<const uint64_t> chunk_checksums);

// The layout.num_layers * num_pages chunk checksums of `blob`, layer-major.
// INVALID_ARGUMENT: an invalid layout, num_pages == 0, or
// blob.size() != num_pages * layout.BytesPerPage().
absl::StatusOr<std::vector<uint64_t>> ChunkChecksums(absl::Span<const std::byte> blob,
                                                     const KvLayout& layout, uint32_t num_pages);

// OK when every chunk of `blob` has the checksum listed in `expected`. The errors of
// ChunkChecksums, INVALID_ARGUMENT when expected.size() != num_layers * num_pages, and
// DATA_LOSS naming the first (layer, page) whose bytes do not match.
absl::Status VerifyChunkChecksums(absl::Span<const std::byte> blob, const KvLayout& layout,
                                  uint32_t num_pages, absl::Span<const uint64_t> expected);

}  // namespace strata::radix
