// Paged KV: moving a blob's pages between strata's layout and an inference engine's paged
// KV cache, given where each token lives in that cache.
//
// The blob side (BlobShape) is radix::BlobLayout, described without radix (gpu depends on
// nothing above base): layer-major, layer l page p at (l * num_pages + p) * LayerPageBytes();
// one layer-page is K[page_tokens][row] then V[page_tokens][row] (kKeyValue), or the MLA
// latent[page_tokens][row] alone; a row is one token of one layer: num_kv_heads * head_dim
// elements (MLA: the latent width), row_bytes bytes.
//
// The engine side (PagedCache) is, per layer, a K tensor and a V tensor (MLA: one latent
// tensor) whose row r sits at base + r * row_stride. Every engine layout strata serves is
// one of these, with rows numbered by a block table or slot indices:
//
//   engine layout                          per layer                         token t's row
//   -------------------------------------  --------------------------------
//   ------------------------ vLLM, K and V apart (FlashAttention)   K, V [num_blocks, block_size,
//   block_table[t / bs] * bs
//                                          num_kv_heads, head_size]          + t % bs
//   vLLM, combined                         [2, num_blocks, block_size,       as above; V starts
//                                          num_kv_heads, head_size]          num_blocks * bs rows
//                                          in
//   SGLang MHA token pool                  K, V [num_slots, heads, head_dim] slot_indices[t]
//   MLA (vLLM blocks or SGLang slots)      latent [rows, 1, kv_lora+rope]    either of the above
//
// ScatterPaged copies the blob's token rows to cache rows rows[t] (t counts the blob's
// tokens from its first page), layer by layer, K and V; GatherPaged is the reverse (the
// blob to Write from). Device::ScatterPagedAsync / GatherPagedAsync run them on a device
// (CUDA: one kernel; the host device: the references below). The blob may be device memory
// or, on CUDA, pinned or registered host memory, which the kernel then reads across PCIe in
// the same pass (no separate staging copy).
//
// Errors (CheckPagedTransfer, INVALID_ARGUMENT naming what): a zero field in the shape;
// tensors missing for a layer (k: num_layers, v: num_layers for kKeyValue, none for MLA), a
// null tensor; rows.size() != tokens; a row >= cache.rows; row_stride < row_bytes; for a
// scatter, two tokens to one row.
//
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace strata::gpu {

struct BlobShape {
  uint32_t num_layers = 0;
  uint32_t num_pages = 0;
  uint32_t page_tokens = 0;
  uint64_t row_bytes = 0;  // one token of one layer, of K (or V, or the latent)
  bool key_value = true;   // false: MLA latent, one tensor per layer

  uint64_t Tokens() const { return uint64_t{num_pages} * page_tokens; }
  uint64_t BlockBytes() const { return uint64_t{page_tokens} * row_bytes; }
  uint64_t LayerPageBytes() const { return BlockBytes() * (key_value ? 2 : 1); }
  uint64_t TotalBytes() const { return uint64_t{num_layers} * num_pages * LayerPageBytes(); }
};

struct PagedCache {
  std::vector<void*> k;  // per layer: K rows (MLA: the latent rows)
  std::vector<void*> v;  // per layer: V rows; empty for MLA
  uint64_t rows = 0;     // rows in each tensor
  uint64_t row_stride = 0;
};

// vLLM with K and V apart: k[l], v[l] each [num_blocks, block_size, heads, head_size].
PagedCache VllmSeparateCache(absl::Span<void* const> k, absl::Span<void* const> v,
                             uint64_t num_blocks, uint32_t block_size, uint64_t row_bytes);
// vLLM combined: kv[l] is [2, num_blocks, block_size, heads, head_size].
PagedCache VllmCombinedCache(absl::Span<void* const> kv, uint64_t num_blocks, uint32_t block_size,
                             uint64_t row_bytes);
// SGLang's MHA token pool: k[l], v[l] each [num_slots, heads, head_dim].
PagedCache SglangSlotCache(absl::Span<void* const> k, absl::Span<void* const> v, uint64_t num_slots,
                           uint64_t row_bytes);
// MLA: latent[l] is [rows, 1, latent_dim] (vLLM: rows = num_blocks * block_size; SGLang:
// num_slots).
PagedCache MlaCache(absl::Span<void* const> latent, uint64_t rows, uint64_t row_bytes);

// Rows of tokens [first_token, first_token + count) of a sequence whose blocks the table
// lists (vLLM): block_table[t / block_size] * block_size + t % block_size. INVALID_ARGUMENT
// when the table is too short or holds a negative block.
absl::Status RowsFromBlockTable(absl::Span<const int32_t> block_table, uint32_t block_size,
                                uint64_t first_token, uint64_t count, std::vector<uint64_t>* rows);
// Rows from SGLang slot indices (int64 per token). INVALID_ARGUMENT for a negative slot.
absl::Status RowsFromSlots(absl::Span<const int64_t> slots, std::vector<uint64_t>* rows);

// The checks above, shared by every implementation.
absl::Status CheckPagedTransfer(const BlobShape& shape, const PagedCache& cache,
                                absl::Span<const uint64_t> rows, bool scatter);

// The CPU reference: every pointer host-addressable. REQUIRES: CheckPagedTransfer passed.
void ScatterPagedReference(const void* blob, const BlobShape& shape, const PagedCache& cache,
                           absl::Span<const uint64_t> rows);
void GatherPagedReference(void* blob, const BlobShape& shape, const PagedCache& cache,
                          absl::Span<const uint64_t> rows);

}  // namespace strata::gpu
