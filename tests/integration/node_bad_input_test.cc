// Bad input sent raw over gRPC to a real strata-node: each request gets its precise status
// code (docs/api.md), and the node keeps serving afterwards (a Health call succeeds).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/limits.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/status_convert.h"
#include "strata/testing/node_process.h"
#include "strata/testing/shared_node_test.h"
#include "strata/testing/wire_requests.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_bad_input_test {

using strata::testing::BeginPutFor;
using strata::testing::Call;
using strata::testing::ContextWithDeadline;
using strata::testing::SharedNodeTest;
using strata::testing::TinyNamespace;
using strata::testing::TokenRun;
using strata::testing::ToWire;

namespace {

class NodeBadInputTest : public SharedNodeTest {
 protected:
  // Every test ends by checking the node still answers.
  void TearDown() override {
    if (node_ == nullptr) return;
    v1::HealthResponse health;
    EXPECT_OK(Call(store_->Health(ContextWithDeadline().get(), v1::HealthRequest(), &health)));
    EXPECT_EQ(health.state(), v1::SERVING_STATE_SERVING);
  }

  absl::Status Match(const v1::MatchRequest& request) {
    v1::MatchResponse response;
    return Call(store_->Match(ContextWithDeadline().get(), request, &response));
  }
  absl::Status BeginPut(const v1::BeginPutRequest& request) {
    v1::BeginPutResponse response;
    const absl::Status status =
        Call(store_->BeginPut(ContextWithDeadline().get(), request, &response));
    if (status.ok() && response.put_id() != 0) {  // never leave a reservation behind
      v1::AbortPutRequest abort;
      abort.set_put_id(response.put_id());
      v1::AbortPutResponse aborted;
      (void)store_->AbortPut(ContextWithDeadline().get(), abort, &aborted);
    }
    return status;
  }
  absl::Status Read(const v1::ReadRequest& request) {
    v1::ReadResponse response;
    return Call(store_->Read(ContextWithDeadline().get(), request, &response));
  }
  absl::Status List(const v1::ListRequest& request) {
    v1::ListResponse response;
    return Call(store_->List(ContextWithDeadline().get(), request, &response));
  }
};

// The message must start with the wire field's path.
void ExpectInvalidAt(const absl::Status& status, const std::string& field) {
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(status.message(), field)) << status << " should name " << field;
}

v1::MatchRequest MatchIn(const v1::Namespace& ns) {
  v1::MatchRequest request;
  *request.mutable_ns() = ns;
  proto::TokensToProto(std::vector<uint32_t>{1}, request.mutable_tokens());
  return request;
}

TEST_F(NodeBadInputTest, MalformedNamespacesAreInvalidArgumentNamingTheField) {
  const v1::Namespace good = ToWire(TinyNamespace("bad-ns"));
  ExpectInvalidAt(Match(v1::MatchRequest()), "ns: missing");
  struct Case {
    std::string field;
    void (*mutate)(v1::Namespace*);
  };
  const std::vector<Case> cases = {
      {"ns.tenant", [](v1::Namespace* ns) { ns->set_tenant("has space"); }},
      {"ns.tenant", [](v1::Namespace* ns) { ns->set_tenant(std::string(129, 'a')); }},
      {"ns.tenant", [](v1::Namespace* ns) { ns->set_tenant(""); }},
      // Not UTF-8: refused by the node's check, not by protobuf's parse.
      {"ns.tenant", [](v1::Namespace* ns) { ns->set_tenant("t\xff\xfe"); }},
      {"ns.model", [](v1::Namespace* ns) { ns->set_model("caf\xc3"); }},
      {"ns.model", [](v1::Namespace* ns) { ns->set_model(""); }},
      {"ns.model", [](v1::Namespace* ns) { ns->set_model("tab\there"); }},
      {"ns.layout: missing", [](v1::Namespace* ns) { ns->clear_layout(); }},
      {"ns.layout.dtype: missing",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_dtype(v1::DTYPE_UNSPECIFIED); }},
      {"ns.layout.dtype: unknown value 99",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_dtype(static_cast<v1::DType>(99)); }},
      {"ns.layout.format: unknown value 7",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_format(static_cast<v1::KvFormat>(7)); }},
      {"ns.layout: KvLayout.num_layers = 0",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_num_layers(0); }},
      {"ns.layout: KvLayout.num_layers = 1025",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_num_layers(1025); }},
      {"ns.layout: KvLayout.page_tokens = 0",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_page_tokens(0); }},
      {"ns.layout: KvLayout.tp_rank = 1",
       [](v1::Namespace* ns) { ns->mutable_layout()->set_tp_rank(1); }},  // world 1
      {"ns.layout: KvLayout.num_kv_heads = 2",
       [](v1::Namespace* ns) {
         ns->mutable_layout()->set_format(v1::KV_FORMAT_MLA_LATENT);
         ns->mutable_layout()->set_num_kv_heads(2);
       }},
  };
  for (const Case& c : cases) {
    v1::Namespace ns = good;
    c.mutate(&ns);
    ExpectInvalidAt(Match(MatchIn(ns)), c.field);
    v1::BeginPutRequest put = BeginPutFor(TinyNamespace("bad-ns"), TokenRun(0, 4));
    *put.mutable_ns() = ns;
    ExpectInvalidAt(BeginPut(put), c.field);
  }
}

TEST_F(NodeBadInputTest, OversizedMessageIsResourceExhaustedFromGrpc) {
  // 9M tokens of 4 bytes: 36 MiB, over kMaxMessageBytes (32 MiB). Sent on a channel without
  // a send limit, so the node's receive limit is what refuses it.
  v1::MatchRequest huge = MatchIn(ToWire(TinyNamespace("bad-size")));
  huge.mutable_tokens()->assign((size_t{9} << 20) * proto::kTokenIdBytes, '\xff');
  ASSERT_GT(huge.ByteSizeLong(), static_cast<size_t>(proto::kMaxMessageBytes));
  auto unlimited = v1::Store::NewStub(node_->Channel(/*with_limits=*/false));
  v1::MatchResponse response;
  const absl::Status status =
      Call(unlimited->Match(ContextWithDeadline(absl::Seconds(30)).get(), huge, &response));
  EXPECT_CODE(status, absl::StatusCode::kResourceExhausted);
  // With strata's limits the client refuses to send it at all, same code.
  EXPECT_CODE(Call(store_->Match(ContextWithDeadline(absl::Seconds(30)).get(), huge, &response)),
              absl::StatusCode::kResourceExhausted);
}

TEST_F(NodeBadInputTest, CountsOverTheWireLimitsAreInvalidArgument) {
  const radix::Namespace ns = TinyNamespace("bad-count");
  // kMaxTokensPerRequest + 1 tokens of 4 bytes: an 8 MiB message, well under the size limit.
  v1::MatchRequest match = MatchIn(ToWire(ns));
  match.mutable_tokens()->assign((proto::kMaxTokensPerRequest + 1) * proto::kTokenIdBytes, '\x01');
  ExpectInvalidAt(Match(match), "tokens: 2097153 entries exceed the limit of 2097152");

  v1::BeginPutRequest put = BeginPutFor(ns, TokenRun(0, 4));
  put.mutable_chunk_checksums()->Resize(proto::kMaxChunksPerBlob + 1, 0);
  ExpectInvalidAt(BeginPut(put), "chunk_checksums: 1048577 entries exceed");

  v1::ReadRequest read;
  *read.mutable_ns() = ToWire(ns);
  for (size_t i = 0; i <= proto::kMaxReadRanges; ++i) {
    v1::ReadRange* range = read.add_ranges();
    range->mutable_blob()->set_hi(i + 1);
    range->set_num_pages(1);
    range->set_layer_end(1);
  }
  ExpectInvalidAt(Read(read), "ranges: 4097 entries exceed the limit of 4096");

  v1::ReadRequest chunks;
  *chunks.mutable_ns() = ToWire(ns);
  v1::ReadRange* wide = chunks.add_ranges();
  wide->mutable_blob()->set_hi(1);
  wide->set_num_pages(1 << 20);
  wide->set_layer_end(2);
  ExpectInvalidAt(Read(chunks), "ranges: cover more than 1048576 chunks");
}

TEST_F(NodeBadInputTest, PutShapeErrorsAreInvalidArgument) {
  const radix::Namespace ns = TinyNamespace("bad-put");
  // 5 tokens with 4-token pages: not whole pages.
  v1::BeginPutRequest unaligned = BeginPutFor(ns, TokenRun(0, 8));
  proto::TokensToProto(TokenRun(0, 5), unaligned.mutable_tokens());
  EXPECT_CODE(BeginPut(unaligned), absl::StatusCode::kInvalidArgument);
  v1::BeginPutRequest empty = BeginPutFor(ns, TokenRun(0, 4));
  empty.clear_tokens();
  EXPECT_CODE(BeginPut(empty), absl::StatusCode::kInvalidArgument);
  v1::BeginPutRequest wrong_bytes = BeginPutFor(ns, TokenRun(0, 4));
  wrong_bytes.set_bytes(wrong_bytes.bytes() + 1);
  EXPECT_CODE(BeginPut(wrong_bytes), absl::StatusCode::kInvalidArgument);
  v1::BeginPutRequest wrong_checksums = BeginPutFor(ns, TokenRun(0, 4));
  wrong_checksums.add_chunk_checksums(0);
  EXPECT_CODE(BeginPut(wrong_checksums), absl::StatusCode::kInvalidArgument);
  v1::BeginPutRequest parent_without_key = BeginPutFor(ns, TokenRun(0, 4));
  parent_without_key.mutable_parent()->set_pages(1);
  ExpectInvalidAt(BeginPut(parent_without_key), "parent.key: missing");
}

// Token fields are bytes of 4-byte little-endian ids: any other length is refused before the
// engine sees the request, with a message naming the field and the length.
TEST_F(NodeBadInputTest, TokenBytesNotAMultipleOfFourAreInvalidArgument) {
  const radix::Namespace ns = TinyNamespace("bad-token-bytes");
  // Make the namespace known, so a well-formed Match would answer OK.
  ASSERT_OK(BeginPut(BeginPutFor(ns, TokenRun(0, 4))));
  for (const size_t length : {1, 2, 3, 5, 17, 4 * 4 + 3}) {
    const std::string expected =
        "tokens: " + std::to_string(length) + " bytes is not a whole number of 4-byte token ids";
    v1::MatchRequest match = MatchIn(ToWire(ns));
    match.set_tokens(std::string(length, '\x01'));
    EXPECT_EQ(Match(match), absl::InvalidArgumentError(expected));

    v1::BeginPutRequest put = BeginPutFor(ns, TokenRun(100, 4));
    put.set_tokens(std::string(length, '\x01'));
    EXPECT_EQ(BeginPut(put), absl::InvalidArgumentError(expected));
  }
  // The node still answers well-formed requests in the same namespace.
  EXPECT_OK(Match(MatchIn(ToWire(ns))));
  v1::BeginPutRequest fine = BeginPutFor(ns, TokenRun(200, 4));
  EXPECT_OK(BeginPut(fine));
}

TEST_F(NodeBadInputTest, UnknownNamespaceIsNotFound) {
  EXPECT_CODE(Match(MatchIn(ToWire(TinyNamespace("never-seen")))), absl::StatusCode::kNotFound);
}

TEST_F(NodeBadInputTest, MalformedReadRangesAreInvalidArgument) {
  const v1::Namespace ns = ToWire(TinyNamespace("bad-read"));
  v1::ReadRequest none;
  *none.mutable_ns() = ns;
  ExpectInvalidAt(Read(none), "ranges: missing");
  v1::ReadRequest base = none;
  v1::ReadRange* range = base.add_ranges();
  range->mutable_blob()->set_lo(9);
  range->set_num_pages(1);
  range->set_layer_end(1);
  v1::ReadRequest no_blob = base;
  no_blob.mutable_ranges(0)->clear_blob();
  ExpectInvalidAt(Read(no_blob), "ranges[0].blob: missing");
  v1::ReadRequest no_pages = base;
  no_pages.mutable_ranges(0)->set_num_pages(0);
  ExpectInvalidAt(Read(no_pages), "ranges[0].num_pages");
  v1::ReadRequest no_layers = base;
  no_layers.mutable_ranges(0)->set_layer_begin(1);
  ExpectInvalidAt(Read(no_layers), "ranges[0].layer_end");
  v1::ReadRequest no_ns = base;
  no_ns.clear_ns();
  ExpectInvalidAt(Read(no_ns), "ns: missing");
}

TEST_F(NodeBadInputTest, BadPageTokensAreInvalidArgument) {
  for (const std::string& token : {std::string("garbage"), std::string("v1:"), std::string("v1:zz"),
                                   "v1:" + std::string(31, 'a'), "v1:" + std::string(33, 'a'),
                                   "v2:" + std::string(32, 'a'), std::string("\xff\x00\x01", 3)}) {
    v1::ListRequest request;
    request.set_page_token(token);
    EXPECT_CODE(List(request), absl::StatusCode::kInvalidArgument) << token;
  }
  v1::ListRequest bad_filter;
  bad_filter.mutable_ns()->set_tenant("only-a-tenant");
  ExpectInvalidAt(List(bad_filter), "ns");
}

TEST_F(NodeBadInputTest, MissingKeysAndIdsAreInvalidArgumentUnknownOnesNotFound) {
  v1::StatResponse info;
  ExpectInvalidAt(Call(store_->Stat(ContextWithDeadline().get(), v1::StatRequest(), &info)),
                  "key: missing");
  v1::DeleteResponse deleted;
  ExpectInvalidAt(Call(store_->Delete(ContextWithDeadline().get(), v1::DeleteRequest(), &deleted)),
                  "key: missing");
  v1::PinResponse pinned;
  ExpectInvalidAt(Call(store_->Pin(ContextWithDeadline().get(), v1::PinRequest(), &pinned)),
                  "key: missing");
  v1::UnpinResponse unpinned;
  ExpectInvalidAt(Call(store_->Unpin(ContextWithDeadline().get(), v1::UnpinRequest(), &unpinned)),
                  "key: missing");
  v1::CommitPutResponse committed;
  ExpectInvalidAt(
      Call(store_->CommitPut(ContextWithDeadline().get(), v1::CommitPutRequest(), &committed)),
      "put_id: missing");
  v1::AbortPutResponse aborted;
  ExpectInvalidAt(
      Call(store_->AbortPut(ContextWithDeadline().get(), v1::AbortPutRequest(), &aborted)),
      "put_id: missing");
  v1::RenewLeaseResponse renewed;
  ExpectInvalidAt(
      Call(store_->RenewLease(ContextWithDeadline().get(), v1::RenewLeaseRequest(), &renewed)),
      "lease_id: missing");
  v1::ReleaseResponse released;
  ExpectInvalidAt(
      Call(store_->Release(ContextWithDeadline().get(), v1::ReleaseRequest(), &released)),
      "lease_id: missing");

  v1::CommitPutRequest unknown_put;
  unknown_put.set_put_id(0x5EED);
  EXPECT_CODE(Call(store_->CommitPut(ContextWithDeadline().get(), unknown_put, &committed)),
              absl::StatusCode::kNotFound);
  v1::StatRequest unknown_key;
  unknown_key.mutable_key()->set_lo(77);
  EXPECT_CODE(Call(store_->Stat(ContextWithDeadline().get(), unknown_key, &info)),
              absl::StatusCode::kNotFound);
}

TEST_F(NodeBadInputTest, UnknownTierIsInvalidArgument) {
  v1::EvictRequest evict;
  evict.set_tier(static_cast<v1::Tier>(42));
  evict.set_bytes(1);
  v1::EvictResponse evicted;
  ExpectInvalidAt(Call(admin_->Evict(ContextWithDeadline().get(), evict, &evicted)),
                  "tier: unknown value 42");
}

// Raw bytes through a generic stub: a method the node does not have, and a payload that
// is not a protobuf message.
TEST_F(NodeBadInputTest, RawCallsUnknownMethodAndUnparsablePayload) {
  grpc::GenericStub generic(node_->Channel());
  const auto raw_call = [&](const std::string& method, const std::string& payload) {
    grpc::Slice slice(payload);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    absl::Notification done;
    grpc::Status result;
    auto context = ContextWithDeadline();
    generic.UnaryCall(context.get(), method, grpc::StubOptions(), &request, &response,
                      [&](grpc::Status s) {
                        result = std::move(s);
                        done.Notify();
                      });
    done.WaitForNotification();
    return Call(result);
  };
  EXPECT_CODE(raw_call("/strata.v1.Store/Rebuild", ""), absl::StatusCode::kUnimplemented);
  EXPECT_CODE(raw_call("/strata.v2.Store/Match", ""), absl::StatusCode::kUnimplemented);
  // A truncated length-delimited field: gRPC's own deserializer refuses it before strata
  // sees it, with INTERNAL (gRPC C++'s code for an unparsable request; not a strata bug).
  EXPECT_CODE(raw_call("/strata.v1.Store/Match", std::string("\x12\xff", 2)),
              absl::StatusCode::kInternal);
  // An empty payload is a valid, empty MatchRequest: the node's own check answers.
  ExpectInvalidAt(raw_call("/strata.v1.Store/Match", ""), "ns: missing");

  // Hand-encoded requests whose tokens field (a bytes field) holds 7 bytes: the node parses
  // them and refuses the length.
  const std::string ns = ToWire(TinyNamespace("raw-tokens")).SerializeAsString();
  ASSERT_LT(ns.size(), 128u);  // a one-byte length prefix
  const auto request_with_seven_token_bytes = [&](char tokens_tag) {
    std::string payload;
    payload.push_back('\x0a');  // ns: field 1, length-delimited
    payload.push_back(static_cast<char>(ns.size()));
    payload.append(ns);
    payload.push_back(tokens_tag);
    payload.push_back('\x07');  // 7 bytes: one token id and 3 stray bytes
    payload.append(std::string("\x01\x00\x00\x00\x02\x00\x00", 7));
    return payload;
  };
  // MatchRequest: tokens = field 2 (tag 0x12).
  EXPECT_EQ(
      raw_call("/strata.v1.Store/Match", request_with_seven_token_bytes('\x12')),
      absl::InvalidArgumentError("tokens: 7 bytes is not a whole number of 4-byte token ids"));
  // BeginPutRequest: tokens = field 3 (tag 0x1a).
  EXPECT_EQ(
      raw_call("/strata.v1.Store/BeginPut", request_with_seven_token_bytes('\x1a')),
      absl::InvalidArgumentError("tokens: 7 bytes is not a whole number of 4-byte token ids"));
}

}  // namespace
}  // namespace strata::integration::node_bad_input_test
