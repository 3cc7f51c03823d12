#include "strata/store/meta/blob_meta_codec.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/base/internal/endian.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

#include "store/meta/test_records.h"
#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"

namespace strata::store::meta {
namespace {

constexpr radix::PrefixHash kNs{0x1111, 0x2222};

TEST(BlobMetaCodecTest, RoundTripsManyRecords) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const BlobMeta meta = TestBlob(seed, kNs);
    ASSERT_OK_AND_ASSIGN(BlobMeta decoded, DecodeBlobMeta(EncodeBlobMeta(meta)));
    ASSERT_EQ(decoded, meta) << meta;
    ASSERT_OK_AND_ASSIGN(decoded, DecodeBlobMeta(EncodeBlobMeta(meta), meta.key));
    ASSERT_EQ(decoded, meta);
  }
}

TEST(BlobMetaCodecTest, RoundTripsExtremeValues) {
  constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
  constexpr uint32_t kMax32 = std::numeric_limits<uint32_t>::max();
  BlobMeta empty;  // no parent, no ssd, no tokens, no checksums, epoch times
  ASSERT_OK_AND_ASSIGN(BlobMeta decoded, DecodeBlobMeta(EncodeBlobMeta(empty)));
  EXPECT_EQ(decoded, empty);
  EXPECT_EQ(EncodeBlobMeta(empty).size(), kBlobMetaMinSize) << "no tokens: an empty varint payload";

  BlobMeta max;
  max.key.hash = {kMax64, kMax64};
  max.namespace_hash = {kMax64, 0};
  max.start_hash = {0, kMax64};
  max.parent = BlobMetaParent{radix::BlobKey{{kMax64, kMax64}}, kMax32};
  max.first_page = kMax32;
  max.pages = kMax32;
  max.bytes = kMax64;
  max.tokens = {kMax32, 0, kMax32};
  max.checksums = {kMax64, 0};
  max.in_dram = true;
  max.ssd = SsdLocation{kMax64, kMax64};
  max.created = absl::InfinitePast();
  max.last_access = absl::InfiniteFuture();
  max.hits = kMax64;
  max.pinned = true;
  max.segment_start = true;  // the codec does not check that it excludes a parent
  max.generation = kMax64;
  ASSERT_OK_AND_ASSIGN(decoded, DecodeBlobMeta(EncodeBlobMeta(max)));
  EXPECT_EQ(decoded, max);
  EXPECT_EQ(EncodeBlobMeta(max)[1], 0b11111) << "every flag bit set, segment_start bit 4";

  // Finite extremes: ns precision, the earliest and latest representable nanosecond.
  BlobMeta times;
  times.created = absl::FromUnixNanos(std::numeric_limits<int64_t>::min() + 1);
  times.last_access = absl::FromUnixNanos(std::numeric_limits<int64_t>::max() - 1);
  ASSERT_OK_AND_ASSIGN(decoded, DecodeBlobMeta(EncodeBlobMeta(times)));
  EXPECT_EQ(decoded, times);
  // Sub-nanosecond parts are floored.
  times.created = absl::FromUnixNanos(5) + absl::Nanoseconds(0.75);
  ASSERT_OK_AND_ASSIGN(decoded, DecodeBlobMeta(EncodeBlobMeta(times)));
  EXPECT_EQ(decoded.created, absl::FromUnixNanos(5));
}

TEST(BlobMetaCodecTest, LayoutMatchesTheTable) {
  BlobMeta m = TestBlob(4, kNs);  // seed 4: parent, ssd, in_dram, not pinned
  ASSERT_TRUE(m.parent.has_value());
  ASSERT_TRUE(m.ssd.has_value());
  const std::string b = EncodeBlobMeta(m);
  auto u32 = [&](size_t at) { return absl::little_endian::Load32(b.data() + at); };
  auto u64 = [&](size_t at) { return absl::little_endian::Load64(b.data() + at); };
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 0b0111);
  EXPECT_EQ(u64(2), m.key.hash.hi);
  EXPECT_EQ(u64(10), m.key.hash.lo);
  EXPECT_EQ(u64(18), kNs.hi);
  EXPECT_EQ(u64(26), kNs.lo);
  EXPECT_EQ(u64(34), m.start_hash.hi);
  EXPECT_EQ(u32(50), m.first_page);
  EXPECT_EQ(u32(54), m.pages);
  EXPECT_EQ(u64(58), m.bytes);
  EXPECT_EQ(u64(66), m.generation);
  EXPECT_EQ(static_cast<int64_t>(u64(74)), absl::ToUnixNanos(m.created));
  EXPECT_EQ(static_cast<int64_t>(u64(82)), absl::ToUnixNanos(m.last_access));
  EXPECT_EQ(u64(90), m.hits);
  EXPECT_EQ(u64(98), m.parent->key.hash.hi);
  EXPECT_EQ(u32(114), m.parent->pages);
  EXPECT_EQ(u64(118), m.ssd->offset);
  EXPECT_EQ(u64(126), m.ssd->length);
  EXPECT_EQ(u32(134), m.tokens.size());
  const uint32_t payload = u32(139);
  EXPECT_EQ(u32(143 + payload), m.checksums.size());
  EXPECT_EQ(u64(147 + payload), m.checksums[0]);
  EXPECT_EQ(b.size(), 98 + 20 + 16 + 9 + payload + 4 + 8 * m.checksums.size() + 8);
}

TEST(BlobMetaCodecTest, AppendKeepsWhatWasThere) {
  const BlobMeta m = TestBlob(9, kNs);
  std::string out = "prefix";
  AppendBlobMeta(m, &out);
  ASSERT_TRUE(absl::StartsWith(out, "prefix"));
  ASSERT_OK_AND_ASSIGN(BlobMeta decoded, DecodeBlobMeta(std::string_view(out).substr(6)));
  EXPECT_EQ(decoded, m);
}

TEST(BlobMetaCodecTest, WrongKeyIsDataLossNamingBoth) {
  const BlobMeta m = TestBlob(1, kNs);
  const radix::BlobKey other = TestBlobKey(2);
  absl::StatusOr<BlobMeta> decoded = DecodeBlobMeta(EncodeBlobMeta(m), other);
  EXPECT_CODE(decoded, absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(decoded.status().message(), other.ToHex()));
  EXPECT_TRUE(absl::StrContains(decoded.status().message(), m.key.ToHex()));
}

TEST(BlobMetaCodecTest, TornRecordIsDataLossNamingTheKey) {
  const BlobMeta m = TestBlob(3, kNs);
  const std::string b = EncodeBlobMeta(m);
  absl::StatusOr<BlobMeta> decoded = DecodeBlobMeta(b.substr(0, b.size() - 1), m.key);
  EXPECT_CODE(decoded, absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(decoded.status().message(), m.key.ToHex())) << decoded.status();
  decoded = DecodeBlobMeta(b.substr(0, 10));
  EXPECT_CODE(decoded, absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(decoded.status().message(), "shorter")) << decoded.status();
}

}  // namespace
}  // namespace strata::store::meta
