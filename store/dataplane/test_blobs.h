// Blobs and engines for the data-plane tests and benchmark (not part of the library).
//
// TestLayout: `num_layers` layers x 2 KV heads x `head_dim` dims, float16, 16-token pages,
// K/V: a chunk (one layer of one page) is 128 * head_dim bytes (8 KiB at head_dim 64).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

#include "store/dataplane/test_client.h"
#include "strata/radix/blob_key.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"
#include "strata/radix/token_span.h"
#include "strata/store/core/clock.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::dataplane::testing {

radix::KvLayout TestLayout(uint32_t num_layers = 4, uint32_t head_dim = 64);
radix::Namespace TestNamespace(const std::string& tenant = "acme", uint32_t num_layers = 4,
                               uint32_t head_dim = 64);

// A blob's content: its tokens, bytes (layer-major) and chunk checksums.
struct BlobContent {
  std::vector<radix::TokenId> tokens;
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> checksums;
};
// `pages` pages of tokens and bytes drawn from `seed`.
BlobContent MakeBlob(const radix::Namespace& ns, uint32_t pages, uint64_t seed);

// A put of `blob` from page 0 (no parent), with its checksums.
core::PutRequest PutRequestFor(const BlobContent& blob);

// The data-plane PUT of `blob` from page 0 in `ns`: its header (request_id 0) and payload.
std::pair<transport::wire::PutHeader, std::vector<uint8_t>> PutMessage(const radix::Namespace& ns,
                                                                       const BlobContent& blob);

// An engine of `dram_bytes` (64 KiB granules, no hugetlb), no reaper thread, `clock`.
core::NodeEngineOptions EngineOptions(core::Clock* clock, uint64_t dram_bytes);

// BeginPut of `blob` in `ns`, its bytes over the data plane as `pieces` PUT_DATA messages
// (last piece first), then CommitPut. Returns the blob's key, or the first error.
absl::StatusOr<radix::BlobKey> PutOverDataPlane(core::NodeEngine& engine, TestClient& client,
                                                const radix::Namespace& ns, const BlobContent& blob,
                                                uint32_t pieces = 3);

// Read of pages [first_page, first_page + num_pages) of every layer of `key`.
absl::StatusOr<core::ReadReply> ReadPages(core::NodeEngine& engine, const radix::Namespace& ns,
                                          const radix::BlobKey& key, uint32_t first_page,
                                          uint32_t num_pages);

// The wire ranges of a Read's layer ranges.
std::vector<transport::wire::ByteRange> WireRanges(const core::ReadRangeReply& range);

}  // namespace strata::store::dataplane::testing
