// Helpers shared by the NodeEngine tests: a small layout, deterministic tokens and bytes,
// and a whole put (BeginPut, PutTarget, PutReceived, CommitPut) in one call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"
#include "strata/store/core/clock.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/tiering/dram_arena.h"

namespace strata::store::core::testing {

// The tests' page size, unless a test says otherwise.
inline constexpr uint32_t kPageTokens = 4;

// 2 layers, 1 KV head, head_dim 8, float16, 4 tokens per page, K/V:
// 128 bytes per layer-page (chunk), 256 bytes per page.
radix::KvLayout SmallLayout(uint32_t page_tokens = kPageTokens);
radix::Namespace SmallNamespace(const std::string& tenant = "acme",
                                const std::string& model = "tiny",
                                uint32_t page_tokens = kPageTokens);

// `pages` pages of tokens drawn from `seed`.
std::vector<radix::TokenId> MakeTokens(uint32_t pages, uint64_t seed,
                                       uint32_t page_tokens = kPageTokens);
// `size` bytes drawn from `seed`.
std::vector<std::byte> MakeBytes(uint64_t size, uint64_t seed);

// A blob's content: tokens, bytes and chunk checksums.
struct BlobContent {
  std::vector<radix::TokenId> tokens;
  std::vector<std::byte> bytes;
  std::vector<uint64_t> checksums;
};
BlobContent MakeBlob(const radix::Namespace& ns, uint32_t pages, uint64_t seed);

// Small arena (1 MiB, 4 KiB granules), no reaper or mover thread, no TEXT tier (blobs
// whose bytes are dropped leave the index), LRU in every tier, the given clock.
NodeEngineOptions SmallOptions(Clock* clock, uint64_t dram_bytes = uint64_t{1} << 20);

// Puts `blob` and commits it; returns the commit reply (or the first error). Writes the
// bytes in two halves to exercise ranges.
absl::StatusOr<CommitPutReply> PutBlob(NodeEngine& engine, const radix::Namespace& ns,
                                       std::optional<BlobParent> parent, const BlobContent& blob);
// The BeginPut request of `blob`.
PutRequest PutRequestOf(std::optional<BlobParent> parent, const BlobContent& blob);
// BeginPut only.
absl::StatusOr<BeginPutReply> BeginBlob(NodeEngine& engine, const radix::Namespace& ns,
                                        std::optional<BlobParent> parent, const BlobContent& blob);
// PutTarget + copy + PutReceived of the whole blob.
absl::Status SendBlob(NodeEngine& engine, uint64_t put_id, const BlobContent& blob);

// Bytes [offset, offset + length) of `key` under `lease` via ReadSource.
absl::StatusOr<std::vector<std::byte>> ReadBytes(NodeEngine& engine, uint64_t lease,
                                                 const radix::BlobKey& key, uint64_t offset,
                                                 uint64_t length);

// A read range over the whole blob (all pages, all layers).
ReadRange WholeBlob(const radix::BlobKey& key, uint32_t pages, uint32_t layers = 2);

// For the components' tests: a DRAM arena of `capacity_bytes` (4 KiB granules, no huge
// pages), and LRU in every tier with admission "always".
std::unique_ptr<tiering::DramArena> SmallArena(const char* name, uint64_t capacity_bytes);
TierPolicies LruTierPolicies();

}  // namespace strata::store::core::testing
