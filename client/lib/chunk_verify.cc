#include "client/lib/chunk_verify.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

#include "strata/radix/chunk_checksum.h"

namespace strata::client_internal {

namespace {

absl::Status Mismatch(const radix::BlobKey& blob, uint32_t layer, uint64_t page, uint64_t recorded,
                      uint64_t got) {
  return absl::DataLossError(absl::StrFormat(
      "blob %s layer %u page %u: checksum mismatch (recorded %016x, fetched bytes %016x)",
      blob.ToHex(), layer, page, recorded, got));
}

}  // namespace

absl::Status VerifyLayerRun(absl::Span<const std::byte> run, uint64_t chunk_bytes,
                            absl::Span<const uint64_t> expected, const radix::BlobKey& blob,
                            uint32_t layer, uint32_t first_page) {
  DCHECK_EQ(run.size(), expected.size() * chunk_bytes);
  for (size_t p = 0; p < expected.size(); ++p) {
    const uint64_t got = radix::ChunkChecksum(run.subspan(p * chunk_bytes, chunk_bytes));
    if (got != expected[p]) return Mismatch(blob, layer, first_page + p, expected[p], got);
  }
  return absl::OkStatus();
}

absl::Status CompareLayerRun(absl::Span<const uint64_t> computed,
                             absl::Span<const uint64_t> expected, const radix::BlobKey& blob,
                             uint32_t layer, uint32_t first_page) {
  DCHECK_EQ(computed.size(), expected.size());
  for (size_t p = 0; p < expected.size(); ++p) {
    if (computed[p] != expected[p]) {
      return Mismatch(blob, layer, first_page + p, expected[p], computed[p]);
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::client_internal
