// OpenCudaDevice and CudaDeviceCount where strata is built without CUDA
// (STRATA_HAVE_CUDA off); CMake selects this file instead of gpu/cuda/.
#include "absl/strings/str_cat.h"

#include "strata/gpu/device.h"

namespace strata::gpu {

absl::StatusOr<std::unique_ptr<Device>> OpenCudaDevice(int ordinal) {
  if (ordinal < 0) {
    return absl::InvalidArgumentError(absl::StrCat("OpenCudaDevice: negative ordinal ", ordinal));
  }
  return absl::UnavailableError("strata built without CUDA");
}

int CudaDeviceCount() { return 0; }

}  // namespace strata::gpu
