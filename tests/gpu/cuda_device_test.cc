// The CUDA device on a real GPU: the Device conformance suite on OpenCudaDevice(0)
// plus the fill kernel. Where no device is usable every test skips with
// "no CUDA device: <status>", main prints the reason once, and the binary exits
// 77, which ctest reports as "Skipped" (SKIP_RETURN_CODE). See README.md.
#include "gpu/cuda/cuda_device.h"

#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

#include "gpu/cuda/fill_pattern.h"
#include "gpu/device_conformance_test_suite.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"

// CUDA maps device and pinned memory into the address range ASan reserves as
// its shadow gap; under ASan this binary must let it (no effect otherwise).
extern "C" const char* __asan_default_options() { return "protect_shadow_gap=0"; }

namespace strata::gpu {
namespace {

constexpr int kOrdinal = 0;

INSTANTIATE_TEST_SUITE_P(Cuda, DeviceConformanceTest,
                         ::testing::Values(DeviceConformanceParam{
                             "CUDA", [] { return OpenCudaDevice(kOrdinal); }}),
                         DeviceConformanceParamName);

class CudaKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(kOrdinal);
    if (absl::IsUnavailable(device.status())) {
      GTEST_SKIP() << "no CUDA device: " << device.status();
    }
    ASSERT_OK(device);
    device_ = std::move(device).value();
  }

  // Copies `bytes` bytes at `src` (device) back to the host.
  std::vector<uint8_t> ReadBack(const void* src, size_t bytes, Stream& stream) {
    std::vector<uint8_t> host(bytes, 0);
    EXPECT_OK(device_->CopyToHostAsync(host.data(), src, bytes, stream));
    EXPECT_OK(device_->Synchronize(stream));
    return host;
  }

  std::unique_ptr<CudaDevice> device_;
};

TEST_F(CudaKernelTest, FillPatternWritesEveryByteOnTheDevice) {
  constexpr size_t kBytes = (3 << 20) + 5;  // > one grid's worth: exercises the stride loop
  constexpr uint32_t kSeed = 7;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK(device_->MemsetAsync(buffer.data(), 0, kBytes, stream));
  ASSERT_OK(device_->FillPatternAsync(buffer.data(), kBytes, kSeed, stream));
  const std::vector<uint8_t> host = ReadBack(buffer.data(), kBytes, stream);
  size_t mismatches = 0;
  for (size_t i = 0; i < kBytes; ++i) {
    if (host[i] != FillPatternByte(i, kSeed) && mismatches++ < 5) {
      ADD_FAILURE() << "byte " << i << ": device wrote " << int{host[i]} << ", expected "
                    << int{FillPatternByte(i, kSeed)};
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST_F(CudaKernelTest, FillPatternTouchesOnlyItsRange) {
  constexpr size_t kBytes = 64 << 10;
  constexpr size_t kOffset = 1000;
  constexpr size_t kLength = 4096;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  auto* base = static_cast<uint8_t*>(buffer.data());
  ASSERT_OK(device_->MemsetAsync(base, 0xEE, kBytes, stream));
  ASSERT_OK(device_->FillPatternAsync(base + kOffset, kLength, 2, stream));
  const std::vector<uint8_t> host = ReadBack(base, kBytes, stream);
  for (size_t i = 0; i < kBytes; ++i) {
    const bool inside = i >= kOffset && i < kOffset + kLength;
    const uint8_t expected = inside ? FillPatternByte(i - kOffset, 2) : 0xEE;
    ASSERT_EQ(host[i], expected) << "at " << i;
  }
}

TEST_F(CudaKernelTest, KernelOutputIsOrderedAcrossStreamsByAnEvent) {
  constexpr size_t kBytes = 32 << 20;
  constexpr uint32_t kSeed = 99;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer pinned, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream compute, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Stream copy, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Event filled, device_->CreateEvent());
  std::memset(pinned.data(), 0, kBytes);

  ASSERT_OK(device_->FillPatternAsync(buffer.data(), kBytes, kSeed, compute));
  ASSERT_OK(filled.Record(compute));
  ASSERT_OK(device_->WaitForEvent(copy, filled));
  ASSERT_OK(device_->CopyToHostAsync(pinned.data(), buffer.data(), kBytes, copy));
  ASSERT_OK(device_->Synchronize(copy));
  const auto* host = static_cast<const uint8_t*>(pinned.data());
  for (size_t i = 0; i < kBytes; i += 4093) {
    ASSERT_EQ(host[i], FillPatternByte(i, kSeed)) << "at " << i;
  }
  ASSERT_EQ(host[kBytes - 1], FillPatternByte(kBytes - 1, kSeed));
}

TEST_F(CudaKernelTest, FillPatternRejectsBadArguments) {
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  EXPECT_CODE(device_->FillPatternAsync(nullptr, 16, 1, stream),
              absl::StatusCode::kInvalidArgument);
  EXPECT_OK(device_->FillPatternAsync(nullptr, 0, 1, stream));
  Stream empty;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(16));
  EXPECT_CODE(device_->FillPatternAsync(buffer.data(), 16, 1, empty),
              absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::gpu

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Say once, up front, what this run will exercise.
  const int count = strata::gpu::CudaDeviceCount();
  absl::StatusOr<std::unique_ptr<strata::gpu::Device>> device =
      strata::gpu::OpenCudaDevice(strata::gpu::kOrdinal);
  const bool skipped = !device.ok();
  if (skipped) {
    std::cout << "gpu_cuda_device_test: SKIPPED: no CUDA device: " << device.status() << "\n";
  } else {
    std::cout << "gpu_cuda_device_test: " << count << " CUDA device(s); testing "
              << (*device)->name() << "\n";
  }
  device = absl::UnavailableError("closed");  // the tests open their own
  std::cout.flush();
  const int rc = RUN_ALL_TESTS();
  return (rc == 0 && skipped) ? 77 : rc;
}
