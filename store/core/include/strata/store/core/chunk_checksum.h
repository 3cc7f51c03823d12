// Chunk checksums as the engine uses them: radix's (strata/radix/chunk_checksum.h, where the
// definition, the layout table and the errors are), named in store::core for its callers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

#include "strata/radix/chunk_checksum.h"

namespace strata::store::core {

using radix::BlobChecksum;
using radix::ChunkChecksum;
using radix::ChunkIndex;
using radix::ComputeChunkChecksums;

// The first chunk of `bytes` (chunks of `chunk_bytes`, layer-major) whose checksum differs
// from `checksums`, or checksums.size() when all match. REQUIRES: bytes holds
// checksums.size() chunks.
inline uint64_t FirstBadChunk(absl::Span<const std::byte> bytes,
                              absl::Span<const uint64_t> checksums, uint64_t chunk_bytes) {
  for (uint64_t i = 0; i < checksums.size(); ++i) {
    if (ChunkChecksum(bytes.subspan(i * chunk_bytes, chunk_bytes)) != checksums[i]) return i;
  }
  return checksums.size();
}

}  // namespace strata::store::core
