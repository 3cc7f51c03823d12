// clang-format off: the file's own header first (clang-format does not know .cu).
#include "gpu/cuda/kernels.h"
// clang-format on

#include "gpu/cuda/fill_pattern.h"

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

}  // namespace

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
