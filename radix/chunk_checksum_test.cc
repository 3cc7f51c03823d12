#include "strata/radix/chunk_checksum.h"

#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"
#include "xxhash.h"

namespace strata::radix {
namespace {

radix::KvLayout Layout() {
  return radix::KvLayout{.num_layers = 3,
                         .num_kv_heads = 1,
                         .head_dim = 4,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = 2,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

TEST(ChunkChecksumTest, IsXxh3WithThePrefixSeed) {
  std::vector<std::byte> bytes(100);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 7);
  EXPECT_EQ(ChunkChecksum(bytes),
            XXH3_64bits_withSeed(bytes.data(), bytes.size(), radix::kPrefixHashSeed));
  EXPECT_NE(ChunkChecksum(bytes), XXH3_64bits(bytes.data(), bytes.size()));
}

TEST(ChunkChecksumTest, ComputesLayerMajorChunks) {
  const radix::BlobLayout layout = radix::BlobLayout::Create(Layout(), 5).value();
  const uint64_t chunk = Layout().BytesPerLayerPage();  // 2 * 2*1*4*2 = 32
  ASSERT_EQ(chunk, 32u);
  std::vector<std::byte> blob(layout.TotalBytes());
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::byte>(i * 31 + 1);
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> sums, ComputeChunkChecksums(layout, blob));
  ASSERT_EQ(sums.size(), 15u);
  for (uint32_t l = 0; l < 3; ++l) {
    for (uint32_t p = 0; p < 5; ++p) {
      const radix::ByteRange r = layout.LayerPageRange(l, p, 1).value();
      EXPECT_EQ(sums[ChunkIndex(l, p, 5)],
                ChunkChecksum(absl::MakeConstSpan(blob).subspan(r.offset, r.length)));
    }
  }
  blob.pop_back();
  EXPECT_CODE(ComputeChunkChecksums(layout, blob), absl::StatusCode::kInvalidArgument);
}

TEST(ChunkChecksumTest, BlobChecksumHashesLittleEndianArray) {
  const std::vector<uint64_t> sums = {0x0102030405060708, 42};
  const unsigned char le[16] = {8, 7, 6, 5, 4, 3, 2, 1, 42, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(BlobChecksum(sums), XXH3_64bits_withSeed(le, sizeof(le), radix::kPrefixHashSeed));
  EXPECT_NE(BlobChecksum(sums), BlobChecksum(std::vector<uint64_t>{42, 0x0102030405060708}));
}

}  // namespace
}  // namespace strata::radix
