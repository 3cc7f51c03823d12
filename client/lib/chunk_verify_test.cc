#include "client/lib/chunk_verify.h"

#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/radix/chunk_checksum.h"
#include "strata/radix/token_span.h"
#include "strata/worker/reference_model.h"

namespace strata::client_internal {
namespace {

class ChunkVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_ = radix::KvLayout{.num_layers = 4,
                              .num_kv_heads = 2,
                              .head_dim = 8,
                              .dtype = radix::DType::kBFloat16,
                              .page_tokens = 4,
                              .format = radix::KvFormat::kKeyValue,
                              .tp_rank = 0,
                              .tp_world = 1};
    ASSERT_OK_AND_ASSIGN(model_, worker::ReferenceModel::Create(layout_, 7));
    std::vector<radix::TokenId> tokens(kPages * layout_.page_tokens);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<radix::TokenId>(i * 31 + 5);
    ASSERT_OK_AND_ASSIGN(blob_, model_->ComputeBlobBytes(tokens, 0, kPages));
    ASSERT_OK_AND_ASSIGN(sums_, radix::ChunkChecksums(blob_, layout_, kPages));
  }

  // Layer l's run of pages [first, first + n) in the blob, and its checksums.
  absl::Status Verify(uint32_t layer, uint32_t first, uint32_t n) {
    const uint64_t chunk = layout_.BytesPerLayerPage();
    return VerifyLayerRun(
        absl::MakeConstSpan(blob_).subspan((uint64_t{layer} * kPages + first) * chunk, n * chunk),
        chunk, absl::MakeConstSpan(sums_).subspan(layer * kPages + first, n), key_, layer, first);
  }

  static constexpr uint32_t kPages = 5;
  radix::KvLayout layout_;
  std::unique_ptr<worker::ReferenceModel> model_;
  std::vector<std::byte> blob_;
  std::vector<uint64_t> sums_;
  const radix::BlobKey key_{radix::PrefixHash{0xabc, 0xdef}};
};

TEST_F(ChunkVerifyTest, ReferenceModelBytesVerify) {
  for (uint32_t l = 0; l < layout_.num_layers; ++l) {
    EXPECT_OK(Verify(l, 0, kPages));
    EXPECT_OK(Verify(l, 1, 3));  // a prefix read of a middle run
  }
}

TEST_F(ChunkVerifyTest, OneFlippedBitIsDataLossNamingLayerAndPage) {
  const uint64_t chunk = layout_.BytesPerLayerPage();
  // Layer 2, page 3, byte 5.
  blob_[(2 * kPages + 3) * chunk + 5] ^= std::byte{0x10};
  const absl::Status status = Verify(2, 1, 4);
  EXPECT_CODE(status, absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("layer 2 page 3"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find(key_.ToHex()), absl::string_view::npos) << status;
  // Other layers and pages still verify.
  EXPECT_OK(Verify(2, 0, 3));
  EXPECT_OK(Verify(1, 0, kPages));
}

TEST_F(ChunkVerifyTest, ChecksumsOfAnotherChunkDoNotVerify) {
  // Bytes of page 1 against the checksum of page 2 (a misplaced range).
  const uint64_t chunk = layout_.BytesPerLayerPage();
  const absl::Status status =
      VerifyLayerRun(absl::MakeConstSpan(blob_).subspan(1 * chunk, chunk), chunk,
                     absl::MakeConstSpan(sums_).subspan(2, 1), key_, 0, 1);
  EXPECT_CODE(status, absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace strata::client_internal
