#include "strata/store/rpc/request_convert.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/prefix_hash.h"

namespace strata::store::rpc {
namespace {

radix::Namespace SmallNamespace() {
  return radix::Namespace::Create("acme", "org/m",
                                  radix::KvLayout{.num_layers = 4,
                                                  .num_kv_heads = 2,
                                                  .head_dim = 8,
                                                  .dtype = radix::DType::kFloat16,
                                                  .page_tokens = 4,
                                                  .format = radix::KvFormat::kKeyValue,
                                                  .tp_rank = 0,
                                                  .tp_world = 1})
      .value();
}

void ExpectInvalid(const absl::Status& status, std::string_view prefix) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
}

TEST(IdFromProtoTest, ZeroIsMissing) {
  ASSERT_OK_AND_ASSIGN(uint64_t id, IdFromProto(7, "put_id"));
  EXPECT_EQ(id, 7u);
  ExpectInvalid(IdFromProto(0, "put_id").status(), "put_id: missing");
  EXPECT_EQ(TtlFromProto(0), absl::ZeroDuration());
  EXPECT_EQ(TtlFromProto(1500), absl::Milliseconds(1500));
}

v1::BeginPutRequest ValidPut() {
  v1::BeginPutRequest request;
  proto::ToProto(SmallNamespace(), request.mutable_ns());
  proto::TokensToProto(std::vector<radix::TokenId>{0, 1, 2, 3, 4, 5, 6, 7},
                       request.mutable_tokens());
  request.set_bytes(2 * SmallNamespace().layout().BytesPerPage());
  for (int c = 0; c < 8; ++c) request.add_chunk_checksums(c);
  return request;
}

TEST(PutRequestFromProtoTest, ViewsTokensAndChecksums) {
  v1::BeginPutRequest request = ValidPut();
  request.mutable_parent()->mutable_key()->set_hi(5);
  request.mutable_parent()->set_pages(3);
  request.mutable_key()->set_lo(9);
  ASSERT_OK_AND_ASSIGN(BeginPutArgs args, PutRequestFromProto(request));
  EXPECT_EQ(args.ns, SmallNamespace());
  ASSERT_TRUE(args.put.parent.has_value());
  EXPECT_EQ(args.put.parent->key.hash.hi, 5u);
  EXPECT_EQ(args.put.parent->pages, 3u);
  EXPECT_EQ(args.put.tokens.size(), 8u);
  EXPECT_EQ(static_cast<const void*>(args.put.tokens.data()),
            static_cast<const void*>(request.tokens().data()));  // a view, not a copy
  EXPECT_FALSE(args.tokens.copied());
  EXPECT_EQ(args.put.tokens[7], 7u);
  EXPECT_EQ(args.put.checksums.size(), 8u);
  EXPECT_EQ(args.put.bytes, request.bytes());
  ASSERT_TRUE(args.put.key.has_value());
  EXPECT_EQ(args.put.key->hash.lo, 9u);
}

TEST(PutRequestFromProtoTest, AbsentOrZeroKeyAndNoParent) {
  v1::BeginPutRequest request = ValidPut();
  ASSERT_OK_AND_ASSIGN(BeginPutArgs args, PutRequestFromProto(request));
  EXPECT_FALSE(args.put.parent.has_value());
  EXPECT_FALSE(args.put.key.has_value());
  request.mutable_key();  // present, all zero: the reserved "unset" key
  ASSERT_OK_AND_ASSIGN(BeginPutArgs zero, PutRequestFromProto(request));
  EXPECT_FALSE(zero.put.key.has_value());
}

TEST(PutRequestFromProtoTest, SegmentStartNeedsItsHashAndAPage) {
  v1::BeginPutRequest request = ValidPut();
  EXPECT_FALSE(PutRequestFromProto(request)->put.segment_start.has_value());
  request.mutable_segment_start()->set_pages(8);
  ExpectInvalid(PutRequestFromProto(request).status(), "segment_start.hash: missing");
  request.mutable_segment_start()->mutable_hash()->set_hi(1);
  request.mutable_segment_start()->mutable_hash()->set_lo(2);
  ASSERT_OK_AND_ASSIGN(BeginPutArgs args, PutRequestFromProto(request));
  EXPECT_EQ(args.put.segment_start,
            (core::SegmentStart{.hash = radix::PrefixHash{1, 2}, .pages = 8}));
  request.mutable_segment_start()->set_pages(0);
  ExpectInvalid(PutRequestFromProto(request).status(), "segment_start.pages: must be >= 1");
  // A segment start with a parent is the engine's to refuse (PutTable::Validate).
}

TEST(PutRequestFromProtoTest, RejectsMalformed) {
  v1::BeginPutRequest no_ns = ValidPut();
  no_ns.clear_ns();
  ExpectInvalid(PutRequestFromProto(no_ns).status(), "ns: missing");

  v1::BeginPutRequest bad_tenant = ValidPut();
  bad_tenant.mutable_ns()->set_tenant("no spaces");
  ExpectInvalid(PutRequestFromProto(bad_tenant).status(), "ns.tenant");

  v1::BeginPutRequest parent_without_key = ValidPut();
  parent_without_key.mutable_parent()->set_pages(2);
  ExpectInvalid(PutRequestFromProto(parent_without_key).status(), "parent.key: missing");

  v1::BeginPutRequest ragged_tokens = ValidPut();
  ragged_tokens.mutable_tokens()->resize(31);
  ExpectInvalid(PutRequestFromProto(ragged_tokens).status(),
                "tokens: 31 bytes is not a whole number of 4-byte token ids");

  v1::BeginPutRequest too_many_tokens = ValidPut();
  too_many_tokens.mutable_tokens()->assign((proto::kMaxTokensPerRequest + 1) * 4, '\0');
  ExpectInvalid(PutRequestFromProto(too_many_tokens).status(), "tokens: 2097153 entries");

  v1::BeginPutRequest too_many_checksums = ValidPut();
  too_many_checksums.mutable_chunk_checksums()->Resize(proto::kMaxChunksPerBlob + 1, 0);
  ExpectInvalid(PutRequestFromProto(too_many_checksums).status(), "chunk_checksums: 1048577");
}

v1::ReadRange* AddRange(v1::ReadRequest* request, uint32_t pages, uint32_t layer_begin,
                        uint32_t layer_end) {
  v1::ReadRange* range = request->add_ranges();
  range->mutable_blob()->set_hi(1);
  range->set_first_page(0);
  range->set_num_pages(pages);
  range->set_layer_begin(layer_begin);
  range->set_layer_end(layer_end);
  return range;
}

v1::ReadRequest ReadWithNs() {
  v1::ReadRequest request;
  proto::ToProto(SmallNamespace(), request.mutable_ns());
  return request;
}

TEST(ReadRequestFromProtoTest, ConvertsRangesAndTtl) {
  v1::ReadRequest request = ReadWithNs();
  AddRange(&request, 2, 0, 4)->set_first_page(1);
  AddRange(&request, 1, 3, 4);
  request.set_lease_ttl_ms(2500);
  ASSERT_OK_AND_ASSIGN(ReadArgs args, ReadRequestFromProto(request));
  EXPECT_EQ(args.ns, SmallNamespace());
  EXPECT_EQ(args.ttl, absl::Milliseconds(2500));
  ASSERT_EQ(args.ranges.size(), 2u);
  EXPECT_EQ(args.ranges[0].blob.hash.hi, 1u);
  EXPECT_EQ(args.ranges[0].first_page, 1u);
  EXPECT_EQ(args.ranges[0].num_pages, 2u);
  EXPECT_EQ(args.ranges[0].layer_end, 4u);
  EXPECT_EQ(args.ranges[1].layer_begin, 3u);
}

TEST(ReadRequestFromProtoTest, RejectsMalformedRanges) {
  ExpectInvalid(ReadRequestFromProto(ReadWithNs()).status(), "ranges: missing");

  v1::ReadRequest no_ns;
  AddRange(&no_ns, 1, 0, 1);
  ExpectInvalid(ReadRequestFromProto(no_ns).status(), "ns: missing");

  v1::ReadRequest no_blob = ReadWithNs();
  AddRange(&no_blob, 1, 0, 1);
  AddRange(&no_blob, 1, 0, 1)->clear_blob();
  ExpectInvalid(ReadRequestFromProto(no_blob).status(), "ranges[1].blob: missing");

  v1::ReadRequest no_pages = ReadWithNs();
  AddRange(&no_pages, 0, 0, 1);
  ExpectInvalid(ReadRequestFromProto(no_pages).status(), "ranges[0].num_pages: must be >= 1");

  v1::ReadRequest no_layers = ReadWithNs();
  AddRange(&no_layers, 1, 2, 2);
  ExpectInvalid(ReadRequestFromProto(no_layers).status(),
                "ranges[0].layer_end: 2 must be > layer_begin 2");
}

TEST(ReadRequestFromProtoTest, EnforcesRangeAndChunkLimits) {
  v1::ReadRequest too_many = ReadWithNs();
  for (size_t i = 0; i <= proto::kMaxReadRanges; ++i) AddRange(&too_many, 1, 0, 1);
  ExpectInvalid(ReadRequestFromProto(too_many).status(), "ranges: 4097 entries exceed");

  // Exactly kMaxChunksPerRead chunks: allowed; one more: refused.
  v1::ReadRequest at_limit = ReadWithNs();
  AddRange(&at_limit, 1024, 0, 512);
  AddRange(&at_limit, 512, 0, 1024);
  EXPECT_OK(ReadRequestFromProto(at_limit));
  AddRange(&at_limit, 1, 0, 1);
  ExpectInvalid(ReadRequestFromProto(at_limit).status(), "ranges: cover more than 1048576");

  // Products near 2^64 do not wrap around.
  v1::ReadRequest huge = ReadWithNs();
  AddRange(&huge, UINT32_MAX, 0, UINT32_MAX);
  ExpectInvalid(ReadRequestFromProto(huge).status(), "ranges: cover more than");
}

TEST(ListRequestFromProtoTest, Filters) {
  v1::ListRequest by_ns;
  proto::ToProto(SmallNamespace(), by_ns.mutable_ns());
  by_ns.set_page_token("v1:x");
  by_ns.set_limit(7);
  ASSERT_OK_AND_ASSIGN(core::ListRequest list, ListRequestFromProto(by_ns));
  ASSERT_TRUE(list.namespace_hash.has_value());
  EXPECT_EQ(*list.namespace_hash, radix::NamespaceHash(SmallNamespace()));
  EXPECT_EQ(list.page_token, "v1:x");
  EXPECT_EQ(list.limit, 7u);

  v1::ListRequest by_hash;
  by_hash.mutable_namespace_hash()->set_hi(3);
  ASSERT_OK_AND_ASSIGN(core::ListRequest hashed, ListRequestFromProto(by_hash));
  EXPECT_EQ(hashed.namespace_hash, (radix::PrefixHash{.hi = 3, .lo = 0}));

  ASSERT_OK_AND_ASSIGN(core::ListRequest all, ListRequestFromProto(v1::ListRequest{}));
  EXPECT_FALSE(all.namespace_hash.has_value());

  v1::ListRequest bad_ns;
  bad_ns.mutable_ns()->set_tenant("acme");
  ExpectInvalid(ListRequestFromProto(bad_ns).status(), "ns.");
}

}  // namespace
}  // namespace strata::store::rpc
