// strata's CUDA kernels, gpu-internal. Each Launch* function enqueues one kernel
// on `stream` and returns the launch error (cudaSuccess when enqueued); failures
// while the kernel runs surface on the stream's next synchronization. The caller
// (CudaDevice) has made the right device current and turns errors into Status
// with FromCudaError. The paged-KV gather/scatter kernels will live here too.
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

}  // namespace strata::gpu
