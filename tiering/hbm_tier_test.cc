// HbmTier on the host gpu::Device (CI has no GPU): the Tier contract — allocation, bytes in
// and out exact, ranges checked, full tier, stats — and device addresses that other device
// copies and kernels can use.
#include "strata/tiering/hbm_tier.h"

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/byte_size.h"
#include "strata/base/status_test_macros.h"

namespace strata::tiering {
namespace {

using base::kKiB;
using base::kMiB;

std::vector<std::byte> HbmPattern(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

class HbmTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(device_, gpu::CreateHostDevice({.memory_bytes = 32 * kMiB}));
    ASSERT_OK_AND_ASSIGN(tier_, HbmTier::Create(device_, {.capacity_bytes = 4 * kMiB}));
  }
  std::shared_ptr<gpu::Device> device_;
  std::unique_ptr<HbmTier> tier_;
};

TEST_F(HbmTierTest, BytesGoInAndOutExactlyThroughTheDevice) {
  EXPECT_EQ(tier_->kind(), report::Tier::kHbm);
  EXPECT_EQ(tier_->capacity(), 4 * kMiB);
  // The pool is the device's memory.
  EXPECT_EQ(device_->stats().device_bytes, 4 * kMiB);
  ASSERT_OK_AND_ASSIGN(const Extent a, tier_->Allocate(1 * kMiB));
  ASSERT_OK_AND_ASSIGN(const Extent b, tier_->Allocate(100));
  EXPECT_EQ(b.length, 64 * kKiB);
  const std::vector<std::byte> data = HbmPattern(1, a.length);
  ASSERT_OK(tier_->Write(a, 0, data));
  std::vector<std::byte> back(a.length);
  ASSERT_OK(tier_->Read(a, 0, absl::MakeSpan(back)));
  EXPECT_EQ(back, data);
  // A partial range; a device-to-device copy out of the extent's device address.
  std::vector<std::byte> part(4096);
  ASSERT_OK(tier_->Read(a, 8192, absl::MakeSpan(part)));
  EXPECT_EQ(std::memcmp(part.data(), data.data() + 8192, part.size()), 0);
  ASSERT_OK_AND_ASSIGN(gpu::DeviceBuffer other, device_->Allocate(a.length));
  ASSERT_OK_AND_ASSIGN(gpu::Stream stream, device_->CreateStream());
  ASSERT_OK(
      device_->CopyDeviceToDeviceAsync(other.data(), tier_->DeviceAddress(a), a.length, stream));
  ASSERT_OK(device_->CopyToHostAsync(back.data(), other.data(), back.size(), stream));
  EXPECT_EQ(back, data);
  // Stats follow the allocator and the counters.
  TierStats stats = tier_->Stats();
  EXPECT_EQ(stats.tier, report::Tier::kHbm);
  EXPECT_EQ(stats.used_bytes, a.length + b.length);
  EXPECT_EQ(stats.blobs, 2u);
  tier_->counters().RecordHit(3);
  EXPECT_EQ(tier_->Stats().hits, 3u);
  tier_->Free(a);
  tier_->Free(b);
  EXPECT_EQ(tier_->Stats().used_bytes, 0u);
}

TEST_F(HbmTierTest, RangesAreCheckedAndAFullTierRefuses) {
  ASSERT_OK_AND_ASSIGN(const Extent a, tier_->Allocate(64 * kKiB));
  std::vector<std::byte> buffer(64 * kKiB + 1);
  EXPECT_EQ(tier_->Write(a, 0, buffer).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(tier_->Read(a, 1, absl::MakeSpan(buffer).first(64 * kKiB)).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(tier_->Read(Extent{8 * kMiB, 64 * kKiB}, 0, absl::MakeSpan(buffer).first(1)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tier_->Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(const Extent rest, tier_->Allocate(4 * kMiB - 64 * kKiB));
  EXPECT_EQ(tier_->Allocate(64 * kKiB).status().code(), absl::StatusCode::kResourceExhausted);
  tier_->Free(rest);
  tier_->Free(a);
}

TEST(HbmTierCreateTest, RefusesWhatTheDeviceCannotHold) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<gpu::Device> device,
                       gpu::CreateHostDevice({.memory_bytes = 1 * kMiB}));
  EXPECT_EQ(HbmTier::Create(device, {.capacity_bytes = 2 * kMiB}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(HbmTier::Create(device, {.capacity_bytes = 1000}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HbmTier::Create(nullptr, {.capacity_bytes = 1 * kMiB}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::tiering
