#include "strata/worker/chunk_checksums.h"

#include "absl/strings/str_cat.h"

#include "strata/base/status_macros.h"

namespace strata::worker {
namespace {

absl::Status CheckBlob(absl::Span<const std::byte> blob, const radix::KvLayout& layout,
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
                                                     const radix::KvLayout& layout,
                                                     uint32_t num_pages) {
  STRATA_RETURN_IF_ERROR(CheckBlob(blob, layout, num_pages));
  STRATA_ASSIGN_OR_RETURN(const radix::BlobLayout blob_layout,
                          radix::BlobLayout::Create(layout, num_pages));
  return radix::ComputeChunkChecksums(blob_layout, blob);
}

absl::Status VerifyChunkChecksums(absl::Span<const std::byte> blob, const radix::KvLayout& layout,
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

}  // namespace strata::worker
