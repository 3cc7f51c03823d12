// The CUDA device on a real GPU: the Device conformance suite on OpenCudaDevice(0)
// plus the fill kernel. Where no device is usable every test skips with
// "no CUDA device: <status>", main prints the reason once, and the binary exits
// 77, which ctest reports as "Skipped" (SKIP_RETURN_CODE). See README.md.
#include "gpu/cuda/cuda_device.h"

#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include <xxhash.h>

#include "gtest/gtest.h"

#include "gpu/cuda/fill_pattern.h"
#include "gpu/device_conformance_test_suite.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"
#include "strata/gpu/paged_kv.h"
#include "strata/radix/kv_layout.h"
#include "strata/worker/device_reference_model.h"
#include "strata/worker/reference_model.h"

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

// The paged-KV kernel against the CPU reference (gpu/paged_kv.h), every byte, for each
// engine layout, with the blob in device memory and in pinned host memory (the fused
// path: the kernel reads it across PCIe).
class CudaPagedKvTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Device>> device = OpenCudaDevice(kOrdinal);
    if (absl::IsUnavailable(device.status())) GTEST_SKIP() << "no CUDA device: " << device.status();
    ASSERT_OK(device.status());
    device_ = *std::move(device);
    ASSERT_OK_AND_ASSIGN(stream_, device_->CreateStream());
  }
  void TearDown() override {
    buffers_.clear();
    stream_.Reset();
  }
  void* Buffer(size_t bytes, bool pinned = false) {
    absl::StatusOr<DeviceBuffer> b =
        pinned ? device_->AllocatePinnedHost(bytes) : device_->Allocate(bytes);
    EXPECT_OK(b.status());
    buffers_.push_back(std::make_unique<DeviceBuffer>(*std::move(b)));
    if (!pinned) {
      EXPECT_OK(device_->MemsetAsync(buffers_.back()->data(), 0xEE, bytes, stream_));
    }
    return buffers_.back()->data();
  }
  std::vector<uint8_t> Host(const void* p, size_t bytes) {
    std::vector<uint8_t> out(bytes);
    EXPECT_OK(device_->CopyToHostAsync(out.data(), p, bytes, stream_));
    EXPECT_OK(device_->Synchronize(stream_));
    return out;
  }
  std::unique_ptr<Device> device_;
  Stream stream_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
};

TEST_P(CudaPagedKvTest, KernelMatchesTheReferenceByteForByte) {
  const int layout = GetParam() % 4;         // separate, combined, slots, MLA
  const bool pinned_blob = GetParam() >= 4;  // the blob in pinned host memory
  const bool mla = layout == 3;
  // 8 layers, 6 pages of 16 tokens; rows of 8 heads x 128 bf16 (2 KiB), MLA 576 bf16.
  const BlobShape shape{8, 6, 16, mla ? 576u * 2 : 8u * 128 * 2, !mla};
  const uint64_t rows_in_cache = 40 * 16;
  std::mt19937_64 rng(7 + GetParam());
  std::vector<uint64_t> all(rows_in_cache);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  const std::vector<uint64_t> rows(all.begin(), all.begin() + shape.Tokens());
  std::vector<void*> k, v;
  const uint64_t tensor = rows_in_cache * shape.row_bytes;
  for (uint32_t l = 0; l < shape.num_layers; ++l) {
    k.push_back(Buffer(layout == 1 ? 2 * tensor : tensor));
    if (layout == 0 || layout == 2) v.push_back(Buffer(tensor));
  }
  const PagedCache cache = layout == 1   ? VllmCombinedCache(k, 40, 16, shape.row_bytes)
                           : layout == 3 ? MlaCache(k, rows_in_cache, shape.row_bytes)
                                         : PagedCache{k, v, rows_in_cache, shape.row_bytes};
  std::vector<uint8_t> blob(shape.TotalBytes());
  for (auto& b : blob) b = static_cast<uint8_t>(rng());
  void* source = Buffer(blob.size(), pinned_blob);
  if (pinned_blob) {
    std::memcpy(source, blob.data(), blob.size());
  } else {
    ASSERT_OK(device_->CopyToDeviceAsync(source, blob.data(), blob.size(), stream_));
  }
  ASSERT_OK(device_->ScatterPagedAsync(source, shape, cache, rows, stream_));
  ASSERT_OK(device_->Synchronize(stream_));

  // The reference on host copies of the same (0xEE-filled) tensors.
  std::vector<std::vector<uint8_t>> want_k, want_v;
  std::vector<void*> hk, hv;
  for (uint32_t l = 0; l < shape.num_layers; ++l) {
    want_k.emplace_back(layout == 1 ? 2 * tensor : tensor, 0xEE);
    hk.push_back(want_k.back().data());
    if (!v.empty()) {
      want_v.emplace_back(tensor, 0xEE);
      hv.push_back(want_v.back().data());
    }
  }
  const PagedCache host_cache = layout == 1 ? VllmCombinedCache(hk, 40, 16, shape.row_bytes)
                                            : PagedCache{hk, hv, rows_in_cache, shape.row_bytes};
  ScatterPagedReference(blob.data(), shape, host_cache, rows);
  for (uint32_t l = 0; l < shape.num_layers; ++l) {
    EXPECT_EQ(Host(k[l], want_k[l].size()), want_k[l]) << "K of layer " << l;
    if (!v.empty()) {
      EXPECT_EQ(Host(v[l], tensor), want_v[l]) << "V of layer " << l;
    }
  }
  // And back: the gathered blob is the blob.
  void* back = Buffer(blob.size(), pinned_blob);
  ASSERT_OK(device_->GatherPagedAsync(back, shape, cache, rows, stream_));
  ASSERT_OK(device_->Synchronize(stream_));
  EXPECT_EQ(pinned_blob ? std::vector<uint8_t>(static_cast<uint8_t*>(back),
                                               static_cast<uint8_t*>(back) + blob.size())
                        : Host(back, blob.size()),
            blob);
}

INSTANTIATE_TEST_SUITE_P(Layouts, CudaPagedKvTest, ::testing::Range(0, 8));

// The checksum kernel (the portable XXH3 on the GPU) against libxxhash's, for chunk sizes
// of every XXH3 length class and the store's layer pages.
TEST(CudaChecksumTest, ChunkChecksumsOnTheDeviceAreLibxxhashs) {
  absl::StatusOr<std::unique_ptr<Device>> opened = OpenCudaDevice(kOrdinal);
  if (!opened.ok()) GTEST_SKIP() << "no CUDA device: " << opened.status();
  Device& device = **opened;
  ASSERT_OK_AND_ASSIGN(Stream stream, device.CreateStream());
  std::mt19937_64 rng(3);
  for (const uint64_t chunk : {uint64_t{7}, uint64_t{100}, uint64_t{200}, uint64_t{1000},
                               uint64_t{65536}, uint64_t{64} << 10}) {
    const uint64_t chunks = 257;
    std::vector<uint8_t> host(chunk * chunks);
    for (uint8_t& b : host) b = static_cast<uint8_t>(rng());
    ASSERT_OK_AND_ASSIGN(DeviceBuffer data, device.Allocate(host.size()));
    ASSERT_OK(device.CopyToDeviceAsync(data.data(), host.data(), host.size(), stream));
    std::vector<uint64_t> sums(chunks);
    ASSERT_OK(device.ChecksumChunks(data.data(), chunk, chunks, 0x7374726174612E31ULL, sums.data(),
                                    stream));
    for (uint64_t i = 0; i < chunks; ++i) {
      ASSERT_EQ(sums[i],
                XXH3_64bits_withSeed(host.data() + i * chunk, chunk, 0x7374726174612E31ULL))
          << "chunk " << i << " of " << chunk << " bytes";
    }
  }
}

// The MoE reference attention kernel against the same arithmetic run on the CPU.
TEST(CudaAttentionTest, KernelOutputIsTheHostRunsBits) {
  absl::StatusOr<std::unique_ptr<Device>> opened = OpenCudaDevice(kOrdinal);
  if (!opened.ok()) GTEST_SKIP() << "no CUDA device: " << opened.status();
  Device& device = **opened;
  ASSERT_OK_AND_ASSIGN(Stream stream, device.CreateStream());
  for (reference::Element element : {reference::Element::kBFloat16, reference::Element::kFloat16,
                                     reference::Element::kFloat32}) {
    AttentionJob job;
    job.layers = 3;
    job.pages = 5;
    job.page_tokens = 16;
    job.heads = 4;
    job.head_dim = 32;
    job.element = element;
    job.row_bytes = uint64_t{job.heads} * job.head_dim * reference::ElementBytes(element);
    job.kv_block_bytes = job.page_tokens * job.row_bytes;
    job.layer_page_bytes = 2 * job.kv_block_bytes;
    // Small finite values of every element type: random floats in [-1, 1) encoded.
    std::mt19937 rng(static_cast<uint32_t>(element));
    std::vector<uint8_t> blob(job.BlobBytes());
    const uint32_t size = reference::ElementBytes(element);
    for (size_t i = 0; i + size <= blob.size(); i += size) {
      reference::EncodeElement(element, static_cast<float>(rng() % 2048) / 1024.0f - 1.0f,
                               blob.data() + i);
    }
    std::vector<float> want(job.heads * job.head_dim);
    AttentionJob on_host = job;
    on_host.blob = blob.data();
    on_host.out = want.data();
    RunAttentionOnHost(on_host);
    ASSERT_OK_AND_ASSIGN(DeviceBuffer data, device.Allocate(blob.size()));
    ASSERT_OK_AND_ASSIGN(DeviceBuffer out, device.Allocate(want.size() * sizeof(float)));
    ASSERT_OK(device.CopyToDeviceAsync(data.data(), blob.data(), blob.size(), stream));
    job.blob = static_cast<const uint8_t*>(data.data());
    job.out = static_cast<float*>(out.data());
    ASSERT_OK(device.AttentionAsync(job, stream));
    std::vector<float> got(want.size());
    ASSERT_OK(device.CopyToHostAsync(got.data(), out.data(), got.size() * sizeof(float), stream));
    ASSERT_OK(device.Synchronize(stream));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << "element " << static_cast<int>(element);
  }
}

// The MoE layer's kernels (router, choice, experts) against the same arithmetic on the CPU.
TEST(CudaExpertsTest, KernelsChooseAndMixAsTheHostRunDoes) {
  absl::StatusOr<std::unique_ptr<Device>> opened = OpenCudaDevice(kOrdinal);
  if (!opened.ok()) GTEST_SKIP() << "no CUDA device: " << opened.status();
  Device& device = **opened;
  ASSERT_OK_AND_ASSIGN(Stream stream, device.CreateStream());
  const uint32_t width = 64, experts = 8, top_k = 2;
  std::mt19937 rng(11);
  auto values = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(rng() % 4096) / 4096.0f - 0.5f;
    return v;
  };
  const std::vector<float> o = values(width), router = values(experts * width),
                           weights = values(size_t{experts} * width * width);
  std::vector<float> logits(experts), want(width);
  std::vector<uint32_t> chosen(top_k);
  RunExpertsOnHost({o.data(), router.data(), weights.data(), width, experts, top_k, logits.data(),
                    chosen.data(), want.data()});
  auto upload = [&](const void* p, size_t bytes) {
    absl::StatusOr<DeviceBuffer> b = device.Allocate(bytes);
    EXPECT_OK(b.status());
    EXPECT_OK(device.CopyToDeviceAsync(b->data(), p, bytes, stream));
    return *std::move(b);
  };
  const DeviceBuffer d_o = upload(o.data(), o.size() * 4),
                     d_r = upload(router.data(), router.size() * 4),
                     d_w = upload(weights.data(), weights.size() * 4);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer d_logits, device.Allocate(experts * 4));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer d_chosen, device.Allocate(top_k * 4));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer d_out, device.Allocate(width * 4));
  ASSERT_OK(device.ExpertsAsync(
      {static_cast<const float*>(d_o.data()), static_cast<const float*>(d_r.data()),
       static_cast<const float*>(d_w.data()), width, experts, top_k,
       static_cast<float*>(d_logits.data()), static_cast<uint32_t*>(d_chosen.data()),
       static_cast<float*>(d_out.data())},
      stream));
  std::vector<float> got(width);
  std::vector<uint32_t> got_chosen(top_k);
  ASSERT_OK(device.CopyToHostAsync(got.data(), d_out.data(), width * 4, stream));
  ASSERT_OK(device.CopyToHostAsync(got_chosen.data(), d_chosen.data(), top_k * 4, stream));
  ASSERT_OK(device.Synchronize(stream));
  EXPECT_EQ(got_chosen, chosen);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), width * 4), 0);
}

// The reference model's kernels (strata/gpu/reference_kv.h) against the CPU model: the
// same bytes for every dtype and format, a run of several jobs, a 70B-like page.
TEST(CudaReferenceModelTest, KernelsComputeTheCpuModelsBytes) {
  absl::StatusOr<std::unique_ptr<Device>> opened = OpenCudaDevice(kOrdinal);
  if (!opened.ok()) GTEST_SKIP() << "no CUDA device: " << opened.status();
  std::shared_ptr<Device> device = *std::move(opened);
  ASSERT_OK_AND_ASSIGN(Stream stream, device->CreateStream());
  std::mt19937 rng(5);
  auto layout = [](radix::DType dtype, uint32_t layers, uint32_t heads, uint32_t dim,
                   uint32_t page_tokens, radix::KvFormat format) {
    return radix::KvLayout{.num_layers = layers,
                           .num_kv_heads = heads,
                           .head_dim = dim,
                           .dtype = dtype,
                           .page_tokens = page_tokens,
                           .format = format,
                           .tp_rank = 0,
                           .tp_world = 1};
  };
  std::vector<radix::KvLayout> layouts;
  for (radix::DType dtype :
       {radix::DType::kFloat16, radix::DType::kBFloat16, radix::DType::kFloat32,
        radix::DType::kFloat8E4M3, radix::DType::kFloat8E5M2, radix::DType::kInt8,
        radix::DType::kUInt8}) {
    layouts.push_back(layout(dtype, 3, 3, 5, 4, radix::KvFormat::kKeyValue));
    layouts.push_back(layout(dtype, 2, 1, 24, 4, radix::KvFormat::kMlaLatent));
  }
  layouts.push_back(layout(radix::DType::kBFloat16, 80, 8, 128, 16, radix::KvFormat::kKeyValue));
  for (const radix::KvLayout& l : layouts) {
    SCOPED_TRACE(l.ToString());
    const uint32_t pages = l.num_layers == 80 ? 4 : 1250 / l.page_tokens;  // > 1 job when small
    std::vector<radix::TokenId> tokens(size_t{pages} * l.page_tokens);
    for (radix::TokenId& t : tokens) t = rng() % 128000;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<worker::ReferenceModel> cpu,
                         worker::ReferenceModel::Create(l, 11));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<worker::DeviceReferenceModel> gpu,
                         worker::DeviceReferenceModel::Create(*cpu, device));
    ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> want,
                         cpu->ComputeBlobBytes(tokens, 0, pages));
    ASSERT_OK_AND_ASSIGN(DeviceBuffer out, device->Allocate(want.size()));
    ASSERT_OK(gpu->ComputeBlob(tokens, 0, pages, out.data(), want.size()));
    std::vector<std::byte> got(want.size());
    ASSERT_OK(device->CopyToHostAsync(got.data(), out.data(), got.size(), stream));
    ASSERT_OK(device->Synchronize(stream));
    EXPECT_TRUE(got == want) << "the kernels' bytes differ from the CPU model's";
  }
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
