#include "strata/types.h"

#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata {
namespace {

TEST(MemoryDescriptorTest, HostMemoryOfTheRightSizeIsAccepted) {
  std::vector<std::byte> buffer(64);
  EXPECT_OK(CheckMemoryDescriptor(MemoryDescriptor::Host(buffer.data(), 64), 64, "d"));
  MemoryDescriptor pinned = MemoryDescriptor::Host(buffer.data(), 64);
  pinned.kind = MemoryKind::kPinnedHost;
  EXPECT_OK(CheckMemoryDescriptor(pinned, 64, "d"));
  const std::vector<std::byte> source(8);
  EXPECT_OK(CheckMemoryDescriptor(MemoryDescriptor::Host(source.data(), 8), 8, "source"));
}

TEST(MemoryDescriptorTest, RefusalsNameTheArgument) {
  std::vector<std::byte> buffer(64);
  const absl::Status wrong_size =
      CheckMemoryDescriptor(MemoryDescriptor::Host(buffer.data(), 63), 64, "destinations[2]");
  EXPECT_CODE(wrong_size, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_size.message(), "destinations[2]: 63 bytes, expected 64");

  EXPECT_CODE(
      CheckMemoryDescriptor(MemoryDescriptor::Host(static_cast<void*>(nullptr), 64), 64, "d"),
      absl::StatusCode::kInvalidArgument);
  MemoryDescriptor negative = MemoryDescriptor::Host(buffer.data(), 64);
  negative.device = -1;
  EXPECT_CODE(CheckMemoryDescriptor(negative, 64, "d"), absl::StatusCode::kInvalidArgument);
  MemoryDescriptor odd = MemoryDescriptor::Host(buffer.data(), 64);
  odd.kind = static_cast<MemoryKind>(42);
  EXPECT_CODE(CheckMemoryDescriptor(odd, 64, "d"), absl::StatusCode::kInvalidArgument);
}

TEST(MemoryDescriptorTest, DeviceMemoryIsUnimplementedForNow) {
  std::vector<std::byte> buffer(64);
  const absl::Status status =
      CheckMemoryDescriptor(MemoryDescriptor::CudaDevice(buffer.data(), 64, 1), 64, "dst");
  EXPECT_CODE(status, absl::StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("device 1"), absl::string_view::npos) << status;
}

TEST(TypesTest, TierNamesAndWireNumbers) {
  EXPECT_EQ(TierName(Tier::kHbm), "hbm");
  EXPECT_EQ(TierName(Tier::kDram), "dram");
  EXPECT_EQ(TierName(Tier::kSsd), "ssd");
  EXPECT_EQ(TierName(Tier::kText), "text");
  EXPECT_EQ(TierName(static_cast<Tier>(9)), "unknown");
  EXPECT_EQ(static_cast<int>(Tier::kDram), 2);  // strata.v1.Tier numbers
}

TEST(TypesTest, LookupPhaseNames) {
  EXPECT_EQ(LookupPhaseName(LookupPhase::kUnspecified), "unspecified");
  EXPECT_EQ(LookupPhaseName(LookupPhase::kPrefill), "prefill");
  EXPECT_EQ(LookupPhaseName(LookupPhase::kMidfill), "midfill");
  EXPECT_EQ(LookupPhaseName(LookupPhase::kDecode), "decode");
  EXPECT_EQ(LookupPhaseName(static_cast<LookupPhase>(7)), "unknown");
}

TEST(TypesTest, CurveForFindsTheTiersCurve) {
  TiersInfo info;
  EXPECT_EQ(info.CurveFor(Tier::kDram), nullptr);
  info.curves.push_back(TierCurveInfo{.tier = Tier::kSsd, .capacity_bytes = 7});
  info.curves.push_back(TierCurveInfo{.tier = Tier::kDram, .capacity_bytes = 5});
  ASSERT_NE(info.CurveFor(Tier::kDram), nullptr);
  EXPECT_EQ(info.CurveFor(Tier::kDram)->capacity_bytes, 5u);
  EXPECT_EQ(info.CurveFor(Tier::kSsd)->capacity_bytes, 7u);
  EXPECT_EQ(info.CurveFor(Tier::kText), nullptr);
  const LookupInfo lookups{.dram_hit_pages = 1, .ssd_hit_pages = 2, .text_hit_pages = 4};
  EXPECT_EQ(lookups.HitPages(), 7u);
}

TEST(TypesTest, PagesBytesAndReadRangeFromSegment) {
  const KvLayout layout{.num_layers = 3,
                        .num_kv_heads = 2,
                        .head_dim = 4,
                        .dtype = DType::kFloat16,
                        .page_tokens = 8,
                        .format = KvFormat::kKeyValue,
                        .tp_rank = 0,
                        .tp_world = 1};
  ASSERT_OK(layout.Validate());
  // One layer-page: 2 (K, V) x 8 tokens x 2 heads x 4 dims x 2 bytes = 256; 3 layers.
  EXPECT_EQ(PagesBytes(layout, 5), 5u * 3 * 256);
  const Segment segment{BlobKey{PrefixHash{1, 2}}, 3, 4, 10, 9, Tier::kDram};
  EXPECT_EQ(ReadRange::FromSegment(segment), (ReadRange{BlobKey{PrefixHash{1, 2}}, 3, 4}));
}

TEST(MatchResultTest, ReadablePagesEndAtTheFirstTextSegment) {
  const BlobKey a{PrefixHash{1, 1}}, b{PrefixHash{2, 2}}, c{PrefixHash{3, 3}};
  MatchResult match;
  EXPECT_EQ(match.ReadablePages(), 0u);
  EXPECT_TRUE(match.TextSegments().empty());
  match.matched_pages = 9;
  match.segments = {{a, 0, 3, 0, 3, Tier::kDram},
                    {b, 0, 2, 3, 4, Tier::kSsd},
                    {c, 1, 2, 5, 3, Tier::kText, {7, 8}},
                    {a, 0, 2, 7, 2, Tier::kDram}};
  // DRAM and SSD pages [0, 5) are readable; the TEXT segment ends the readable prefix even
  // though DRAM pages follow it.
  EXPECT_EQ(match.ReadablePages(), 5u);
  const std::vector<Segment> text = match.TextSegments();
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].blob, c);
  EXPECT_EQ(text[0].tokens, (std::vector<TokenId>{7, 8}));
  // No TEXT: every matched page.
  match.segments[2].tier = Tier::kDram;
  match.segments[2].tokens.clear();
  EXPECT_EQ(match.ReadablePages(), 9u);
  // TEXT first: nothing readable.
  match.segments[0].tier = Tier::kText;
  EXPECT_EQ(match.ReadablePages(), 0u);
  // Never more than matched_pages, and a gap ends the readable prefix.
  match.segments = {{a, 0, 3, 0, 3, Tier::kDram}, {b, 0, 2, 4, 2, Tier::kDram}};
  match.matched_pages = 2;
  EXPECT_EQ(match.ReadablePages(), 2u);
  match.matched_pages = 6;
  EXPECT_EQ(match.ReadablePages(), 3u);
}

TEST(RebuildTaskTest, OwnTokensAreTheLastPagesOfTheSequence) {
  const KvLayout layout{.num_layers = 2,
                        .num_kv_heads = 1,
                        .head_dim = 4,
                        .dtype = DType::kFloat16,
                        .page_tokens = 2,
                        .format = KvFormat::kKeyValue,
                        .tp_rank = 0,
                        .tp_world = 1};
  RebuildTask task;
  task.first_page = 2;
  task.pages = 1;
  task.sequence_tokens = {1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(task.OwnTokens().empty());  // no namespace: no page size
  task.ns = Namespace::Create("acme", "m", layout).value();
  EXPECT_EQ(task.OwnTokens(), (std::vector<TokenId>{5, 6}));
  task.pages = 3;
  EXPECT_EQ(task.OwnTokens(), task.sequence_tokens);
  task.pages = 4;  // more than the sequence holds
  EXPECT_TRUE(task.OwnTokens().empty());
}

}  // namespace
}  // namespace strata
