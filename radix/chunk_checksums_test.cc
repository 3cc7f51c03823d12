#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xxhash.h>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/radix/chunk_checksum.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/prefix_hash.h"

namespace strata::radix {
namespace {

using ::testing::HasSubstr;

KvLayout SmallLayout() {
  return KvLayout{.num_layers = 3,
                  .num_kv_heads = 2,
                  .head_dim = 4,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 2,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

std::vector<std::byte> PatternBlob(size_t size) {
  std::vector<std::byte> blob(size);
  for (size_t i = 0; i < size; ++i) blob[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  return blob;
}

TEST(ChunkChecksumsTest, LayerMajorXxh3OfEveryChunkAtItsBlobLayoutRange) {
  const KvLayout layout = SmallLayout();
  constexpr uint32_t kPages = 4;
  const std::vector<std::byte> blob = PatternBlob(kPages * layout.BytesPerPage());
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> sums, ChunkChecksums(blob, layout, kPages));
  ASSERT_EQ(sums.size(), layout.num_layers * kPages);
  // Independently: the range BlobLayout gives each (layer, page), hashed
  // with the frozen seed.
  ASSERT_OK_AND_ASSIGN(BlobLayout blob_layout, BlobLayout::Create(layout, kPages));
  for (uint32_t l = 0; l < layout.num_layers; ++l) {
    for (uint32_t p = 0; p < kPages; ++p) {
      ASSERT_OK_AND_ASSIGN(ByteRange range, blob_layout.LayerPageRange(l, p, 1));
      EXPECT_EQ(sums[l * kPages + p],
                XXH3_64bits_withSeed(blob.data() + range.offset, range.length, kPrefixHashSeed))
          << "layer " << l << " page " << p;
    }
  }
  // Distinct contents give distinct checksums here.
  for (size_t i = 1; i < sums.size(); ++i) EXPECT_NE(sums[i], sums[i - 1]);
  EXPECT_OK(VerifyChunkChecksums(blob, layout, kPages, sums));
}

TEST(ChunkChecksumsTest, VerifyNamesTheFirstCorruptChunk) {
  const KvLayout layout = SmallLayout();
  constexpr uint32_t kPages = 4;
  std::vector<std::byte> blob = PatternBlob(kPages * layout.BytesPerPage());
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> sums, ChunkChecksums(blob, layout, kPages));
  // Flip one bit in layer 2, page 1.
  const uint64_t chunk = layout.BytesPerLayerPage();
  blob[(2 * kPages + 1) * chunk + 5] ^= std::byte{0x10};
  const absl::Status s = VerifyChunkChecksums(blob, layout, kPages, sums);
  EXPECT_CODE(s, absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("layer 2 page 1"));
}

TEST(ChunkChecksumsTest, RejectsBadArguments) {
  const KvLayout layout = SmallLayout();
  const std::vector<std::byte> blob = PatternBlob(2 * layout.BytesPerPage());
  EXPECT_CODE(ChunkChecksums(blob, layout, 0), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(ChunkChecksums(blob, layout, 3), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(ChunkChecksums(absl::MakeConstSpan(blob).first(blob.size() - 1), layout, 2),
              absl::StatusCode::kInvalidArgument);
  KvLayout invalid = layout;
  invalid.page_tokens = 0;
  EXPECT_CODE(ChunkChecksums(blob, invalid, 2), absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> sums, ChunkChecksums(blob, layout, 2));
  sums.pop_back();
  EXPECT_CODE(VerifyChunkChecksums(blob, layout, 2, sums), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::radix
