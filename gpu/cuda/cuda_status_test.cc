#include "gpu/cuda/cuda_status.h"

#include <cuda_runtime_api.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::gpu {
namespace {

using absl::StatusCode;
using ::testing::HasSubstr;

TEST(FromCudaErrorTest, SuccessIsOk) { EXPECT_TRUE(FromCudaError(cudaSuccess, "x").ok()); }

TEST(FromCudaErrorTest, MessageKeepsOperationNameAndDescription) {
  const absl::Status status = FromCudaError(cudaErrorMemoryAllocation, "cudaMalloc(64 bytes)");
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("cudaMalloc(64 bytes): "));
  EXPECT_THAT(std::string(status.message()), HasSubstr("cudaErrorMemoryAllocation"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(cudaGetErrorString(cudaErrorMemoryAllocation)));
}

TEST(FromCudaErrorTest, MapsEachClassOfError) {
  struct Case {
    cudaError_t error;
    StatusCode code;
  };
  const Case cases[] = {
      {cudaErrorMemoryAllocation, StatusCode::kResourceExhausted},
      {cudaErrorInvalidValue, StatusCode::kInvalidArgument},
      {cudaErrorInvalidDevicePointer, StatusCode::kInvalidArgument},
      {cudaErrorInvalidDevice, StatusCode::kInvalidArgument},
      {cudaErrorHostMemoryAlreadyRegistered, StatusCode::kAlreadyExists},
      {cudaErrorHostMemoryNotRegistered, StatusCode::kNotFound},
      {cudaErrorNoDevice, StatusCode::kUnavailable},
      {cudaErrorInsufficientDriver, StatusCode::kUnavailable},
      {cudaErrorStubLibrary, StatusCode::kUnavailable},
      {cudaErrorSystemDriverMismatch, StatusCode::kUnavailable},
      {cudaErrorIllegalAddress, StatusCode::kInternal},
      {cudaErrorLaunchFailure, StatusCode::kInternal},
      {cudaErrorInvalidResourceHandle, StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    const absl::Status status = FromCudaError(c.error, "op");
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(cudaGetErrorName(c.error)));
  }
}

}  // namespace
}  // namespace strata::gpu
