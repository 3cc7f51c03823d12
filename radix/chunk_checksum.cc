#include "strata/radix/chunk_checksum.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#include "strata/radix/prefix_hash.h"
#include "xxhash.h"

namespace strata::radix {

uint64_t ChunkChecksum(absl::Span<const std::byte> chunk) {
  return XXH3_64bits_withSeed(chunk.data(), chunk.size(), kPrefixHashSeed);
}

absl::StatusOr<std::vector<uint64_t>> ComputeChunkChecksums(const BlobLayout& layout,
                                                            absl::Span<const std::byte> blob) {
  if (blob.size() != layout.TotalBytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("blob has ", blob.size(), " bytes, its layout needs ", layout.TotalBytes()));
  }
  const uint64_t chunk = layout.layout().BytesPerLayerPage();
  const uint64_t count = uint64_t{layout.layout().num_layers} * layout.blob_pages();
  std::vector<uint64_t> checksums(count);
  for (uint64_t i = 0; i < count; ++i) {
    checksums[i] = ChunkChecksum(blob.subspan(i * chunk, chunk));
  }
  return checksums;
}

uint64_t BlobChecksum(absl::Span<const uint64_t> chunk_checksums) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset_withSeed(state, kPrefixHashSeed);
  for (const uint64_t c : chunk_checksums) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(c >> (8 * i));
    XXH3_64bits_update(state, le, sizeof(le));
  }
  const uint64_t result = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return result;
}

}  // namespace strata::radix
