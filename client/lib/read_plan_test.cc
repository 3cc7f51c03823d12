#include "client/lib/read_plan.h"

#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::client_internal {
namespace {

// 3 layers, 16 bytes a layer-page (fp16, 1 head x 2 dims x 2 tokens, K and V... = 2*2*2*2).
radix::KvLayout Layout() {
  radix::KvLayout layout{.num_layers = 3,
                         .num_kv_heads = 1,
                         .head_dim = 2,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = 2,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
  return layout;
}

BlobKey Key(uint64_t n) { return BlobKey{PrefixHash{n, n}}; }

TEST(ReadPlanTest, RangesLandLayerMajorInTheirOwnDestination) {
  const radix::KvLayout layout = Layout();
  ASSERT_EQ(layout.BytesPerLayerPage(), 16u);
  std::vector<std::byte> a(3 * 2 * 16), b(3 * 1 * 16);
  const std::vector<ReadRange> ranges = {{Key(1), 4, 2}, {Key(2), 0, 1}};
  const std::vector<MemoryDescriptor> dests = {MemoryDescriptor::Host(a.data(), a.size()),
                                               MemoryDescriptor::Host(b.data(), b.size())};
  ASSERT_OK_AND_ASSIGN(std::vector<PlannedRange> plan, PlanRanges(layout, ranges, dests));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].blob, Key(1));
  EXPECT_EQ(plan[0].first_page, 4u);
  EXPECT_EQ(plan[0].num_pages, 2u);
  EXPECT_EQ(plan[0].layer_begin, 0u);
  EXPECT_EQ(plan[0].layer_end, 3u);
  EXPECT_EQ(plan[0].chunks(), 6u);
  ASSERT_EQ(plan[0].layer_dest.size(), 3u);
  EXPECT_EQ(plan[0].layer_dest[0], a.data());
  EXPECT_EQ(plan[0].layer_dest[1], a.data() + 32);
  EXPECT_EQ(plan[0].layer_dest[2], a.data() + 64);
  EXPECT_EQ(plan[1].layer_dest[2], b.data() + 32);
}

TEST(ReadPlanTest, RangeRefusals) {
  const radix::KvLayout layout = Layout();
  std::vector<std::byte> a(48);
  const MemoryDescriptor ok = MemoryDescriptor::Host(a.data(), a.size());
  EXPECT_CODE(PlanRanges(layout, {}, {}), absl::StatusCode::kInvalidArgument);
  const std::vector<ReadRange> one = {{Key(1), 0, 1}};
  EXPECT_CODE(PlanRanges(layout, one, {}), absl::StatusCode::kInvalidArgument);
  const std::vector<ReadRange> zero = {{Key(1), 0, 0}};
  const std::vector<MemoryDescriptor> dests = {ok};
  EXPECT_CODE(PlanRanges(layout, zero, dests), absl::StatusCode::kInvalidArgument);
  const std::vector<ReadRange> two = {{Key(1), 0, 2}};
  const auto small = PlanRanges(layout, two, dests);
  EXPECT_CODE(small, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(small.status().message().find("destinations[0]"), absl::string_view::npos);
  const std::vector<MemoryDescriptor> device = {
      MemoryDescriptor::CudaDevice(a.data(), a.size(), 0)};
  ASSERT_OK_AND_ASSIGN(const std::vector<PlannedRange> on_device, PlanRanges(layout, one, device));
  EXPECT_EQ(on_device[0].device, 0);  // the read path sends it to the device's paths
  ASSERT_OK_AND_ASSIGN(const std::vector<PlannedRange> on_host, PlanRanges(layout, one, dests));
  EXPECT_EQ(on_host[0].device, -1);
}

TEST(ReadPlanTest, PrefixSegmentsShareOneLayerMajorDestination) {
  const radix::KvLayout layout = Layout();
  const uint32_t pages = 5;
  std::vector<std::byte> dst(3 * pages * 16);
  // Pages 0..2 from blob 1 (its pages 0..2), 3..6 from blob 2 (its pages 1..4): read 5.
  const std::vector<Segment> segments = {{Key(1), 0, 3, 0, 3, Tier::kDram},
                                         {Key(2), 1, 4, 3, 8, Tier::kDram}};
  ASSERT_OK_AND_ASSIGN(
      std::vector<PlannedRange> plan,
      PlanPrefix(layout, segments, pages, MemoryDescriptor::Host(dst.data(), dst.size())));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].num_pages, 3u);
  EXPECT_EQ(plan[1].blob, Key(2));
  EXPECT_EQ(plan[1].first_page, 1u);
  EXPECT_EQ(plan[1].num_pages, 2u);  // cut to the 5 pages asked for
  for (uint32_t l = 0; l < 3; ++l) {
    EXPECT_EQ(plan[0].layer_dest[l], dst.data() + (l * pages + 0) * 16);
    EXPECT_EQ(plan[1].layer_dest[l], dst.data() + (l * pages + 3) * 16);
  }
  // Segments past the pages asked for are not read.
  ASSERT_OK_AND_ASSIGN(
      plan, PlanPrefix(layout, segments, 2, MemoryDescriptor::Host(dst.data(), 3 * 2 * 16)));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].num_pages, 2u);
  // Zero pages: nothing to read, no destination needed.
  ASSERT_OK_AND_ASSIGN(plan, PlanPrefix(layout, segments, 0, MemoryDescriptor{}));
  EXPECT_TRUE(plan.empty());
}

TEST(ReadPlanTest, PrefixRefusesGapsShortCoverAndBadSegments) {
  const radix::KvLayout layout = Layout();
  std::vector<std::byte> dst(3 * 4 * 16);
  const MemoryDescriptor d = MemoryDescriptor::Host(dst.data(), dst.size());
  const std::vector<Segment> gap = {{Key(1), 0, 2, 0, 2, Tier::kDram},
                                    {Key(2), 0, 2, 3, 2, Tier::kDram}};
  EXPECT_CODE(PlanPrefix(layout, gap, 4, d), absl::StatusCode::kInvalidArgument);
  const std::vector<Segment> short_cover = {{Key(1), 0, 3, 0, 3, Tier::kDram}};
  EXPECT_CODE(PlanPrefix(layout, short_cover, 4, d), absl::StatusCode::kInvalidArgument);
  const std::vector<Segment> not_from_zero = {{Key(1), 0, 4, 1, 4, Tier::kDram}};
  EXPECT_CODE(PlanPrefix(layout, not_from_zero, 4, d), absl::StatusCode::kInvalidArgument);
  const std::vector<Segment> past_blob = {{Key(1), 2, 4, 0, 5, Tier::kDram}};
  EXPECT_CODE(PlanPrefix(layout, past_blob, 4, d), absl::StatusCode::kInvalidArgument);
  const std::vector<Segment> empty_segment = {{Key(1), 0, 0, 0, 4, Tier::kDram}};
  EXPECT_CODE(PlanPrefix(layout, empty_segment, 4, d), absl::StatusCode::kInvalidArgument);
  const std::vector<Segment> fine = {{Key(1), 0, 4, 0, 4, Tier::kDram}};
  EXPECT_CODE(PlanPrefix(layout, fine, 4, MemoryDescriptor::Host(dst.data(), 10)),
              absl::StatusCode::kInvalidArgument);
}

// ClientCore::ReadInto (a cluster's fan-out): one node's segments, with gaps where other
// nodes' segments go, each at its own place in the whole sequence's destination.
TEST(ReadPlanTest, IntoLeavesTheGapsToOthers) {
  const radix::KvLayout layout = Layout();
  const uint32_t total = 8;
  std::vector<std::byte> dst(3 * total * 16);
  const MemoryDescriptor d = MemoryDescriptor::Host(dst.data(), dst.size());
  const std::vector<Segment> mine = {{Key(1), 0, 2, 2, 2, Tier::kDram},
                                     {Key(2), 1, 1, 4, 3, Tier::kSsd},
                                     {Key(3), 0, 2, 6, 2, Tier::kDram}};
  ASSERT_OK_AND_ASSIGN(std::vector<PlannedRange> plan, PlanInto(layout, mine, total, d));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1].blob, Key(2));
  EXPECT_EQ(plan[1].first_page, 1u);
  for (uint32_t l = 0; l < 3; ++l) {
    EXPECT_EQ(plan[0].layer_dest[l], dst.data() + (l * total + 2) * 16);
    EXPECT_EQ(plan[1].layer_dest[l], dst.data() + (l * total + 4) * 16);
    EXPECT_EQ(plan[2].layer_dest[l], dst.data() + (l * total + 6) * 16);
  }
  // Out of order or overlapping, past the destination, none, a destination of another size.
  const std::vector<Segment> overlap = {{Key(1), 0, 2, 2, 2, Tier::kDram},
                                        {Key(2), 0, 2, 3, 2, Tier::kDram}};
  EXPECT_CODE(PlanInto(layout, overlap, total, d), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(PlanInto(layout, mine, 7, MemoryDescriptor::Host(dst.data(), 3 * 7 * 16)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(PlanInto(layout, {}, total, d), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(PlanInto(layout, mine, total, MemoryDescriptor::Host(dst.data(), 16)),
              absl::StatusCode::kInvalidArgument);
  const std::vector<Segment> text = {{Key(1), 0, 2, 2, 2, Tier::kText}};
  EXPECT_CODE(PlanInto(layout, text, total, d), absl::StatusCode::kNotFound);
}

TEST(ReadPlanTest, PrefixNeverReadsTextSegments) {
  const radix::KvLayout layout = Layout();
  std::vector<std::byte> dst(3 * 5 * 16);
  // Pages 0..2 in DRAM, 3..4 TEXT (bytes dropped, tokens kept).
  const std::vector<Segment> segments = {{Key(1), 0, 3, 0, 3, Tier::kDram},
                                         {Key(2), 0, 2, 3, 2, Tier::kText, {1, 2, 3, 4}}};
  const auto into = [&](uint32_t pages) {
    return MemoryDescriptor::Host(dst.data(), 3 * pages * 16);
  };
  // Up to the TEXT segment: fine.
  ASSERT_OK_AND_ASSIGN(std::vector<PlannedRange> plan, PlanPrefix(layout, segments, 3, into(3)));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].blob, Key(1));
  // Into it: NOT_FOUND (a miss) naming the pages, before anything could be sent.
  const auto into_text = PlanPrefix(layout, segments, 4, into(4));
  EXPECT_CODE(into_text, absl::StatusCode::kNotFound);
  EXPECT_NE(into_text.status().message().find("segments[1]: sequence pages [3, 4) are TEXT"),
            absl::string_view::npos)
      << into_text.status();
  // A TEXT segment first: nothing is readable.
  const std::vector<Segment> text_first = {{Key(2), 0, 2, 0, 2, Tier::kText, {1, 2, 3, 4}}};
  EXPECT_CODE(PlanPrefix(layout, text_first, 1, into(1)), absl::StatusCode::kNotFound);
  // SSD segments are read (the node promotes them).
  const std::vector<Segment> ssd = {{Key(3), 0, 2, 0, 2, Tier::kSsd}};
  ASSERT_OK_AND_ASSIGN(plan, PlanPrefix(layout, ssd, 2, into(2)));
  EXPECT_EQ(plan.size(), 1u);
}

TEST(ReadPlanTest, LargeRangesAreCutByPagesAndRunsRespectLimits) {
  std::vector<std::byte> dst(3 * 10 * 16);
  PlannedRange big{Key(1), 5, 10, 0, 3, {}};
  for (uint32_t l = 0; l < 3; ++l) big.layer_dest.push_back(dst.data() + l * 10 * 16);
  std::vector<PlannedRange> ranges;
  ranges.push_back(big);
  // At most 12 chunks (4 pages of 3 layers) per piece: 4 + 4 + 2 pages.
  std::vector<PlannedRange> cut = CutLargeRanges(std::move(ranges), 12, 16);
  ASSERT_EQ(cut.size(), 3u);
  EXPECT_EQ(cut[0].first_page, 5u);
  EXPECT_EQ(cut[0].num_pages, 4u);
  EXPECT_EQ(cut[1].first_page, 9u);
  EXPECT_EQ(cut[2].first_page, 13u);
  EXPECT_EQ(cut[2].num_pages, 2u);
  EXPECT_EQ(cut[1].layer_dest[2], dst.data() + 2 * 10 * 16 + 4 * 16);

  // Runs: at most 2 ranges and 12 chunks each.
  const auto runs = SplitIntoReads(cut, 2, 12);
  ASSERT_EQ(runs.size(), 3u);  // 12 | 12 | 6 chunks
  EXPECT_EQ(runs[0], std::make_pair(size_t{0}, size_t{1}));
  const auto by_count = SplitIntoReads(cut, 2, 100);
  ASSERT_EQ(by_count.size(), 2u);
  EXPECT_EQ(by_count[0], std::make_pair(size_t{0}, size_t{2}));
  EXPECT_EQ(by_count[1], std::make_pair(size_t{2}, size_t{3}));
  EXPECT_TRUE(SplitIntoReads({}, 2, 12).empty());
}

}  // namespace
}  // namespace strata::client_internal
