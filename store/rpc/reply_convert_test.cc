#include "strata/store/rpc/reply_convert.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "store/rpc/convert_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"

namespace strata::store::rpc {
namespace {

using convert_test::Key;
using convert_test::kNow;

radix::KvLayout SmallLayout() {
  return radix::KvLayout{.num_layers = 4,
                         .num_kv_heads = 2,
                         .head_dim = 8,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = 4,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

TEST(TimeConvertTest, ExpiresInMsIsWholeMillisecondsNeverNegative) {
  EXPECT_EQ(ExpiresInMs(kNow + absl::Microseconds(1500900), kNow), 1500u);
  EXPECT_EQ(ExpiresInMs(kNow + absl::Seconds(30), kNow), 30000u);
  EXPECT_EQ(ExpiresInMs(kNow, kNow), 0u);
  EXPECT_EQ(ExpiresInMs(kNow - absl::Seconds(5), kNow), 0u);
  EXPECT_EQ(ExpiresInMs(absl::InfinitePast(), kNow), 0u);
  EXPECT_EQ(ExpiresInMs(absl::InfiniteFuture(), kNow), UINT64_MAX);
}

TEST(TimeConvertTest, UnixMillis) {
  EXPECT_EQ(UnixMillis(absl::FromUnixMillis(1893456000123)), 1893456000123u);
  EXPECT_EQ(UnixMillis(absl::InfinitePast()), 0u);
  EXPECT_EQ(UnixMillis(absl::FromUnixSeconds(-10)), 0u);
}

TEST(BeginPutToProtoTest, NewPutCarriesIdExpiryAndDataPlane) {
  core::BeginPutReply reply{.exists = false,
                            .key = Key(7, 8),
                            .put_id = 42,
                            .extent = {.offset = 65536, .length = 65536},
                            .deadline = kNow + absl::Seconds(60)};
  v1::BeginPutResponse out;
  BeginPutToProto(reply, kNow, "127.0.0.1:7401", &out);
  EXPECT_FALSE(out.exists());
  EXPECT_EQ(proto::BlobKeyOf(out.key()), Key(7, 8));
  EXPECT_EQ(out.put_id(), 42u);
  EXPECT_EQ(out.expires_in_ms(), 60000u);
  EXPECT_EQ(out.data_plane().ucx_address(), "127.0.0.1:7401");
}

TEST(BeginPutToProtoTest, ExistingKeyCarriesOnlyTheKey) {
  core::BeginPutReply reply{.exists = true, .key = Key(7, 8)};
  v1::BeginPutResponse out;
  BeginPutToProto(reply, kNow, "127.0.0.1:7401", &out);
  EXPECT_TRUE(out.exists());
  EXPECT_EQ(proto::BlobKeyOf(out.key()), Key(7, 8));
  EXPECT_EQ(out.put_id(), 0u);
  EXPECT_EQ(out.expires_in_ms(), 0u);
  EXPECT_FALSE(out.has_data_plane());
}

TEST(CommitAndDeleteToProtoTest, CopyFields) {
  v1::CommitPutResponse commit;
  CommitPutToProto(core::CommitPutReply{.key = Key(5, 6), .indexed_pages = 3}, &commit);
  EXPECT_EQ(proto::BlobKeyOf(commit.key()), Key(5, 6));
  EXPECT_EQ(commit.indexed_pages(), 3u);
  v1::DeleteResponse del;
  DeleteToProto(core::DeleteReply{.pages_removed = 12, .blobs_unlinked = 2}, &del);
  EXPECT_EQ(del.pages_removed(), 12u);
  EXPECT_EQ(del.blobs_unlinked(), 2u);
}

TEST(ReadToProtoTest, OneGrantPerRangeWithChunkSizeAndChecksums) {
  const radix::KvLayout layout = SmallLayout();
  const uint64_t chunk = layout.BytesPerLayerPage();
  const std::vector<core::ReadRange> ranges = {
      {.blob = Key(1, 2), .first_page = 1, .num_pages = 2, .layer_begin = 1, .layer_end = 3},
      {.blob = Key(3, 4), .first_page = 0, .num_pages = 1, .layer_begin = 0, .layer_end = 1},
  };
  core::ReadReply reply;
  reply.lease_id = 99;
  reply.expiry = kNow + absl::Seconds(30);
  reply.ranges.push_back(
      core::ReadRangeReply{.layer_ranges = {{.offset = 5 * chunk, .length = 2 * chunk},
                                            {.offset = 9 * chunk, .length = 2 * chunk}},
                           .checksums = {11, 12, 13, 14},
                           .blob_bytes = 16 * chunk,
                           .arena_offset = 1 << 20});
  reply.ranges.push_back(core::ReadRangeReply{.layer_ranges = {{.offset = 0, .length = chunk}},
                                              .checksums = {21},
                                              .blob_bytes = 4 * chunk,
                                              .arena_offset = 2 << 20});
  v1::ReadResponse out;
  ReadToProto(reply, ranges, layout, kNow, "10.0.0.1:7401", &out);
  EXPECT_EQ(out.lease_id(), 99u);
  EXPECT_EQ(out.expires_in_ms(), 30000u);
  EXPECT_EQ(out.data_plane().ucx_address(), "10.0.0.1:7401");
  ASSERT_EQ(out.grants_size(), 2);
  const v1::ReadGrant& g = out.grants(0);
  EXPECT_EQ(proto::BlobKeyOf(g.blob()), Key(1, 2));
  EXPECT_EQ(g.chunk_bytes(), chunk);
  ASSERT_EQ(g.layer_ranges_size(), 2);
  EXPECT_EQ(g.layer_ranges(1).offset(), 9 * chunk);
  EXPECT_EQ(g.layer_ranges(1).length(), 2 * chunk);
  EXPECT_EQ(std::vector<uint64_t>(g.chunk_checksums().begin(), g.chunk_checksums().end()),
            (std::vector<uint64_t>{11, 12, 13, 14}));
  EXPECT_EQ(g.blob_bytes(), 16 * chunk);
  EXPECT_EQ(g.arena_offset(), 1u << 20);
  EXPECT_EQ(proto::BlobKeyOf(out.grants(1).blob()), Key(3, 4));
  EXPECT_EQ(out.grants(1).chunk_checksums_size(), 1);
}

core::BlobInfo SampleInfo() {
  core::BlobInfo info;
  info.key = Key(0xAB, 0xCD);
  info.namespace_hash = {.hi = 1, .lo = 2};
  info.tenant = "acme";
  info.model = "org/model-7b";
  info.layout = SmallLayout();
  info.parent = core::BlobParent{.key = Key(0x11, 0x22), .pages = 3};
  info.start_hash = {.hi = 3, .lo = 4};
  info.first_page = 3;
  info.pages = 2;
  info.bytes = 2 * SmallLayout().BytesPerPage();
  info.blob_checksum = 0xFEEDFACE;
  info.tiers = {report::Tier::kDram};
  info.extent = {.offset = 0, .length = 65536};
  info.pages_in_index = 1;
  info.leases = 2;
  info.pinned = true;
  info.created = absl::FromUnixMillis(1000);
  info.last_access = absl::FromUnixMillis(2000);
  info.hits = 5;
  info.tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  return info;
}

TEST(BlobInfoToProtoTest, CopiesEveryField) {
  const core::BlobInfo info = SampleInfo();
  v1::BlobInfo out;
  BlobInfoToProto(info, &out);
  EXPECT_EQ(proto::BlobKeyOf(out.key()), info.key);
  ASSERT_OK_AND_ASSIGN(radix::Namespace ns, proto::NamespaceFromProto(out.ns(), "ns"));
  EXPECT_EQ(ns.tenant(), "acme");
  EXPECT_EQ(ns.model(), "org/model-7b");
  EXPECT_EQ(ns.layout(), SmallLayout());
  EXPECT_EQ(proto::PrefixHashFromProto(out.namespace_hash()), info.namespace_hash);
  ASSERT_TRUE(out.has_parent());
  EXPECT_EQ(proto::BlobKeyOf(out.parent().key()), Key(0x11, 0x22));
  EXPECT_EQ(out.parent().pages(), 3u);
  EXPECT_EQ(proto::PrefixHashFromProto(out.start_hash()), info.start_hash);
  EXPECT_EQ(out.first_page(), 3u);
  EXPECT_EQ(out.pages(), 2u);
  EXPECT_EQ(out.bytes(), info.bytes);
  EXPECT_EQ(out.checksum(), 0xFEEDFACEu);
  ASSERT_EQ(out.tiers_size(), 1);
  EXPECT_EQ(out.tiers(0), v1::TIER_DRAM);
  EXPECT_EQ(out.pages_indexed(), 1u);
  EXPECT_EQ(out.leases(), 2u);
  EXPECT_TRUE(out.pinned());
  EXPECT_EQ(out.created_unix_ms(), 1000u);
  EXPECT_EQ(out.last_access_unix_ms(), 2000u);
  EXPECT_EQ(out.hits(), 5u);
  // 4 bytes a token, little-endian.
  ASSERT_EQ(out.tokens().size(), info.tokens.size() * 4);
  EXPECT_EQ(out.tokens().substr(0, 8), std::string("\x01\0\0\0\x02\0\0\0", 8));
  ASSERT_OK_AND_ASSIGN(proto::TokenView tokens, proto::TokensFromProto(out.tokens(), "tokens"));
  EXPECT_EQ(std::vector<uint32_t>(tokens.span().begin(), tokens.span().end()), info.tokens);
}

TEST(BlobInfoToProtoTest, NoParentNoTokens) {
  core::BlobInfo info = SampleInfo();
  info.parent.reset();
  info.tokens.clear();
  v1::BlobInfo out;
  BlobInfoToProto(info, &out);
  EXPECT_FALSE(out.has_parent());
  EXPECT_TRUE(out.tokens().empty());
}

TEST(ListToProtoTest, KeepsOrderAndToken) {
  core::ListReply reply;
  reply.blobs.push_back(SampleInfo());
  reply.blobs.push_back(SampleInfo());
  reply.blobs[1].key = Key(0xAC, 0);
  reply.blobs[0].tokens.clear();
  reply.blobs[1].tokens.clear();
  reply.next_page_token = "v1:abc";
  v1::ListResponse out;
  ListToProto(reply, &out);
  ASSERT_EQ(out.blobs_size(), 2);
  EXPECT_EQ(proto::BlobKeyOf(out.blobs(0).key()), Key(0xAB, 0xCD));
  EXPECT_EQ(proto::BlobKeyOf(out.blobs(1).key()), Key(0xAC, 0));
  EXPECT_EQ(out.next_page_token(), "v1:abc");
}

TEST(EvictToProtoTest, CopiesFields) {
  v1::EvictResponse out;
  EvictToProto(core::EvictReply{.bytes_freed = 1 << 20, .pages_evicted = 9, .blobs_unlinked = 2},
               &out);
  EXPECT_EQ(out.bytes_freed(), 1u << 20);
  EXPECT_EQ(out.pages_evicted(), 9u);
  EXPECT_EQ(out.blobs_unlinked(), 2u);
}

}  // namespace
}  // namespace strata::store::rpc
