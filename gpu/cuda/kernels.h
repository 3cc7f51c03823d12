// strata's CUDA kernels, gpu-internal. Each Launch* function enqueues one kernel
// on `stream` and returns the launch error (cudaSuccess when enqueued); failures
// while the kernel runs surface on the stream's next synchronization. The caller
// (CudaDevice) has made the right device current and turns errors into Status
// with FromCudaError.
//
// REQUIRES: pointers are device memory of the current device, valid until the
// kernel completes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace strata::gpu {

// dst[i] = FillPatternByte(i, seed) for i in [0, bytes) (gpu/cuda/fill_pattern.h).
cudaError_t LaunchFillPattern(void* dst, size_t bytes, uint32_t seed, cudaStream_t stream);

// Paged KV (strata/gpu/paged_kv.h): for layer l < num_layers, token t < tokens and half
// h < halves (2: K and V; 1: MLA latent), copies row_bytes bytes between the blob's row
// blob + (l * num_pages + t / page_tokens) * layer_page_bytes + h * block_bytes
//      + (t % page_tokens) * row_bytes
// and the cache's row tensors[h * num_layers + l] + rows[t] * row_stride; scatter: blob ->
// cache. `tensors` and `rows` are device memory; the blob device memory or mapped host
// memory. One thread block per (token, layer); 16-byte words where every address allows.
cudaError_t LaunchPagedCopy(bool scatter, uint8_t* blob, uint8_t* const* tensors,
                            const uint64_t* rows, uint32_t num_layers, uint32_t num_pages,
                            uint32_t page_tokens, uint64_t row_bytes, uint64_t row_stride,
                            uint32_t halves, cudaStream_t stream);

// The reference model's job (strata/gpu/reference_kv.h), every pointer in it device memory,
// CheckReferenceKvJob OK: per layer, a projection kernel (one thread per token and column,
// the K/V elements encoded and written by the thread that computed them) and a mix kernel
// (one thread per channel, the tokens in order: the running mean is a recurrence).
struct ReferenceKvJob;
struct Xxh3Secrets;
struct AttentionJob;
// The MoE reference attention (strata/gpu/moe_reference.h): one thread per output column.
cudaError_t LaunchAttention(const AttentionJob& job, cudaStream_t stream);
struct ExpertsJob;
// The MoE layer (moe_reference.h): a logits kernel (a thread per expert), the choice (one
// thread), the experts' output (a thread per column).
cudaError_t LaunchExperts(const ExpertsJob& job, cudaStream_t stream);
// XXH3-64 (strata/gpu/xxh3.h) of each of `chunks` chunks of `chunk_bytes` bytes at `data`
// into sums[0, chunks): one thread per chunk.
cudaError_t LaunchChecksumChunks(const uint8_t* data, uint64_t chunk_bytes, uint64_t chunks,
                                 const Xxh3Secrets& secrets, uint64_t* sums, cudaStream_t stream);
cudaError_t LaunchReferenceKv(const ReferenceKvJob& job, cudaStream_t stream);

}  // namespace strata::gpu
