#include "strata/radix/kv_layout.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::radix {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Llama-3.1-8B on one GPU: 32 layers, 8 KV heads of 128, bf16.
KvLayout Llama8B() {
  return KvLayout{.num_layers = 32,
                  .num_kv_heads = 8,
                  .head_dim = 128,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 16,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

// DeepSeek-V3 MLA: 61 layers, one 576-wide latent per token.
KvLayout DeepSeekMla() {
  return KvLayout{.num_layers = 61,
                  .num_kv_heads = 1,
                  .head_dim = 576,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 64,
                  .format = KvFormat::kMlaLatent,
                  .tp_rank = 0,
                  .tp_world = 1};
}

void ExpectInvalid(const KvLayout& layout, const std::vector<std::string>& parts) {
  const absl::Status s = layout.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << layout << ": " << s;
  for (const std::string& part : parts) {
    EXPECT_THAT(std::string(s.message()), HasSubstr(part)) << layout;
  }
}

TEST(DTypeTest, SizesNamesAndStableValues) {
  // The numeric values are hashed and go on the wire: they must never change.
  EXPECT_EQ(static_cast<int>(DType::kFloat16), 1);
  EXPECT_EQ(static_cast<int>(DType::kBFloat16), 2);
  EXPECT_EQ(static_cast<int>(DType::kFloat32), 3);
  EXPECT_EQ(static_cast<int>(DType::kFloat8E4M3), 4);
  EXPECT_EQ(static_cast<int>(DType::kFloat8E5M2), 5);
  EXPECT_EQ(static_cast<int>(DType::kInt8), 6);
  EXPECT_EQ(static_cast<int>(DType::kUInt8), 7);
  EXPECT_EQ(static_cast<int>(KvFormat::kKeyValue), 1);
  EXPECT_EQ(static_cast<int>(KvFormat::kMlaLatent), 2);

  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kFloat32), 4u);
  EXPECT_EQ(DTypeSize(DType::kFloat8E4M3), 1u);
  EXPECT_EQ(DTypeSize(DType::kFloat8E5M2), 1u);
  EXPECT_EQ(DTypeSize(DType::kInt8), 1u);
  EXPECT_EQ(DTypeSize(DType::kUInt8), 1u);
  EXPECT_EQ(DTypeSize(DType{0}), 0u);
  EXPECT_EQ(DTypeSize(DType{200}), 0u);

  EXPECT_EQ(DTypeName(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(DTypeName(DType{200}), "unknown(200)");
  for (int v = 1; v <= 7; ++v) {
    const DType d = static_cast<DType>(v);
    absl::StatusOr<DType> parsed = ParseDType(DTypeName(d));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(*ParseDType("bf16"), DType::kBFloat16);
  EXPECT_EQ(*ParseDType("fp16"), DType::kFloat16);
  EXPECT_EQ(*ParseDType("float8_e4m3fn"), DType::kFloat8E4M3);
  const absl::Status bad = ParseDType("float12").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), AllOf(HasSubstr("float12"), HasSubstr("bfloat16")));
  EXPECT_EQ(ParseDType("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDType("BF16").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KvFormatTest, NamesRoundTrip) {
  EXPECT_EQ(*ParseKvFormat(KvFormatName(KvFormat::kKeyValue)), KvFormat::kKeyValue);
  EXPECT_EQ(*ParseKvFormat(KvFormatName(KvFormat::kMlaLatent)), KvFormat::kMlaLatent);
  EXPECT_EQ(KvFormatName(KvFormat{9}), "unknown(9)");
  EXPECT_EQ(ParseKvFormat("kv").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KvLayoutTest, RealModelsAreValidWithExpectedSizes) {
  const KvLayout llama = Llama8B();
  ASSERT_TRUE(llama.Validate().ok()) << llama.Validate();
  // 16 tokens * 8 heads * 128 dims * 2 bytes.
  EXPECT_EQ(llama.BytesPerKvBlock(), 32768u);
  EXPECT_EQ(llama.BytesPerLayerPage(), 65536u);  // K + V
  EXPECT_EQ(llama.BytesPerPage(), 32u * 65536u);

  const KvLayout mla = DeepSeekMla();
  ASSERT_TRUE(mla.Validate().ok()) << mla.Validate();
  // 64 tokens * 1 latent * 576 * 2 bytes; no separate V.
  EXPECT_EQ(mla.BytesPerKvBlock(), 73728u);
  EXPECT_EQ(mla.BytesPerLayerPage(), 73728u);
  EXPECT_EQ(mla.BytesPerPage(), 61u * 73728u);
}

TEST(KvLayoutTest, DefaultConstructedIsInvalid) {
  ExpectInvalid(KvLayout{}, {"num_layers", "[1, 1024]", "= 0"});
}

TEST(KvLayoutTest, EachBadFieldIsNamedWithRangeAndValue) {
  struct Case {
    std::string name;
    std::function<void(KvLayout&)> mutate;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"zero layers", [](KvLayout& l) { l.num_layers = 0; }, {"num_layers = 0", "[1, 1024]"}},
      {"absurd layers", [](KvLayout& l) { l.num_layers = 5000; }, {"num_layers = 5000"}},
      {"zero heads", [](KvLayout& l) { l.num_kv_heads = 0; }, {"num_kv_heads = 0", "[1, 1024]"}},
      {"absurd heads", [](KvLayout& l) { l.num_kv_heads = 4096; }, {"num_kv_heads = 4096"}},
      {"zero head_dim", [](KvLayout& l) { l.head_dim = 0; }, {"head_dim = 0", "[1, 16384]"}},
      {"absurd head_dim", [](KvLayout& l) { l.head_dim = 1u << 20; }, {"head_dim = 1048576"}},
      {"zero dtype", [](KvLayout& l) { l.dtype = DType{0}; }, {"dtype = 0", "2=bfloat16"}},
      {"unknown dtype", [](KvLayout& l) { l.dtype = DType{99}; }, {"dtype = 99"}},
      {"zero page", [](KvLayout& l) { l.page_tokens = 0; }, {"page_tokens = 0", "[1, 65536]"}},
      {"absurd page", [](KvLayout& l) { l.page_tokens = 1u << 20; }, {"page_tokens = 1048576"}},
      {"unknown format",
       [](KvLayout& l) { l.format = KvFormat{3}; },
       {"format = 3", "1=key_value"}},
      {"zero format", [](KvLayout& l) { l.format = KvFormat{0}; }, {"format = 0"}},
      {"zero tp_world", [](KvLayout& l) { l.tp_world = 0; }, {"tp_world = 0", "[1, 1024]"}},
      {"absurd tp_world", [](KvLayout& l) { l.tp_world = 2048; }, {"tp_world = 2048"}},
      {"rank == world",
       [](KvLayout& l) {
         l.tp_rank = 4;
         l.tp_world = 4;
       },
       {"tp_rank = 4", "[0, 3]"}},
      {"rank > world",
       [](KvLayout& l) {
         l.tp_rank = 9;
         l.tp_world = 2;
       },
       {"tp_rank = 9", "[0, 1]"}},
      {"mla with 8 heads",
       [](KvLayout& l) {
         l.format = KvFormat::kMlaLatent;
         l.num_kv_heads = 8;
       },
       {"num_kv_heads = 8", "[1, 1]", "mla_latent"}},
      {"page over 1 GiB",  // 64 layers * 2 * 64 heads * 256 * 2 B * 512 tokens = 2 GiB
       [](KvLayout& l) {
         l.num_layers = 64;
         l.num_kv_heads = 64;
         l.head_dim = 256;
         l.page_tokens = 512;
       },
       {"bytes per page", "2147483648", "1073741824"}},
      {"every field at its maximum",
       [](KvLayout& l) {
         l.num_layers = kMaxLayers;
         l.num_kv_heads = kMaxKvHeads;
         l.head_dim = kMaxHeadDim;
         l.dtype = DType::kFloat32;
         l.page_tokens = kMaxPageTokens;
         l.tp_world = kMaxTpWorld;
         l.tp_rank = kMaxTpWorld - 1;
       },
       // 2^10 * 2 * 2^10 * 2^14 * 4 * 2^16 = 2^53 bytes: no overflow, over the cap.
       {"bytes per page", "9007199254740992"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    KvLayout layout = Llama8B();
    c.mutate(layout);
    ExpectInvalid(layout, c.parts);
  }
}

TEST(KvLayoutTest, LimitsAreInclusive) {
  KvLayout layout = Llama8B();
  layout.num_layers = 1;
  layout.num_kv_heads = 1;
  layout.head_dim = 1;
  layout.page_tokens = 1;
  EXPECT_TRUE(layout.Validate().ok());
  layout.tp_world = kMaxTpWorld;
  layout.tp_rank = kMaxTpWorld - 1;
  layout.head_dim = kMaxHeadDim;
  layout.page_tokens = kMaxPageTokens;
  // 1 layer * 2 * 1 head * 16384 * 2 B * 65536 tokens = 4 GiB: over the cap.
  EXPECT_EQ(layout.Validate().code(), absl::StatusCode::kInvalidArgument);
  layout.page_tokens = 16384;  // exactly 1 GiB
  EXPECT_EQ(layout.BytesPerPage(), kMaxPageBytes);
  EXPECT_TRUE(layout.Validate().ok()) << layout.Validate();
}

TEST(KvLayoutTest, ToStringAndEquality) {
  EXPECT_EQ(Llama8B().ToString(),
            "KvLayout{layers=32 kv_heads=8 head_dim=128 dtype=bfloat16 page_tokens=16 "
            "format=key_value tp=0/1}");
  EXPECT_EQ(Llama8B(), Llama8B());
  KvLayout other = Llama8B();
  other.tp_rank = 0;
  other.tp_world = 2;
  EXPECT_NE(Llama8B(), other);
}

TEST(CheckCompatibleTest, NamesFirstDifferingField) {
  EXPECT_TRUE(CheckCompatible(Llama8B(), Llama8B()).ok());
  struct Case {
    std::function<void(KvLayout&)> mutate;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](KvLayout& l) { l.num_layers = 80; }, "num_layers expected 32, got 80"},
      {[](KvLayout& l) { l.num_kv_heads = 4; }, "num_kv_heads expected 8, got 4"},
      {[](KvLayout& l) { l.head_dim = 64; }, "head_dim expected 128, got 64"},
      {[](KvLayout& l) { l.dtype = DType::kFloat8E4M3; },
       "dtype expected bfloat16, got float8_e4m3"},
      {[](KvLayout& l) { l.page_tokens = 32; }, "page_tokens expected 16, got 32"},
      {[](KvLayout& l) { l.format = KvFormat::kMlaLatent; },
       "format expected key_value, got mla_latent"},
      {[](KvLayout& l) {
         l.tp_rank = 1;
         l.tp_world = 2;
       },
       "tp_rank expected 0, got 1"},
      {[](KvLayout& l) { l.tp_world = 2; }, "tp_world expected 1, got 2"},
      // Several fields differ: the first in declaration order is named.
      {[](KvLayout& l) {
         l.head_dim = 64;
         l.tp_world = 8;
       },
       "head_dim expected 128, got 64"},
  };
  for (const Case& c : cases) {
    KvLayout got = Llama8B();
    c.mutate(got);
    const absl::Status s = CheckCompatible(Llama8B(), got);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_EQ(s.message(), "KV layout mismatch: " + c.expected);
  }
}

TEST(BlobLayoutTest, CreateRejectsInvalidLayoutAndEmptyBlob) {
  EXPECT_EQ(BlobLayout::Create(KvLayout{}, 4).status().code(), absl::StatusCode::kInvalidArgument);
  const absl::Status empty = BlobLayout::Create(Llama8B(), 0).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.message()), HasSubstr("blob_pages = 0"));
}

TEST(BlobLayoutTest, OffsetsMatchHandComputedExample) {
  // 3 layers, 2 heads of 4 fp16, 2-token pages, K/V; a blob of 5 pages.
  // One K block = 2 tokens * 2 heads * 4 dims * 2 B = 32 B; a layer-page = 64 B;
  // a layer of the blob = 5 * 64 = 320 B; the blob = 3 * 320 = 960 B.
  const KvLayout layout{.num_layers = 3,
                        .num_kv_heads = 2,
                        .head_dim = 4,
                        .dtype = DType::kFloat16,
                        .page_tokens = 2,
                        .format = KvFormat::kKeyValue,
                        .tp_rank = 0,
                        .tp_world = 1};
  absl::StatusOr<BlobLayout> blob = BlobLayout::Create(layout, 5);
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(layout.BytesPerKvBlock(), 32u);
  EXPECT_EQ(layout.BytesPerLayerPage(), 64u);
  EXPECT_EQ(blob->TotalBytes(), 960u);

  struct Case {
    uint32_t layer, first, count;
    ByteRange want;
  };
  const Case cases[] = {
      {0, 0, 1, {0, 64}},    {0, 0, 5, {0, 320}},   {0, 4, 1, {256, 64}}, {1, 0, 1, {320, 64}},
      {1, 2, 2, {448, 128}}, {2, 0, 3, {640, 192}}, {2, 4, 1, {896, 64}}, {2, 0, 5, {640, 320}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ByteRange> got = blob->LayerPageRange(c.layer, c.first, c.count);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want) << "layer " << c.layer << " pages [" << c.first << ", +" << c.count
                            << ")";
  }

  absl::StatusOr<std::vector<ByteRange>> prefix = blob->PageRangeOfAllLayers(0, 2);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_EQ(*prefix, (std::vector<ByteRange>{{0, 128}, {320, 128}, {640, 128}}));
}

TEST(BlobLayoutTest, OutOfBoundsRanges) {
  absl::StatusOr<BlobLayout> blob = BlobLayout::Create(Llama8B(), 4);
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->LayerPageRange(0, 0, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(blob->LayerPageRange(32, 0, 1).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(blob->LayerPageRange(0, 4, 1).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(blob->LayerPageRange(0, 3, 2).status().code(), absl::StatusCode::kOutOfRange);
  // first + count would wrap in 32 bits.
  EXPECT_EQ(blob->LayerPageRange(0, 0xFFFFFFFFu, 2).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(blob->PageRangeOfAllLayers(2, 3).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(blob->LayerPageRange(32, 0, 1).status().message()),
              HasSubstr("layer 32"));
  EXPECT_TRUE(blob->LayerPageRange(31, 3, 1).ok());
}

// For every blob size and every page prefix, the per-layer ranges are inside
// the blob, pairwise disjoint, in layer order, and exactly as long as
// num_layers * prefix pages; for the whole blob they tile it.
TEST(BlobLayoutTest, PrefixRangesAreDisjointAndInsideTheBlob) {
  for (const KvLayout& layout : {Llama8B(), DeepSeekMla()}) {
    for (uint32_t pages = 1; pages <= 9; ++pages) {
      absl::StatusOr<BlobLayout> blob = BlobLayout::Create(layout, pages);
      ASSERT_TRUE(blob.ok());
      for (uint32_t first = 0; first < pages; ++first) {
        for (uint32_t count = 1; first + count <= pages; ++count) {
          absl::StatusOr<std::vector<ByteRange>> ranges = blob->PageRangeOfAllLayers(first, count);
          ASSERT_TRUE(ranges.ok()) << ranges.status();
          ASSERT_EQ(ranges->size(), layout.num_layers);
          uint64_t total = 0;
          for (size_t i = 0; i < ranges->size(); ++i) {
            const ByteRange& r = (*ranges)[i];
            EXPECT_EQ(r.length, uint64_t{count} * layout.BytesPerLayerPage());
            EXPECT_LE(r.end(), blob->TotalBytes());
            if (i > 0) {
              EXPECT_LE((*ranges)[i - 1].end(), r.offset);
            }
            total += r.length;
          }
          EXPECT_EQ(total, uint64_t{count} * layout.BytesPerPage());
          if (first == 0 && count == pages) {
            EXPECT_EQ(ranges->front().offset, 0u);
            for (size_t i = 1; i < ranges->size(); ++i) {
              EXPECT_EQ((*ranges)[i - 1].end(), (*ranges)[i].offset);
            }
            EXPECT_EQ(ranges->back().end(), blob->TotalBytes());
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace strata::radix
