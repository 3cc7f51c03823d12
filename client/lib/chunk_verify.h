// VerifyLayerRun: the client's check of one layer run of fetched bytes — num_pages chunks
// (one layer of one page each, chunk_bytes long) that landed contiguously — against the
// checksums the node granted with the lease (XXH3-64, seed kPrefixHashSeed;
// strata/radix/chunk_checksum.h). A mismatch is DATA_LOSS naming the blob, the layer, the
// blob page and both checksums: the caller must not hand those bytes on.
//
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"

namespace strata::client_internal {

// REQUIRES: run.size() == expected.size() * chunk_bytes.
absl::Status VerifyLayerRun(absl::Span<const std::byte> run, uint64_t chunk_bytes,
                            absl::Span<const uint64_t> expected, const radix::BlobKey& blob,
                            uint32_t layer, uint32_t first_page);
// The same check of checksums computed elsewhere (on the device the bytes landed in).
// REQUIRES: computed.size() == expected.size().
absl::Status CompareLayerRun(absl::Span<const uint64_t> computed,
                             absl::Span<const uint64_t> expected, const radix::BlobKey& blob,
                             uint32_t layer, uint32_t first_page);

}  // namespace strata::client_internal
