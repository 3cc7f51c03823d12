// OpenCudaDevice's answers that hold on every machine, with or without CUDA,
// driver or device (the CUDA device's own behaviour is tested in tests/gpu).
#include <iostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/gpu/device.h"

namespace strata::gpu {
namespace {

TEST(OpenCudaDeviceTest, NegativeOrdinalIsInvalidArgument) {
  EXPECT_EQ(OpenCudaDevice(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OpenCudaDeviceTest, OrdinalPastTheLastDeviceIsUnavailableWithAReason) {
  const int count = CudaDeviceCount();
  ASSERT_GE(count, 0);
  const absl::Status status = OpenCudaDevice(count).status();
  std::cout << "CudaDeviceCount() = " << count << "; OpenCudaDevice(" << count << "): " << status
            << "\n";
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  if (count == 0) {
    EXPECT_THAT(std::string(status.message()),
                ::testing::ContainsRegex(
                    "^(strata built without CUDA|no CUDA driver: .+|no CUDA device)$"));
  } else {
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("out of range"));
  }
}

}  // namespace
}  // namespace strata::gpu
