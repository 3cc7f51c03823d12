#include "strata/worker/reference_model.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "reference_model_testing.h"
#include "strata/base/status_test_macros.h"
#include "strata/radix/chunk_checksum.h"
#include "strata/radix/kv_layout.h"
#include "strata/worker/dtype_encoding.h"

namespace strata::worker {
namespace {

using model_testing::Bytes;
using model_testing::Element;
using model_testing::LayerPages;
using model_testing::Layout;
using model_testing::MustCompute;
using model_testing::MustCreate;
using model_testing::RandomTokens;
using model_testing::Small;
using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using radix::TokenId;

TEST(ReferenceModelTest, SameSeedSameBytesOtherSeedOtherBytes) {
  const KvLayout layout = Small(DType::kBFloat16);
  const std::vector<TokenId> tokens = RandomTokens(40, 1);
  const Bytes a = MustCompute(*MustCreate(layout, 5), tokens, 2, 8);
  const Bytes b = MustCompute(*MustCreate(layout, 5), tokens, 2, 8);
  EXPECT_EQ(a, b);
  const Bytes other = MustCompute(*MustCreate(layout, 6), tokens, 2, 8);
  ASSERT_EQ(other.size(), a.size());
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == other[i];
  EXPECT_LT(same, a.size() / 4) << "another seed should change nearly every element";
}

TEST(ReferenceModelTest, EveryPositionGivesDifferentKeysForTheSameToken) {
  const KvLayout layout = Small();
  const auto model = MustCreate(layout, 3);
  const std::vector<TokenId> tokens(32, 42);  // one token repeated
  const Bytes blob = MustCompute(*model, tokens, 0, 8);
  std::set<std::vector<float>> rows;
  const uint32_t w = layout.num_kv_heads * layout.head_dim;
  for (uint32_t p = 0; p < 8; ++p) {
    for (uint32_t t = 0; t < layout.page_tokens; ++t) {
      std::vector<float> row;
      for (uint32_t j = 0; j < w; ++j) row.push_back(Element(blob, layout, 8, 0, p, t, j, false));
      rows.insert(row);
    }
  }
  EXPECT_EQ(rows.size(), 32u) << "layer-0 keys of one token at 32 positions";
}

// Causality, precisely: changing token j leaves every page before j's page
// unchanged in every layer; j's page changes in layer 0 (its own embedding);
// a later page keeps its layer 0 (which sees only its own tokens) and changes
// in every later layer (which see the running mix).
TEST(ReferenceModelTest, ChangingATokenChangesOnlyItsPageAndLaterLayersOfLaterPages) {
  const KvLayout layout = Small(DType::kFloat16);
  const auto model = MustCreate(layout, 9);
  constexpr uint32_t kPages = 6;
  std::vector<TokenId> tokens = RandomTokens(kPages * layout.page_tokens, 2);
  const Bytes before = MustCompute(*model, tokens, 0, kPages);
  tokens[4 * layout.page_tokens + 1] += 1;  // a token of page 4
  const Bytes after = MustCompute(*model, tokens, 0, kPages);
  for (uint32_t l = 0; l < layout.num_layers; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(LayerPages(before, layout, kPages, l, 0, 4),
              LayerPages(after, layout, kPages, l, 0, 4));
    EXPECT_NE(LayerPages(before, layout, kPages, l, 4, 1),
              LayerPages(after, layout, kPages, l, 4, 1));
    if (l == 0) {
      EXPECT_EQ(LayerPages(before, layout, kPages, l, 5, 1),
                LayerPages(after, layout, kPages, l, 5, 1));
    } else {
      EXPECT_NE(LayerPages(before, layout, kPages, l, 5, 1),
                LayerPages(after, layout, kPages, l, 5, 1));
    }
  }
}

TEST(ReferenceModelTest, AppendingTokensNeverChangesEarlierPages) {
  const KvLayout layout = Small(DType::kBFloat16);
  const auto model = MustCreate(layout, 4);
  const std::vector<TokenId> longer = RandomTokens(30 * layout.page_tokens, 3);
  const std::vector<TokenId> shorter(longer.begin(), longer.begin() + 10 * layout.page_tokens);
  const Bytes short_blob = MustCompute(*model, shorter, 0, 10);
  // The longer sequence's first 10 pages, computed in a blob of 30 pages.
  const Bytes long_blob = MustCompute(*model, longer, 0, 30);
  for (uint32_t l = 0; l < layout.num_layers; ++l) {
    EXPECT_EQ(LayerPages(short_blob, layout, 10, l, 0, 10),
              LayerPages(long_blob, layout, 30, l, 0, 10));
  }
  // Pages past the blob are ignored: passing the whole longer sequence for
  // pages [0, 10) gives the short blob.
  EXPECT_EQ(MustCompute(*model, longer, 0, 10), short_blob);
}

// A blob of pages [a, a+k) holds, layer after layer, exactly the bytes that
// radix::BlobLayout locates for those pages in a blob of all the pages.
TEST(ReferenceModelTest, SubBlobIsTheLayerMajorRangesOfTheWholeBlob) {
  for (KvFormat format : {KvFormat::kKeyValue, KvFormat::kMlaLatent}) {
    const KvLayout layout = format == KvFormat::kKeyValue
                                ? Small(DType::kFloat8E4M3)
                                : Layout(DType::kFloat8E4M3, 3, 1, 20, 4, format);
    SCOPED_TRACE(layout.ToString());
    const auto model = MustCreate(layout, 8);
    constexpr uint32_t kPages = 12;
    const std::vector<TokenId> tokens = RandomTokens(kPages * layout.page_tokens, 4);
    const Bytes whole = MustCompute(*model, tokens, 0, kPages);
    for (auto [a, k] : {std::pair<uint32_t, uint32_t>{0, 1}, {3, 4}, {11, 1}, {0, 12}}) {
      const Bytes part = MustCompute(*model, tokens, a, k);
      Bytes expected;
      for (uint32_t l = 0; l < layout.num_layers; ++l) {
        const Bytes range = LayerPages(whole, layout, kPages, l, a, k);
        expected.insert(expected.end(), range.begin(), range.end());
      }
      EXPECT_EQ(part, expected) << "pages [" << a << ", " << a + k << ")";
    }
  }
}

// The math does not depend on the dtype; each dtype's bytes are that dtype's
// encoding (dtype_encoding.h) of the float32 value.
TEST(ReferenceModelTest, EveryDTypeEncodesTheSameFloats) {
  const std::vector<TokenId> tokens = RandomTokens(12 * 4, 5);
  const KvLayout f32_layout = Small(DType::kFloat32);
  const Bytes f32 = MustCompute(*MustCreate(f32_layout, 10), tokens, 2, 10);
  std::vector<float> values(f32.size() / 4);
  ASSERT_OK(DecodeElements(DType::kFloat32, f32, absl::MakeSpan(values)));
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3, DType::kFloat8E5M2,
                      DType::kInt8, DType::kUInt8, DType::kFloat32}) {
    const KvLayout layout = Small(dtype);
    SCOPED_TRACE(layout.ToString());
    const Bytes blob = MustCompute(*MustCreate(layout, 10), tokens, 2, 10);
    ASSERT_EQ(blob.size(), 10 * layout.BytesPerPage());
    Bytes expected(blob.size());
    ASSERT_OK(EncodeElements(dtype, values, absl::MakeSpan(expected)));
    EXPECT_EQ(blob, expected);
  }
}

// The values are in a range every dtype represents well: bounded, spread out,
// many distinct FP8 codes, int8 rarely clamped.
TEST(ReferenceModelTest, ValuesAreSpreadAndInRange) {
  const KvLayout layout = Layout(DType::kFloat32, 8, 4, 32, 16);
  const auto model = MustCreate(layout, 77);
  const std::vector<TokenId> tokens = RandomTokens(8 * 16, 6);
  const Bytes blob = MustCompute(*model, tokens, 0, 8);
  std::vector<float> values(blob.size() / 4);
  ASSERT_OK(DecodeElements(DType::kFloat32, blob, absl::MakeSpan(values)));
  double sum = 0, sum_sq = 0;
  size_t clamped = 0;
  std::set<uint8_t> fp8_codes;
  for (float v : values) {
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_LT(std::fabs(v), 16.0f);
    sum += v;
    sum_sq += double{v} * v;
    const int8_t q = FloatToInt8(v);
    clamped += (q == 127 || q == -128);
    fp8_codes.insert(FloatToFloat8E4M3(v));
  }
  const double mean = sum / values.size();
  const double stddev = std::sqrt(sum_sq / values.size() - mean * mean);
  EXPECT_GT(stddev, 0.2);
  EXPECT_LT(stddev, 1.5);
  EXPECT_LT(std::fabs(mean), 0.2);
  EXPECT_LT(clamped, values.size() / 100);
  EXPECT_GT(fp8_codes.size(), 100u);
}

// Rank r of tp_world N holds heads [r*H, (r+1)*H) of one model: together the
// ranks' KV is the tp_world-1 model's with N*H heads.
TEST(ReferenceModelTest, TensorParallelRanksSliceOneModel) {
  const std::vector<TokenId> tokens = RandomTokens(5 * 4, 8);
  const KvLayout full = Layout(DType::kBFloat16, 3, 4, 8, 4);
  const Bytes whole = MustCompute(*MustCreate(full, 21), tokens, 1, 4);
  for (uint32_t rank = 0; rank < 2; ++rank) {
    const KvLayout shard = Layout(DType::kBFloat16, 3, 2, 8, 4, KvFormat::kKeyValue, rank, 2);
    const Bytes part = MustCompute(*MustCreate(shard, 21), tokens, 1, 4);
    for (uint32_t l = 0; l < 3; ++l) {
      for (uint32_t p = 0; p < 4; ++p) {
        for (uint32_t t = 0; t < 4; ++t) {
          for (uint32_t j = 0; j < 16; ++j) {
            for (bool value : {false, true}) {
              ASSERT_EQ(Element(part, shard, 4, l, p, t, j, value),
                        Element(whole, full, 4, l, p, t, rank * 16 + j, value))
                  << "rank " << rank << " l " << l << " p " << p << " t " << t << " j " << j;
            }
          }
        }
      }
    }
  }
}

TEST(ReferenceModelTest, MlaHasOneLatentBlockPerLayerPageReplicatedAcrossRanks) {
  const std::vector<TokenId> tokens = RandomTokens(6 * 8, 9);
  const KvLayout rank0 = Layout(DType::kBFloat16, 4, 1, 72, 8, KvFormat::kMlaLatent, 0, 2);
  const KvLayout rank1 = Layout(DType::kBFloat16, 4, 1, 72, 8, KvFormat::kMlaLatent, 1, 2);
  const Bytes a = MustCompute(*MustCreate(rank0, 30), tokens, 0, 6);
  EXPECT_EQ(a.size(), 6u * 4 * 8 * 72 * 2);
  EXPECT_EQ(a, MustCompute(*MustCreate(rank1, 30), tokens, 0, 6));
  // Not the K block of a key/value model with the same shape.
  const KvLayout kv = Layout(DType::kBFloat16, 4, 1, 72, 8);
  const Bytes kv_blob = MustCompute(*MustCreate(kv, 30), tokens, 0, 6);
  EXPECT_NE(Bytes(a.begin(), a.begin() + 8 * 72 * 2),
            Bytes(kv_blob.begin(), kv_blob.begin() + 8 * 72 * 2));
}

TEST(ReferenceModelTest, IncrementalPagesEqualFromScratch) {
  for (KvFormat format : {KvFormat::kKeyValue, KvFormat::kMlaLatent}) {
    const KvLayout layout = format == KvFormat::kKeyValue
                                ? Small(DType::kBFloat16)
                                : Layout(DType::kBFloat16, 3, 1, 24, 4, format);
    SCOPED_TRACE(layout.ToString());
    const auto model = MustCreate(layout, 15);
    const std::vector<TokenId> tokens = RandomTokens(40 * layout.page_tokens, 10);
    ModelState state = model->InitialState();
    uint32_t page = 0;
    // Chunks of 1, 2, ... pages; 17 pages cross the 64-token block boundary.
    for (uint32_t chunk : {1u, 2u, 3u, 17u, 1u, 16u}) {
      const auto span = absl::MakeConstSpan(tokens).subspan(page * layout.page_tokens,
                                                            chunk * layout.page_tokens);
      Bytes blob(chunk * layout.BytesPerPage());
      ASSERT_OK(model->ComputeNextPages(&state, span, absl::MakeSpan(blob)));
      EXPECT_EQ(state.pages(), page + chunk);
      EXPECT_EQ(blob, MustCompute(*model, tokens, page, chunk)) << "pages at " << page;
      page += chunk;
    }
    // Advance (no KV) to page 5, then compute: the same as from scratch.
    ModelState skipped = model->InitialState();
    ASSERT_OK(model->Advance(&skipped, absl::MakeConstSpan(tokens).first(5 * layout.page_tokens)));
    EXPECT_EQ(skipped.tokens(), 5u * layout.page_tokens);
    Bytes blob(7 * layout.BytesPerPage());
    ASSERT_OK(model->ComputeNextPages(
        &skipped,
        absl::MakeConstSpan(tokens).subspan(5 * layout.page_tokens, 7 * layout.page_tokens),
        absl::MakeSpan(blob)));
    EXPECT_EQ(blob, MustCompute(*model, tokens, 5, 7));
  }
}

// A copied state continues a branch: two continuations of one prefix, each
// equal to its sequence from scratch.
TEST(ReferenceModelTest, CopiedStateBranchesASequence) {
  const KvLayout layout = Small(DType::kFloat16);
  const auto model = MustCreate(layout, 16);
  const std::vector<TokenId> prefix = RandomTokens(3 * layout.page_tokens, 11);
  ModelState state = model->InitialState();
  ASSERT_OK(model->Advance(&state, prefix));
  for (uint32_t branch = 0; branch < 2; ++branch) {
    const std::vector<TokenId> tail = RandomTokens(2 * layout.page_tokens, 100 + branch);
    std::vector<TokenId> whole = prefix;
    whole.insert(whole.end(), tail.begin(), tail.end());
    ModelState copy = state;
    Bytes blob(2 * layout.BytesPerPage());
    ASSERT_OK(model->ComputeNextPages(&copy, tail, absl::MakeSpan(blob)));
    EXPECT_EQ(blob, MustCompute(*model, whole, 3, 2)) << "branch " << branch;
  }
  EXPECT_EQ(state.pages(), 3u);
}

TEST(ReferenceModelTest, OutputNeedsNoAlignment) {
  const KvLayout layout = Small(DType::kFloat32);
  const auto model = MustCreate(layout, 17);
  const std::vector<TokenId> tokens = RandomTokens(3 * layout.page_tokens, 12);
  const Bytes aligned = MustCompute(*model, tokens, 0, 3);
  Bytes buffer(aligned.size() + 3);
  ASSERT_OK(model->ComputeBlob(tokens, 0, 3, absl::MakeSpan(buffer).subspan(1, aligned.size())));
  EXPECT_EQ(Bytes(buffer.begin() + 1, buffer.begin() + 1 + aligned.size()), aligned);
}

TEST(ReferenceModelTest, ConcurrentCallsOnOneModelAgree) {
  const KvLayout layout = Small(DType::kBFloat16);
  const auto model = MustCreate(layout, 18);
  const std::vector<TokenId> tokens = RandomTokens(20 * layout.page_tokens, 13);
  const Bytes expected = MustCompute(*model, tokens, 4, 16);
  std::vector<Bytes> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = MustCompute(*model, tokens, 4, 16); });
  }
  for (std::thread& t : threads) t.join();
  for (const Bytes& r : results) EXPECT_EQ(r, expected);
}

// The 7B-like layout of the benchmark: one page, checksums verify.
TEST(ReferenceModelTest, SevenBLikeLayoutComputesAPage) {
  const KvLayout layout = Layout(DType::kBFloat16, 32, 8, 128, 16);
  ASSERT_OK_AND_ASSIGN(auto model, ReferenceModel::Create(layout, 1));
  EXPECT_EQ(model->weight_bytes(), 32u * 32 * (2 * 1024 + 32) * 4);
  const std::vector<TokenId> tokens = RandomTokens(2 * 16, 14);
  const Bytes blob = MustCompute(*model, tokens, 1, 1);
  ASSERT_EQ(blob.size(), layout.BytesPerPage());
  ASSERT_OK_AND_ASSIGN(std::vector<uint64_t> sums, radix::ChunkChecksums(blob, layout, 1));
  EXPECT_EQ(sums.size(), 32u);
  EXPECT_OK(radix::VerifyChunkChecksums(blob, layout, 1, sums));
}

TEST(ReferenceModelTest, CreateRejectsInvalidAndOversizedLayouts) {
  KvLayout invalid = Small();
  invalid.head_dim = 0;
  EXPECT_CODE(ReferenceModel::Create(invalid, 1), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(ReferenceModel::Create(KvLayout{}, 1), absl::StatusCode::kInvalidArgument);
  KvLayout mla_heads = Layout(DType::kBFloat16, 2, 2, 8, 4, KvFormat::kMlaLatent);
  EXPECT_CODE(ReferenceModel::Create(mla_heads, 1), absl::StatusCode::kInvalidArgument);
  // Valid for the store (32 MiB per page) but 4 GiB of weights.
  const KvLayout huge = Layout(DType::kInt8, 128, 256, 512, 1);
  ASSERT_OK(huge.Validate());
  const auto too_big = ReferenceModel::Create(huge, 1);
  EXPECT_CODE(too_big, absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_big.status().message()), ::testing::HasSubstr("too large"));
}

TEST(ReferenceModelTest, ComputeBlobRejectsBadArgumentsAndWritesNothing) {
  const KvLayout layout = Small();
  const auto model = MustCreate(layout, 19);
  const std::vector<TokenId> tokens = RandomTokens(6 * layout.page_tokens, 15);
  Bytes out(2 * layout.BytesPerPage(), std::byte{0xAB});
  const auto span = absl::MakeSpan(out);
  EXPECT_CODE(model->ComputeBlob(tokens, 0, 0, span), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(model->ComputeBlob(absl::MakeConstSpan(tokens).first(tokens.size() - 1), 0, 2, span),
              absl::StatusCode::kInvalidArgument);  // not whole pages
  EXPECT_CODE(model->ComputeBlob(tokens, 5, 2, span), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(model->ComputeBlob(tokens, 0xFFFFFFFF, 2, span), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(model->ComputeBlob(tokens, 0, 2, span.first(out.size() - 1)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(model->ComputeBlob(tokens, 0, 1, span), absl::StatusCode::kInvalidArgument);
  for (std::byte b : out) ASSERT_EQ(b, std::byte{0xAB});
  EXPECT_CODE(model->ComputeBlobBytes(tokens, 4, 3), absl::StatusCode::kOutOfRange);
  // Rejected before allocating num_pages * BytesPerPage() bytes.
  EXPECT_CODE(model->ComputeBlobBytes(tokens, 0, 0xFFFFFFFF), absl::StatusCode::kOutOfRange);
}

TEST(ReferenceModelTest, StateCallsRejectBadArgumentsAndKeepTheState) {
  const KvLayout layout = Small();
  const auto model = MustCreate(layout, 20);
  const std::vector<TokenId> tokens = RandomTokens(2 * layout.page_tokens, 16);
  ModelState state = model->InitialState();
  ASSERT_OK(model->Advance(&state, absl::MakeConstSpan(tokens).first(layout.page_tokens)));
  const auto page = absl::MakeConstSpan(tokens).subspan(layout.page_tokens);
  Bytes out(layout.BytesPerPage(), std::byte{0xAB});
  EXPECT_CODE(model->ComputeNextPages(&state, {}, absl::MakeSpan(out)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(model->ComputeNextPages(&state, page.first(3), absl::MakeSpan(out)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(model->ComputeNextPages(&state, page, absl::MakeSpan(out).first(out.size() - 1)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(model->Advance(&state, page.first(1)), absl::StatusCode::kInvalidArgument);
  for (std::byte b : out) ASSERT_EQ(b, std::byte{0xAB});
  EXPECT_EQ(state.tokens(), layout.page_tokens);
  EXPECT_OK(model->Advance(&state, {}));  // no pages: a no-op
  EXPECT_EQ(state.tokens(), layout.page_tokens);

  // A state from another seed or another layout is refused.
  const auto other_seed = MustCreate(layout, 21);
  ModelState foreign = other_seed->InitialState();
  EXPECT_CODE(model->ComputeNextPages(&foreign, page, absl::MakeSpan(out)),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(model->Advance(&foreign, page), absl::StatusCode::kFailedPrecondition);
  const auto other_layout = MustCreate(Small(DType::kFloat16), 20);
  ModelState other = other_layout->InitialState();
  EXPECT_CODE(model->Advance(&other, page), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(other.tokens(), 0u);

  // The state still works: the page computed after the failures is right.
  ASSERT_OK(model->ComputeNextPages(&state, page, absl::MakeSpan(out)));
  EXPECT_EQ(out, MustCompute(*model, tokens, 1, 1));
}

}  // namespace
}  // namespace strata::worker
