#include "client/cli/layout_spec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::cli {
namespace {

using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using ::testing::HasSubstr;

TEST(LayoutSpecTest, ParsesTheDocumentedExample) {
  ASSERT_OK_AND_ASSIGN(
      KvLayout layout,
      ParseLayoutSpec("layers=32,kv_heads=8,head_dim=128,dtype=bf16,page_tokens=16,format=kv,"
                      "tp=0/1"));
  EXPECT_EQ(layout, (KvLayout{.num_layers = 32,
                              .num_kv_heads = 8,
                              .head_dim = 128,
                              .dtype = DType::kBFloat16,
                              .page_tokens = 16,
                              .format = KvFormat::kKeyValue,
                              .tp_rank = 0,
                              .tp_world = 1}));
}

TEST(LayoutSpecTest, DefaultsOrderBlanksAndAliases) {
  ASSERT_OK_AND_ASSIGN(KvLayout layout,
                       ParseLayoutSpec(" page_tokens = 64 , dtype=fp8_e4m3,head_dim=576,"
                                       "kv_heads=1,layers=61, format=mla_latent, tp=3/8 "));
  EXPECT_EQ(layout.num_layers, 61u);
  EXPECT_EQ(layout.dtype, DType::kFloat8E4M3);
  EXPECT_EQ(layout.format, KvFormat::kMlaLatent);
  EXPECT_EQ(layout.tp_rank, 3u);
  EXPECT_EQ(layout.tp_world, 8u);

  ASSERT_OK_AND_ASSIGN(KvLayout defaults,
                       ParseLayoutSpec("layers=2,kv_heads=4,head_dim=8,dtype=float32,"
                                       "page_tokens=16"));
  EXPECT_EQ(defaults.format, KvFormat::kKeyValue);
  EXPECT_EQ(defaults.tp_rank, 0u);
  EXPECT_EQ(defaults.tp_world, 1u);
  ASSERT_OK_AND_ASSIGN(KvLayout mla, ParseLayoutSpec("layers=2,kv_heads=1,head_dim=8,dtype=fp16,"
                                                     "page_tokens=16,format=mla"));
  EXPECT_EQ(mla.format, KvFormat::kMlaLatent);
}

TEST(LayoutSpecTest, Errors) {
  const std::string base = "layers=2,kv_heads=4,head_dim=8,dtype=bf16,page_tokens=16";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty entry"},
      {base + ",", "empty entry"},
      {base + ",tp", "\"tp\" is not key=value"},
      {base + ",heads=4", "unknown key \"heads\""},
      {base + ",layers=3", "key layers given twice"},
      {"layers=2,kv_heads=4,head_dim=8,dtype=bf16", "missing key page_tokens"},
      {"layers=2,kv_heads=4,head_dim=8,page_tokens=16", "missing key dtype"},
      {"layers=two,kv_heads=4,head_dim=8,dtype=bf16,page_tokens=16", "layout layers: \"two\""},
      {"layers=-2,kv_heads=4,head_dim=8,dtype=bf16,page_tokens=16", "layout layers: \"-2\""},
      {"layers=4294967296,kv_heads=4,head_dim=8,dtype=bf16,page_tokens=16", "layout layers"},
      {"layers=2,kv_heads=4,head_dim=8,dtype=bf17,page_tokens=16", "layout dtype"},
      {base + ",format=gqa", "layout format: \"gqa\""},
      {base + ",tp=1", "is not RANK/WORLD"},
      {base + ",tp=a/2", "layout tp rank"},
      {base + ",tp=2/2", "layout: "},  // rank >= world: Validate
      {"layers=0,kv_heads=4,head_dim=8,dtype=bf16,page_tokens=16", "layout: "},
      {base + ",format=mla", "layout: "},  // MLA needs kv_heads=1
      {"layers=2,kv_heads=4,head_dim=8,dtype=bf16,page_tokens=0", "layout: "},
  };
  for (const auto& [spec, text] : cases) {
    absl::StatusOr<KvLayout> layout = ParseLayoutSpec(spec);
    EXPECT_CODE(layout, absl::StatusCode::kInvalidArgument) << spec;
    EXPECT_THAT(std::string(layout.status().message()), HasSubstr(text)) << spec;
  }
}

TEST(LayoutSpecTest, FormatRoundTrips) {
  std::vector<KvLayout> layouts;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat8E4M3,
                      DType::kFloat8E5M2, DType::kInt8, DType::kUInt8}) {
    layouts.push_back({.num_layers = 3,
                       .num_kv_heads = 2,
                       .head_dim = 64,
                       .dtype = dtype,
                       .page_tokens = 32,
                       .format = KvFormat::kKeyValue,
                       .tp_rank = 1,
                       .tp_world = 4});
  }
  layouts.push_back({.num_layers = 61,
                     .num_kv_heads = 1,
                     .head_dim = 576,
                     .dtype = DType::kBFloat16,
                     .page_tokens = 64,
                     .format = KvFormat::kMlaLatent,
                     .tp_rank = 0,
                     .tp_world = 1});
  for (const KvLayout& layout : layouts) {
    ASSERT_OK(layout.Validate());
    const std::string spec = FormatLayoutSpec(layout);
    ASSERT_OK_AND_ASSIGN(KvLayout parsed, ParseLayoutSpec(spec));
    EXPECT_EQ(parsed, layout) << spec;
  }
  EXPECT_EQ(FormatLayoutSpec(layouts[1]),
            "layers=3,kv_heads=2,head_dim=64,dtype=bfloat16,page_tokens=32,format=kv,tp=1/4");
}

}  // namespace
}  // namespace strata::cli
