// DeviceReferenceModel on the host device (CI has no GPU; tests/gpu runs the CUDA kernels
// against the same CPU model): the blob it writes into device memory is the CPU model's,
// byte for byte, for every dtype, both formats, tensor-parallel ranks, odd widths (padding),
// long runs split into several jobs, incremental pages and states handed between the two;
// and it refuses what the CPU model refuses.
#include "strata/worker/device_reference_model.h"

#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

#include "reference_model_testing.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"

namespace strata::worker {
namespace {

using model_testing::Bytes;
using model_testing::Layout;
using model_testing::MustCompute;
using model_testing::MustCreate;
using model_testing::RandomTokens;
using model_testing::Small;
using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using radix::TokenId;

class DeviceReferenceModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(device_, gpu::CreateHostDevice({.memory_bytes = size_t{256} << 20}));
    ASSERT_OK_AND_ASSIGN(stream_, device_->CreateStream());
  }

  // The blob of pages [first_page, first_page + num_pages) computed on the device, copied
  // back.
  Bytes OnDevice(DeviceReferenceModel& model, const std::vector<TokenId>& tokens,
                 uint32_t first_page, uint32_t num_pages) {
    const uint64_t bytes = uint64_t{num_pages} * model.model().layout().BytesPerPage();
    absl::StatusOr<gpu::DeviceBuffer> out = device_->Allocate(bytes);
    EXPECT_OK(out.status());
    EXPECT_OK(model.ComputeBlob(tokens, first_page, num_pages, out->data(), bytes));
    return Back(*out, bytes);
  }

  Bytes Back(const gpu::DeviceBuffer& buffer, uint64_t bytes) {
    Bytes host(bytes);
    EXPECT_OK(device_->CopyToHostAsync(host.data(), buffer.data(), bytes, stream_));
    EXPECT_OK(device_->Synchronize(stream_));
    return host;
  }

  std::unique_ptr<DeviceReferenceModel> MustCreateOnDevice(const ReferenceModel& model) {
    absl::StatusOr<std::unique_ptr<DeviceReferenceModel>> on =
        DeviceReferenceModel::Create(model, device_);
    CHECK(on.ok()) << on.status();
    return *std::move(on);
  }

  std::shared_ptr<gpu::Device> device_;
  gpu::Stream stream_;
};

TEST_F(DeviceReferenceModelTest, EveryDTypeAndFormatIsTheCpuModelByteForByte) {
  const std::vector<TokenId> tokens = RandomTokens(6 * 4, 1);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat8E4M3,
                      DType::kFloat8E5M2, DType::kInt8, DType::kUInt8}) {
    for (const KvLayout& layout : {Small(dtype), Layout(dtype, 2, 1, 24, 4, KvFormat::kMlaLatent),
                                   Layout(dtype, 3, 2, 8, 4, KvFormat::kKeyValue, 1, 2)}) {
      SCOPED_TRACE(layout.ToString());
      const std::unique_ptr<ReferenceModel> cpu = MustCreate(layout, 7);
      const std::unique_ptr<DeviceReferenceModel> gpu = MustCreateOnDevice(*cpu);
      // From page 0, and a blob after a prefix (the prefix folded in on the device).
      EXPECT_EQ(OnDevice(*gpu, tokens, 0, 6), MustCompute(*cpu, tokens, 0, 6));
      EXPECT_EQ(OnDevice(*gpu, tokens, 2, 3), MustCompute(*cpu, tokens, 2, 3));
    }
  }
}

TEST_F(DeviceReferenceModelTest, LongRunsSplitIntoJobsAndIncrementalPagesAgree) {
  // 5000 tokens: two jobs of the device model.
  const KvLayout layout = Layout(DType::kBFloat16, 2, 2, 8, 8);
  const std::vector<TokenId> tokens = RandomTokens(625 * 8, 2);
  const std::unique_ptr<ReferenceModel> cpu = MustCreate(layout, 9);
  const std::unique_ptr<DeviceReferenceModel> gpu = MustCreateOnDevice(*cpu);
  EXPECT_EQ(OnDevice(*gpu, tokens, 0, 625), MustCompute(*cpu, tokens, 0, 625));

  // Turn by turn: the state goes between the CPU and the device model at will.
  ModelState state = cpu->InitialState();
  ModelState reference = cpu->InitialState();
  const uint32_t page_tokens = layout.page_tokens;
  for (uint32_t turn = 0, page = 0; turn < 4; page += 3 + turn, ++turn) {
    const uint32_t pages = 3 + turn;
    const auto own = absl::MakeConstSpan(tokens).subspan(size_t{page} * page_tokens,
                                                         size_t{pages} * page_tokens);
    Bytes want(pages * layout.BytesPerPage());
    ASSERT_OK(cpu->ComputeNextPages(&reference, own, absl::MakeSpan(want)));
    if (turn % 2 == 0) {
      ASSERT_OK_AND_ASSIGN(gpu::DeviceBuffer out, device_->Allocate(want.size()));
      ASSERT_OK(gpu->ComputeNextPages(&state, own, out.data(), want.size()));
      EXPECT_EQ(Back(out, want.size()), want) << "turn " << turn;
    } else {
      Bytes got(want.size());
      ASSERT_OK(cpu->ComputeNextPages(&state, own, absl::MakeSpan(got)));
      EXPECT_EQ(got, want) << "turn " << turn;
    }
    EXPECT_EQ(state.tokens(), reference.tokens());
  }
  // Advance on the device equals Advance on the CPU.
  ModelState advanced = cpu->InitialState();
  ASSERT_OK(gpu->Advance(&advanced, absl::MakeConstSpan(tokens).first(5 * page_tokens)));
  ModelState cpu_advanced = cpu->InitialState();
  ASSERT_OK(cpu->Advance(&cpu_advanced, absl::MakeConstSpan(tokens).first(5 * page_tokens)));
  const auto next = absl::MakeConstSpan(tokens).subspan(5 * page_tokens, page_tokens);
  Bytes a(layout.BytesPerPage()), b(layout.BytesPerPage());
  ASSERT_OK(cpu->ComputeNextPages(&advanced, next, absl::MakeSpan(a)));
  ASSERT_OK(cpu->ComputeNextPages(&cpu_advanced, next, absl::MakeSpan(b)));
  EXPECT_EQ(a, b);
}

TEST_F(DeviceReferenceModelTest, RefusesWhatTheCpuModelRefusesAndMemoryNotOnTheDevice) {
  const KvLayout layout = Small(DType::kFloat16);
  const std::unique_ptr<ReferenceModel> cpu = MustCreate(layout, 3);
  const std::unique_ptr<ReferenceModel> other = MustCreate(layout, 4);
  const std::unique_ptr<DeviceReferenceModel> gpu = MustCreateOnDevice(*cpu);
  const std::vector<TokenId> tokens = RandomTokens(2 * 4, 5);
  const uint64_t bytes = 2 * layout.BytesPerPage();
  ASSERT_OK_AND_ASSIGN(gpu::DeviceBuffer out, device_->Allocate(bytes));
  ModelState state = cpu->InitialState();
  EXPECT_CODE(gpu->ComputeNextPages(&state, tokens, out.data(), bytes - 1),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(
      gpu->ComputeNextPages(&state, absl::MakeConstSpan(tokens).first(3), out.data(), bytes),
      absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(gpu->ComputeNextPages(&state, {}, out.data(), bytes),
              absl::StatusCode::kInvalidArgument);
  ModelState foreign = other->InitialState();
  EXPECT_CODE(gpu->ComputeNextPages(&foreign, tokens, out.data(), bytes),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(gpu->ComputeBlob(tokens, 1, 2, out.data(), bytes), absl::StatusCode::kOutOfRange);
  // Host memory is not the device's: refused, the state unchanged.
  std::vector<std::byte> host(bytes);
  EXPECT_CODE(gpu->ComputeNextPages(&state, tokens, host.data(), bytes),
              absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(state.tokens(), 0u);
  ASSERT_OK(gpu->ComputeNextPages(&state, tokens, out.data(), bytes));
  EXPECT_EQ(state.tokens(), 8u);
}

}  // namespace
}  // namespace strata::worker
