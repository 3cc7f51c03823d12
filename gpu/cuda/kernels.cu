// clang-format off: the file's own header first (clang-format does not know .cu).
#include "gpu/cuda/kernels.h"
// clang-format on

#include "gpu/cuda/fill_pattern.h"
#include "strata/gpu/moe_reference.h"
#include "strata/gpu/reference_math.h"
#include "strata/gpu/xxh3.h"

namespace strata::gpu {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr size_t kMaxBlocks = 4096;

__global__ void FillPatternKernel(uint8_t* dst, size_t bytes, uint32_t seed) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < bytes; i += stride) {
    dst[i] = FillPatternByte(i, seed);
  }
}

__global__ void PagedCopyKernel(bool scatter, uint8_t* blob, uint8_t* const* tensors,
                                const uint64_t* rows, uint32_t num_layers, uint32_t num_pages,
                                uint32_t page_tokens, uint64_t row_bytes, uint64_t row_stride,
                                uint32_t halves) {
  const uint64_t t = blockIdx.x;
  const uint32_t l = blockIdx.y;
  const uint64_t block_bytes = uint64_t{page_tokens} * row_bytes;
  const uint64_t layer_page = (uint64_t{l} * num_pages + t / page_tokens) * halves * block_bytes;
  const uint64_t row = rows[t];
  for (uint32_t h = 0; h < halves; ++h) {
    uint8_t* b = blob + layer_page + h * block_bytes + (t % page_tokens) * row_bytes;
    uint8_t* c = tensors[h * num_layers + l] + row * row_stride;
    uint8_t* dst = scatter ? c : b;
    const uint8_t* src = scatter ? b : c;
    const bool wide =
        ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | row_bytes) & 15) ==
        0;
    if (wide) {
      const uint64_t words = row_bytes / 16;
      for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
        reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
      }
    } else {
      for (uint64_t i = threadIdx.x; i < row_bytes; i += blockDim.x) dst[i] = src[i];
    }
  }
}

}  // namespace

cudaError_t LaunchPagedCopy(bool scatter, uint8_t* blob, uint8_t* const* tensors,
                            const uint64_t* rows, uint32_t num_layers, uint32_t num_pages,
                            uint32_t page_tokens, uint64_t row_bytes, uint64_t row_stride,
                            uint32_t halves, cudaStream_t stream) {
  const uint64_t tokens = uint64_t{num_pages} * page_tokens;
  if (tokens == 0 || num_layers == 0) return cudaSuccess;
  if (tokens > 0x7fffffffu || num_layers > 65535u) return cudaErrorInvalidValue;
  // A row of 8 heads x 128 bf16 is 2 KiB: 128 threads move it in one 16-byte word each.
  const uint64_t words = (row_bytes + 15) / 16;
  const unsigned threads = static_cast<unsigned>(words >= 256 ? 256 : (words < 32 ? 32 : words));
  (void)cudaGetLastError();
  PagedCopyKernel<<<dim3(static_cast<unsigned>(tokens), num_layers), threads, 0, stream>>>(
      scatter, blob, tensors, rows, num_layers, num_pages, page_tokens, row_bytes, row_stride,
      halves);
  return cudaGetLastError();
}

namespace {

constexpr unsigned kProjectThreads = 128;

// Token blockIdx.x, columns first_column + blockIdx.y * kProjectThreads + threadIdx.x.
__global__ void ReferenceProjectKernel(ReferenceKvJob job, uint32_t layer, uint32_t first_column) {
  __shared__ float h[reference::kModelDim];
  const uint64_t t = blockIdx.x;
  if (threadIdx.x < reference::kModelDim) {
    h[threadIdx.x] = job.hidden[t * reference::kModelDim + threadIdx.x];
  }
  __syncthreads();
  const uint32_t j = first_column + blockIdx.y * kProjectThreads + threadIdx.x;
  if (j >= job.layer_columns) return;
  const uint64_t columns = job.layer_columns;
  const float* w = job.weights + uint64_t{layer} * reference::kModelDim * columns;
  const float y = reference::Dot(w + j, columns, h);
  job.projected[t * columns + j] = y;
  if (job.out == nullptr || j >= job.kv_columns) return;
  const bool value = j >= job.padded_width;
  const uint32_t e = value ? j - job.padded_width : j;
  if (e >= job.kv_width) return;  // padding
  const uint64_t position = job.first_position + t;
  const uint64_t page = position / job.page_tokens - job.blob_first_page;
  uint8_t* row = job.out + (uint64_t{layer} * job.blob_pages + page) * job.layer_page_bytes +
                 (position % job.page_tokens) * job.row_bytes + (value ? job.kv_block_bytes : 0);
  reference::EncodeElement(job.element, y,
                           row + uint64_t{e} * reference::ElementBytes(job.element));
}

// Channel threadIdx.x, every token in order.
__global__ void ReferenceMixKernel(ReferenceKvJob job, uint32_t layer) {
  const uint32_t c = threadIdx.x;
  float s = job.running_mean[uint64_t{layer} * reference::kModelDim + c];
  for (uint64_t t = 0; t < job.tokens; ++t) {
    float* h = job.hidden + t * reference::kModelDim + c;
    float x = *h;
    reference::MixStep(job.projected[t * job.layer_columns + job.kv_columns + c], &s, &x);
    *h = x;
  }
  job.running_mean[uint64_t{layer} * reference::kModelDim + c] = s;
}

}  // namespace

cudaError_t LaunchReferenceKv(const ReferenceKvJob& job, cudaStream_t stream) {
  if (job.tokens > 0x7fffffffu) return cudaErrorInvalidValue;
  const uint32_t first_column = job.out != nullptr ? 0 : job.kv_columns;
  const uint32_t columns = job.layer_columns - first_column;
  const dim3 grid(static_cast<unsigned>(job.tokens),
                  (columns + kProjectThreads - 1) / kProjectThreads);
  (void)cudaGetLastError();
  for (uint32_t l = 0; l < job.layers; ++l) {
    ReferenceProjectKernel<<<grid, kProjectThreads, 0, stream>>>(job, l, first_column);
    ReferenceMixKernel<<<1, reference::kModelDim, 0, stream>>>(job, l);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

namespace {

__global__ void ChecksumChunksKernel(const uint8_t* data, uint64_t chunk_bytes, uint64_t chunks,
                                     Xxh3Secrets secrets, uint64_t* sums) {
  const uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= chunks) return;
  sums[i] = Xxh3(data + i * chunk_bytes, chunk_bytes, secrets);
}

}  // namespace

cudaError_t LaunchChecksumChunks(const uint8_t* data, uint64_t chunk_bytes, uint64_t chunks,
                                 const Xxh3Secrets& secrets, uint64_t* sums, cudaStream_t stream) {
  constexpr unsigned kThreads = 128;
  const uint64_t blocks = (chunks + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffffu) return cudaErrorInvalidValue;
  (void)cudaGetLastError();
  ChecksumChunksKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      data, chunk_bytes, chunks, secrets, sums);
  return cudaGetLastError();
}

namespace {

__global__ void AttentionKernel(AttentionJob job) {
  const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= job.heads * job.head_dim) return;
  job.out[c] = reference::AttentionOutput(job, c);
}

}  // namespace

namespace {

__global__ void RouterKernel(ExpertsJob job) {
  const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < job.experts) job.logits[x] = reference::RouterLogit(job, x);
}

__global__ void ChooseKernel(ExpertsJob job) {
  reference::ChooseExperts(job.logits, job.experts, job.top_k, job.chosen);
}

__global__ void ExpertKernel(ExpertsJob job) {
  const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < job.width) job.out[c] = reference::ExpertOutput(job, c);
}

}  // namespace

cudaError_t LaunchExperts(const ExpertsJob& job, cudaStream_t stream) {
  constexpr unsigned kThreads = 128;
  (void)cudaGetLastError();
  RouterKernel<<<(job.experts + kThreads - 1) / kThreads, kThreads, 0, stream>>>(job);
  ChooseKernel<<<1, 1, 0, stream>>>(job);
  ExpertKernel<<<(job.width + kThreads - 1) / kThreads, kThreads, 0, stream>>>(job);
  return cudaGetLastError();
}

cudaError_t LaunchAttention(const AttentionJob& job, cudaStream_t stream) {
  constexpr unsigned kThreads = 128;
  const unsigned blocks = (job.heads * job.head_dim + kThreads - 1) / kThreads;
  (void)cudaGetLastError();
  AttentionKernel<<<blocks, kThreads, 0, stream>>>(job);
  return cudaGetLastError();
}

cudaError_t LaunchFillPattern(void* dst, size_t bytes, uint32_t seed, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  size_t blocks = (bytes + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  // Clear a stale non-sticky error of an earlier call on this thread, so the
  // check below reports this launch only.
  (void)cudaGetLastError();
  FillPatternKernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(
      static_cast<uint8_t*>(dst), bytes, seed);
  return cudaGetLastError();
}

}  // namespace strata::gpu
