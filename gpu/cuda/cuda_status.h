// FromCudaError: the one place where a CUDA runtime error becomes an absl::Status.
//
//   cudaSuccess                                   OK
//   cudaErrorMemoryAllocation                     RESOURCE_EXHAUSTED
//   cudaErrorInvalidValue, InvalidDevicePointer,  INVALID_ARGUMENT (the caller
//     InvalidMemcpyDirection, InvalidDevice         passed something the device rejects)
//   cudaErrorHostMemoryAlreadyRegistered          ALREADY_EXISTS
//   cudaErrorHostMemoryNotRegistered              NOT_FOUND
//   no device / driver: NoDevice, InsufficientDriver, StubLibrary,
//     DevicesUnavailable, SystemNotReady, SystemDriverMismatch,
//     CompatNotSupportedOnDevice, InitializationError, CudartUnloading   UNAVAILABLE
//   anything else (incl. sticky faults such as cudaErrorIllegalAddress)  INTERNAL
//
// The message keeps the operation, cudaGetErrorName and cudaGetErrorString:
// "cudaMalloc(1024 bytes): cudaErrorMemoryAllocation: out of memory".
//
// Pure and thread-safe. gpu-internal (includes the CUDA runtime API).
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace strata::gpu {

absl::Status FromCudaError(cudaError_t error, absl::string_view operation);

}  // namespace strata::gpu
