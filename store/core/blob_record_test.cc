// What replies show of a BlobRecord: BlobInfoOf, MatchedSegmentOf, ReadRangeReplyOf.
#include "strata/store/core/blob_record.h"

#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/store/core/chunk_checksum.h"

namespace strata::store::core {
namespace {

// A record of 3 pages of the small layout (2 layers, 128-byte chunks), checksums 100 + i.
BlobRecord SmallRecord(const radix::Namespace& ns) {
  BlobRecord r;
  r.ns = &ns;
  r.pages = 3;
  r.bytes = 3 * ns.layout().BytesPerPage();
  r.tokens = testing::MakeTokens(3, 7);
  for (uint64_t i = 0; i < 6; ++i) r.checksums.push_back(100 + i);
  return r;
}

TEST(BlobRecordViewTest, InfoListsTiersFastestFirstAndTextWithoutBytes) {
  const radix::Namespace ns = testing::SmallNamespace();
  BlobRecord r = SmallRecord(ns);
  EXPECT_EQ(BlobInfoOf(r, false).tiers, std::vector<Tier>{Tier::kText});
  r.extent = tiering::Extent{4096, 4096};
  r.ssd_extent = tiering::Extent{0, 4096};
  const BlobInfo info = BlobInfoOf(r, /*with_tokens=*/true);
  EXPECT_EQ(info.tiers, (std::vector<Tier>{Tier::kDram, Tier::kSsd}));
  EXPECT_EQ(info.extent.offset, 4096u);
  EXPECT_EQ(info.tokens, r.tokens);
  EXPECT_EQ(info.blob_checksum, BlobChecksum(r.checksums));
  EXPECT_TRUE(BlobInfoOf(r, /*with_tokens=*/false).tokens.empty());
}

TEST(BlobRecordViewTest, MatchedSegmentCarriesTokensOnlyForText) {
  const radix::Namespace ns = testing::SmallNamespace();
  BlobRecord r = SmallRecord(ns);
  radix::MatchSegment s;
  s.blob_page_offset = 1;
  s.page_count = 2;
  s.seq_page_begin = 5;
  const Segment text = MatchedSegmentOf(s, r, 4);
  EXPECT_EQ(text.tier, Tier::kText);
  EXPECT_EQ(text.tokens, std::vector<radix::TokenId>(r.tokens.begin() + 4, r.tokens.end()));
  r.ssd_extent = tiering::Extent{0, 4096};
  const Segment ssd = MatchedSegmentOf(s, r, 4);
  EXPECT_EQ(ssd.tier, Tier::kSsd);
  EXPECT_TRUE(ssd.tokens.empty());
  r.extent = tiering::Extent{0, 4096};
  EXPECT_EQ(MatchedSegmentOf(s, r, 4).tier, Tier::kDram);
}

TEST(BlobRecordViewTest, ReadRangeReplyHasARangeAndTheChecksumsOfEachLayer) {
  const radix::Namespace ns = testing::SmallNamespace();
  BlobRecord r = SmallRecord(ns);
  r.extent = tiering::Extent{8192, 4096};
  ReadRange range;
  range.first_page = 1;
  range.num_pages = 2;
  range.layer_begin = 0;
  range.layer_end = 2;
  const absl::StatusOr<ReadRangeReply> reply = ReadRangeReplyOf(r, range, ns.layout());
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->arena_offset, 8192u);
  EXPECT_EQ(reply->blob_bytes, r.bytes);
  ASSERT_EQ(reply->layer_ranges.size(), 2u);
  // Layer-major: layer 1 starts after layer 0's three 128-byte chunks.
  EXPECT_EQ(reply->layer_ranges[0], (radix::ByteRange{128, 256}));
  EXPECT_EQ(reply->layer_ranges[1], (radix::ByteRange{3 * 128 + 128, 256}));
  EXPECT_EQ(reply->checksums, (std::vector<uint64_t>{101, 102, 104, 105}));
}

TEST(BlobRecordViewTest, CheckReadRangeRefusesEmptyAndOutsideRanges) {
  const radix::Namespace ns = testing::SmallNamespace();
  const BlobRecord r = SmallRecord(ns);  // 3 pages
  ReadRange range;
  range.first_page = 1;
  range.num_pages = 2;
  range.layer_begin = 0;
  range.layer_end = ns.layout().num_layers;
  EXPECT_TRUE(CheckReadRange(r, range, ns.layout()).ok());
  ReadRange empty = range;
  empty.num_pages = 0;
  EXPECT_EQ(CheckReadRange(r, empty, ns.layout()).code(), absl::StatusCode::kInvalidArgument);
  empty = range;
  empty.layer_begin = empty.layer_end;
  EXPECT_EQ(CheckReadRange(r, empty, ns.layout()).code(), absl::StatusCode::kInvalidArgument);
  ReadRange past = range;
  past.num_pages = 3;  // pages [1, 4) of 3
  EXPECT_EQ(CheckReadRange(r, past, ns.layout()).code(), absl::StatusCode::kOutOfRange);
  past = range;
  past.layer_end = ns.layout().num_layers + 1;
  EXPECT_EQ(CheckReadRange(r, past, ns.layout()).code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace strata::store::core
