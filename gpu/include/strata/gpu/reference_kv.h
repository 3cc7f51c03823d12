// The reference model on a device: Device::ReferenceKvAsync runs one ReferenceKvJob — the
// model's layers over a run of tokens (worker::ReferenceModel's specification, its
// arithmetic in reference_math.h) with the KV written as a blob — on the device: CUDA
// kernels on a GPU, RunReferenceKvOnHost (below) on the host device. Both compute every
// value with the same rounded operations in the same order, so the bytes are the CPU
// model's (worker::DeviceReferenceModel builds the jobs and is tested against it).
//
// The job, per layer l (weights at weights + l * kModelDim * layer_columns, row-major):
//   y_t[j]  = Dot(W_l[.][j], h_t)              for every token t and column j (only the mix
//                                              columns [kv_columns, layer_columns) when out
//                                              is null)
//   the KV of token t: y_t[0, kv_width) (K or the MLA latent) and, key_value, y_t[padded_width,
//   padded_width + kv_width) (V), encoded as `element`, to its row of the blob
//   then, token by token in order, for each channel c: MixStep(y_t[kv_columns + c], s_l[c],
//   h_t[c]) — h_t becomes the next layer's input, s_l the running mean carried on.
// Blob addressing (radix::BlobLayout, as BlobShape in paged_kv.h): token t sits at position
// p = first_position + t, on blob page p / page_tokens - blob_first_page; layer l of page q at
// (l * blob_pages + q) * layer_page_bytes; its row at (p % page_tokens) * row_bytes; V
// kv_block_bytes after K.
//
// Errors (CheckReferenceKvJob): INVALID_ARGUMENT for a null buffer, zero tokens or layers,
// columns that do not fit (kv_width > padded_width, kv_columns + kModelDim != layer_columns,
// kv_columns != padded_width * (key_value ? 2 : 1)), an element code that is not one, rows that do
// not fit their page (row_bytes < kv_width * element bytes, page_tokens * row_bytes >
// kv_block_bytes), tokens outside the blob's pages.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

#include "strata/gpu/reference_math.h"

namespace strata::gpu {

// OK when the job is well-formed (the errors above); does not look at memory.
absl::Status CheckReferenceKvJob(const ReferenceKvJob& job);

// Runs the job on the CPU, all pointers host memory. REQUIRES: CheckReferenceKvJob OK.
void RunReferenceKvOnHost(const ReferenceKvJob& job);

}  // namespace strata::gpu
