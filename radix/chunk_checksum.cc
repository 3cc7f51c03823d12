#include "strata/radix/chunk_checksum.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "xxhash.h"
// On x86-64 Debian's libxxhash dispatches XXH3 at run time to the widest vector unit (AVX2
// here: 45 GB/s on 256 KiB, against 19 GB/s for its SSE2 default); the checksums are the same.
#if defined(__x86_64__)
#include "xxh_x86dispatch.h"
#define STRATA_XXH3_64_SEEDED XXH3_64bits_withSeed_dispatch
#else
#define STRATA_XXH3_64_SEEDED XXH3_64bits_withSeed
#endif

namespace strata::radix {

uint64_t ChunkChecksum(absl::Span<const std::byte> chunk) {
  return STRATA_XXH3_64_SEEDED(chunk.data(), chunk.size(), kPrefixHashSeed);
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

namespace {

absl::Status CheckBlob(absl::Span<const std::byte> blob, const KvLayout& layout,
                       uint32_t num_pages) {
  STRATA_RETURN_IF_ERROR(layout.Validate());
  if (num_pages == 0) {
    return absl::InvalidArgumentError("num_pages is 0: a blob has at least one page");
  }
  const uint64_t want = uint64_t{num_pages} * layout.BytesPerPage();
  if (blob.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("blob of ", blob.size(), " bytes, but ",
                                                   num_pages, " pages of ", layout.ToString(),
                                                   " take ", want, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ChunkChecksums(absl::Span<const std::byte> blob,
                                                     const KvLayout& layout, uint32_t num_pages) {
  STRATA_RETURN_IF_ERROR(CheckBlob(blob, layout, num_pages));
  STRATA_ASSIGN_OR_RETURN(const BlobLayout blob_layout, BlobLayout::Create(layout, num_pages));
  return ComputeChunkChecksums(blob_layout, blob);
}

absl::Status VerifyChunkChecksums(absl::Span<const std::byte> blob, const KvLayout& layout,
                                  uint32_t num_pages, absl::Span<const uint64_t> expected) {
  STRATA_RETURN_IF_ERROR(CheckBlob(blob, layout, num_pages));
  const uint64_t chunks = uint64_t{layout.num_layers} * num_pages;
  if (expected.size() != chunks) {
    return absl::InvalidArgumentError(absl::StrCat(expected.size(), " checksums for ", chunks,
                                                   " chunks (", layout.num_layers, " layers x ",
                                                   num_pages, " pages)"));
  }
  const uint64_t chunk_bytes = layout.BytesPerLayerPage();
  for (uint64_t i = 0; i < chunks; ++i) {
    const uint64_t got = ChunkChecksum(blob.subspan(i * chunk_bytes, chunk_bytes));
    if (got != expected[i]) {
      return absl::DataLossError(absl::StrCat(
          "checksum mismatch in layer ", i / num_pages, " page ", i % num_pages, ": expected ",
          absl::Hex(expected[i], absl::kZeroPad16), ", got ", absl::Hex(got, absl::kZeroPad16)));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::radix
