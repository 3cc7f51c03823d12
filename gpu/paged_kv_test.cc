// Paged KV scatter and gather on the host device (the CPU reference), byte for byte against
// each engine's tensor indexing spelled out element by element: vLLM with K and V apart,
// vLLM combined, SGLang's token slots, MLA latent — and the refusals. tests/gpu runs the
// CUDA kernel against the same reference on a GPU.
#include "strata/gpu/paged_kv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"

namespace strata::gpu {
namespace {

using absl::StatusCode;

// The test's model shape: 3 layers, 5 pages of 4 tokens, 2 heads x 8 dims of 2-byte elements.
constexpr uint32_t kLayers = 3;
constexpr uint32_t kPages = 5;
constexpr uint32_t kPageTokens = 4;
constexpr uint32_t kHeads = 2;
constexpr uint32_t kDim = 8;
constexpr uint32_t kElem = 2;
constexpr uint64_t kTokens = kPages * kPageTokens;

std::vector<uint8_t> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

// Byte e of element (head h, dim d) of token t in layer l, K (half 0) or V (half 1), of a
// blob of kPages pages laid out as radix::BlobLayout (heads x dim per row; `heads`, `dim`
// given so MLA can pass 1 x its latent width).
uint8_t BlobByte(const std::vector<uint8_t>& blob, bool key_value, uint32_t heads, uint32_t dim,
                 uint32_t l, uint64_t t, int half, uint32_t h, uint32_t d, uint32_t e) {
  const uint64_t row = uint64_t{heads} * dim * kElem;
  const uint64_t block = kPageTokens * row;
  const uint64_t layer_page = block * (key_value ? 2 : 1);
  return blob[(uint64_t{l} * kPages + t / kPageTokens) * layer_page + half * block +
              ((t % kPageTokens) * heads + h) * dim * kElem + d * kElem + e];
}

class PagedKvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(device_, CreateHostDevice({.memory_bytes = size_t{64} << 20}));
    ASSERT_OK_AND_ASSIGN(stream_, device_->CreateStream());
  }
  void TearDown() override { stream_.Reset(); }

  // A "device" tensor of `bytes`, every byte 0xEE.
  void* Tensor(size_t bytes) {
    absl::StatusOr<DeviceBuffer> buffer = device_->Allocate(bytes);
    EXPECT_OK(buffer.status());
    std::memset(buffer->data(), 0xEE, bytes);
    buffers_.push_back(std::make_unique<DeviceBuffer>(*std::move(buffer)));
    return buffers_.back()->data();
  }

  std::unique_ptr<Device> device_;
  Stream stream_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
  const BlobShape shape_{kLayers, kPages, kPageTokens, kHeads* kDim* kElem, true};
};

TEST_F(PagedKvTest, VllmSeparateKAndVFollowTheBlockTable) {
  // vLLM blocks of 8 tokens (not the blob's 4-token pages), 6 blocks, the sequence's in a
  // shuffled order.
  constexpr uint32_t kBlockSize = 8;
  constexpr uint64_t kBlocks = 6;
  const std::vector<int32_t> block_table = {4, 1, 5};
  const uint64_t tensor_bytes = kBlocks * kBlockSize * kHeads * kDim * kElem;
  std::vector<void*> k, v;
  for (uint32_t l = 0; l < kLayers; ++l) {
    k.push_back(Tensor(tensor_bytes));
    v.push_back(Tensor(tensor_bytes));
  }
  const PagedCache cache = VllmSeparateCache(k, v, kBlocks, kBlockSize, shape_.row_bytes);
  std::vector<uint64_t> rows;
  ASSERT_OK(RowsFromBlockTable(block_table, kBlockSize, 0, kTokens, &rows));
  const std::vector<uint8_t> blob = Random(shape_.TotalBytes(), 1);
  ASSERT_OK(device_->ScatterPagedAsync(blob.data(), shape_, cache, rows, stream_));
  ASSERT_OK(device_->Synchronize(stream_));

  // K[l][block][slot][h][d] as vLLM indexes its [num_blocks, block_size, heads, head_size].
  std::vector<bool> written(kBlocks * kBlockSize, false);
  for (uint64_t t = 0; t < kTokens; ++t) {
    const uint64_t block = block_table[t / kBlockSize];
    const uint64_t slot = t % kBlockSize;
    written[block * kBlockSize + slot] = true;
    for (uint32_t l = 0; l < kLayers; ++l) {
      for (uint32_t h = 0; h < kHeads; ++h) {
        for (uint32_t d = 0; d < kDim; ++d) {
          for (uint32_t e = 0; e < kElem; ++e) {
            const uint64_t at = (((block * kBlockSize + slot) * kHeads + h) * kDim + d) * kElem + e;
            ASSERT_EQ(static_cast<uint8_t*>(k[l])[at],
                      BlobByte(blob, true, kHeads, kDim, l, t, 0, h, d, e));
            ASSERT_EQ(static_cast<uint8_t*>(v[l])[at],
                      BlobByte(blob, true, kHeads, kDim, l, t, 1, h, d, e));
          }
        }
      }
    }
  }
  // Rows of no token are untouched.
  const uint64_t row = shape_.row_bytes;
  for (uint64_t r = 0; r < written.size(); ++r) {
    if (written[r]) continue;
    for (uint32_t l = 0; l < kLayers; ++l) {
      EXPECT_EQ(static_cast<uint8_t*>(k[l])[r * row], 0xEE);
      EXPECT_EQ(static_cast<uint8_t*>(v[l])[r * row + row - 1], 0xEE);
    }
  }
  // Gathered back, the blob is what was scattered.
  std::vector<uint8_t> back(blob.size(), 0);
  ASSERT_OK(device_->GatherPagedAsync(back.data(), shape_, cache, rows, stream_));
  EXPECT_EQ(back, blob);
}

TEST_F(PagedKvTest, VllmCombinedPutsVAfterAllOfK) {
  constexpr uint32_t kBlockSize = 4;
  constexpr uint64_t kBlocks = 7;
  const std::vector<int32_t> block_table = {6, 0, 3, 2, 5};
  const uint64_t half_bytes = kBlocks * kBlockSize * kHeads * kDim * kElem;
  std::vector<void*> kv;
  for (uint32_t l = 0; l < kLayers; ++l) kv.push_back(Tensor(2 * half_bytes));
  const PagedCache cache = VllmCombinedCache(kv, kBlocks, kBlockSize, shape_.row_bytes);
  std::vector<uint64_t> rows;
  ASSERT_OK(RowsFromBlockTable(block_table, kBlockSize, 0, kTokens, &rows));
  const std::vector<uint8_t> blob = Random(shape_.TotalBytes(), 2);
  ASSERT_OK(device_->ScatterPagedAsync(blob.data(), shape_, cache, rows, stream_));
  // kv[l][i][block][slot][h][d] of [2, num_blocks, block_size, heads, head_size].
  for (uint64_t t = 0; t < kTokens; ++t) {
    const uint64_t block = block_table[t / kBlockSize];
    for (uint32_t l = 0; l < kLayers; ++l) {
      for (int i = 0; i < 2; ++i) {
        for (uint32_t h = 0; h < kHeads; ++h) {
          for (uint32_t d = 0; d < kDim; ++d) {
            const uint64_t at =
                ((((i * kBlocks + block) * kBlockSize + t % kBlockSize) * kHeads + h) * kDim + d) *
                kElem;
            ASSERT_EQ(static_cast<uint8_t*>(kv[l])[at],
                      BlobByte(blob, true, kHeads, kDim, l, t, i, h, d, 0));
            ASSERT_EQ(static_cast<uint8_t*>(kv[l])[at + 1],
                      BlobByte(blob, true, kHeads, kDim, l, t, i, h, d, 1));
          }
        }
      }
    }
  }
  std::vector<uint8_t> back(blob.size(), 0);
  ASSERT_OK(device_->GatherPagedAsync(back.data(), shape_, cache, rows, stream_));
  EXPECT_EQ(back, blob);
}

TEST_F(PagedKvTest, SglangSlotsTakeEachTokenToItsSlot) {
  constexpr uint64_t kSlots = 64;
  std::vector<int64_t> slots(kSlots);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), std::mt19937_64(3));
  slots.resize(kTokens);
  std::vector<void*> k, v;
  for (uint32_t l = 0; l < kLayers; ++l) {
    k.push_back(Tensor(kSlots * shape_.row_bytes));
    v.push_back(Tensor(kSlots * shape_.row_bytes));
  }
  const PagedCache cache = SglangSlotCache(k, v, kSlots, shape_.row_bytes);
  std::vector<uint64_t> rows;
  ASSERT_OK(RowsFromSlots(slots, &rows));
  const std::vector<uint8_t> blob = Random(shape_.TotalBytes(), 4);
  ASSERT_OK(device_->ScatterPagedAsync(blob.data(), shape_, cache, rows, stream_));
  // k[l][slot][h][d] of [num_slots, heads, head_dim].
  for (uint64_t t = 0; t < kTokens; ++t) {
    for (uint32_t l = 0; l < kLayers; ++l) {
      for (uint32_t h = 0; h < kHeads; ++h) {
        for (uint32_t d = 0; d < kDim; ++d) {
          const uint64_t at = ((slots[t] * kHeads + h) * kDim + d) * kElem;
          ASSERT_EQ(static_cast<uint8_t*>(k[l])[at],
                    BlobByte(blob, true, kHeads, kDim, l, t, 0, h, d, 0));
          ASSERT_EQ(static_cast<uint8_t*>(v[l])[at + 1],
                    BlobByte(blob, true, kHeads, kDim, l, t, 1, h, d, 1));
        }
      }
    }
  }
  std::vector<uint8_t> back(blob.size(), 0);
  ASSERT_OK(device_->GatherPagedAsync(back.data(), shape_, cache, rows, stream_));
  EXPECT_EQ(back, blob);
}

TEST_F(PagedKvTest, MlaMovesOneLatentTensorPerLayer) {
  // DeepSeek's latent is 512 + 64 wide; 72 here (144 bytes: not a multiple of 16 words).
  constexpr uint32_t kLatent = 72;
  const BlobShape mla{kLayers, kPages, kPageTokens, kLatent * kElem, false};
  constexpr uint32_t kBlockSize = 16;
  const std::vector<int32_t> block_table = {2, 0};
  std::vector<void*> latent;
  for (uint32_t l = 0; l < kLayers; ++l) latent.push_back(Tensor(3 * kBlockSize * mla.row_bytes));
  const PagedCache cache = MlaCache(latent, 3 * kBlockSize, mla.row_bytes);
  std::vector<uint64_t> rows;
  ASSERT_OK(RowsFromBlockTable(block_table, kBlockSize, 0, kTokens, &rows));
  const std::vector<uint8_t> blob = Random(mla.TotalBytes(), 5);
  ASSERT_OK(device_->ScatterPagedAsync(blob.data(), mla, cache, rows, stream_));
  for (uint64_t t = 0; t < kTokens; ++t) {
    const uint64_t r = block_table[t / kBlockSize] * kBlockSize + t % kBlockSize;
    for (uint32_t l = 0; l < kLayers; ++l) {
      for (uint32_t d = 0; d < kLatent; ++d) {
        ASSERT_EQ(static_cast<uint8_t*>(latent[l])[(r * kLatent + d) * kElem + 1],
                  BlobByte(blob, false, 1, kLatent, l, t, 0, 0, d, 1));
      }
    }
  }
  std::vector<uint8_t> back(blob.size(), 0);
  ASSERT_OK(device_->GatherPagedAsync(back.data(), mla, cache, rows, stream_));
  EXPECT_EQ(back, blob);
}

TEST_F(PagedKvTest, TransfersThatCannotBeRightAreRefused) {
  constexpr uint64_t kSlots = 32;
  std::vector<void*> k, v;
  for (uint32_t l = 0; l < kLayers; ++l) {
    k.push_back(Tensor(kSlots * shape_.row_bytes));
    v.push_back(Tensor(kSlots * shape_.row_bytes));
  }
  const PagedCache cache = SglangSlotCache(k, v, kSlots, shape_.row_bytes);
  std::vector<uint64_t> rows(kTokens);
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<uint8_t> blob = Random(shape_.TotalBytes(), 6);
  ASSERT_OK(device_->ScatterPagedAsync(blob.data(), shape_, cache, rows, stream_));

  auto scatter = [&](const PagedCache& c, const std::vector<uint64_t>& r, const BlobShape& s) {
    return device_->ScatterPagedAsync(blob.data(), s, c, r, stream_);
  };
  // Rows: too few, past the cache, two tokens to one row (a gather may read one row twice).
  EXPECT_CODE(scatter(cache, std::vector<uint64_t>(rows.begin(), rows.end() - 1), shape_),
              StatusCode::kInvalidArgument);
  std::vector<uint64_t> past = rows;
  past[3] = kSlots;
  EXPECT_CODE(scatter(cache, past, shape_), StatusCode::kInvalidArgument);
  std::vector<uint64_t> twice = rows;
  twice[5] = twice[6];
  EXPECT_CODE(scatter(cache, twice, shape_), StatusCode::kInvalidArgument);
  std::vector<uint8_t> back(blob.size());
  EXPECT_OK(device_->GatherPagedAsync(back.data(), shape_, cache, twice, stream_));
  // Tensors: a layer short, V for MLA, a null one, a stride shorter than a row.
  PagedCache short_k = cache;
  short_k.k.pop_back();
  EXPECT_CODE(scatter(short_k, rows, shape_), StatusCode::kInvalidArgument);
  const BlobShape mla{kLayers, kPages, kPageTokens, shape_.row_bytes, false};
  EXPECT_CODE(scatter(cache, rows, mla), StatusCode::kInvalidArgument);
  PagedCache null_v = cache;
  null_v.v[1] = nullptr;
  EXPECT_CODE(scatter(null_v, rows, shape_), StatusCode::kInvalidArgument);
  PagedCache narrow = cache;
  narrow.row_stride = shape_.row_bytes - 2;
  EXPECT_CODE(scatter(narrow, rows, shape_), StatusCode::kInvalidArgument);
  // Host memory posing as a device tensor; a cache claiming more rows than its buffer has.
  std::vector<uint8_t> host(kSlots * shape_.row_bytes);
  PagedCache on_host = cache;
  on_host.k[0] = host.data();
  EXPECT_CODE(scatter(on_host, rows, shape_), StatusCode::kInvalidArgument);
  PagedCache too_many = cache;
  too_many.rows = kSlots + 1;
  EXPECT_CODE(scatter(too_many, rows, shape_), StatusCode::kOutOfRange);
  // A zero shape, a null blob; block tables too short or negative.
  EXPECT_CODE(scatter(cache, rows, BlobShape{}), StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->ScatterPagedAsync(nullptr, shape_, cache, rows, stream_),
              StatusCode::kInvalidArgument);
  std::vector<uint64_t> from_table;
  const std::vector<int32_t> short_table = {0, 1};
  EXPECT_CODE(RowsFromBlockTable(short_table, 4, 0, kTokens, &from_table),
              StatusCode::kInvalidArgument);
  const std::vector<int32_t> negative = {0, -1, 2, 3, 4};
  EXPECT_CODE(RowsFromBlockTable(negative, 4, 0, kTokens, &from_table),
              StatusCode::kInvalidArgument);
  // Nothing refused was written: the first scatter's bytes are all still there.
  ASSERT_OK(device_->GatherPagedAsync(back.data(), shape_, cache, rows, stream_));
  EXPECT_EQ(back, blob);
}

}  // namespace
}  // namespace strata::gpu
