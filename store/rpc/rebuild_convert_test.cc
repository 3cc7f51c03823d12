// The conversions of tiers and rebuild from text: TEXT match segments with their tokens (and
// the TEXT-token truncation), Prefetch, RequestRebuild, PullRebuildTasks (requests and
// tasks), the SSD / TEXT / rebuild-queue statistics of Tiers, and Evict's new counts.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

#include "store/rpc/convert_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/namespace.h"
#include "strata/store/rpc/reply_convert.h"
#include "strata/store/rpc/request_convert.h"

namespace strata::store::rpc {
namespace {

using convert_test::Key;
using convert_test::kNow;

radix::Namespace RebuildNamespace() {
  return radix::Namespace::Create("acme", "org/m",
                                  radix::KvLayout{.num_layers = 2,
                                                  .num_kv_heads = 1,
                                                  .head_dim = 8,
                                                  .dtype = radix::DType::kBFloat16,
                                                  .page_tokens = 2,
                                                  .format = radix::KvFormat::kKeyValue,
                                                  .tp_rank = 0,
                                                  .tp_world = 1})
      .value();
}

std::vector<radix::TokenId> TokensOf(const std::string& bytes) {
  absl::StatusOr<proto::TokenView> view = proto::TokensFromProto(bytes, "tokens");
  EXPECT_TRUE(view.ok()) << view.status();
  if (!view.ok()) return {};
  return std::vector<radix::TokenId>(view->span().begin(), view->span().end());
}

void ExpectInvalidMessage(const absl::Status& status, std::string_view message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(std::string(status.message()), std::string(message));
}

TEST(PrefetchRequestFromProtoTest, NamespaceAndTokens) {
  v1::PrefetchRequest request;
  proto::ToProto(RebuildNamespace(), request.mutable_ns());
  proto::TokensToProto(std::vector<radix::TokenId>{1, 2, 3, 4, 5}, request.mutable_tokens());
  ASSERT_OK_AND_ASSIGN(PrefetchArgs args, PrefetchRequestFromProto(request));
  EXPECT_EQ(args.ns, RebuildNamespace());
  EXPECT_EQ(std::vector<radix::TokenId>(args.tokens.span().begin(), args.tokens.span().end()),
            (std::vector<radix::TokenId>{1, 2, 3, 4, 5}));

  request.mutable_tokens()->push_back('\x01');
  ExpectInvalidMessage(PrefetchRequestFromProto(request).status(),
                       "tokens: 21 bytes is not a whole number of 4-byte token ids");
  v1::PrefetchRequest no_ns;
  EXPECT_EQ(PrefetchRequestFromProto(no_ns).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequestRebuildFromProtoTest, KeyRequired) {
  v1::RequestRebuildRequest request;
  ExpectInvalidMessage(RequestRebuildFromProto(request).status(),
                       "key: missing (the all-zero blob key is reserved for unset)");
  request.mutable_key()->set_hi(7);
  request.mutable_key()->set_lo(8);
  request.set_with_prefix(true);
  ASSERT_OK_AND_ASSIGN(RebuildRequestArgs args, RequestRebuildFromProto(request));
  EXPECT_EQ(args.key, Key(7, 8));
  EXPECT_TRUE(args.with_prefix);
}

TEST(PullRebuildTasksFromProtoTest, Limits) {
  v1::PullRebuildTasksRequest request;
  ExpectInvalidMessage(PullRebuildTasksFromProto(request).status(), "max_tasks: must be >= 1");
  request.set_max_tasks(proto::kMaxRebuildTasksPerPull + 1);
  ExpectInvalidMessage(PullRebuildTasksFromProto(request).status(),
                       "max_tasks: 1025 exceeds the limit of 1024");
  request.set_max_tasks(proto::kMaxRebuildTasksPerPull);
  request.set_wait_ms(proto::kMaxRebuildWaitMs + 1);
  ExpectInvalidMessage(PullRebuildTasksFromProto(request).status(),
                       "wait_ms: 60001 exceeds the limit of 60000");
  request.set_wait_ms(proto::kMaxRebuildWaitMs);
  ASSERT_OK_AND_ASSIGN(PullRebuildTasksArgs args, PullRebuildTasksFromProto(request));
  EXPECT_EQ(args.max_tasks, 1024u);
  EXPECT_EQ(args.wait, absl::Seconds(60));
  request.set_max_tasks(1);
  request.set_wait_ms(0);
  ASSERT_OK_AND_ASSIGN(args, PullRebuildTasksFromProto(request));
  EXPECT_EQ(args.wait, absl::ZeroDuration());
}

TEST(RebuildRepliesToProtoTest, PrefetchAndRequestRebuild) {
  v1::PrefetchResponse prefetch;
  PrefetchToProto(
      core::PrefetchReply{
          .matched_pages = 9, .resident_pages = 4, .promotions = 2, .rebuilds_queued = 3},
      &prefetch);
  EXPECT_EQ(prefetch.matched_pages(), 9u);
  EXPECT_EQ(prefetch.resident_pages(), 4u);
  EXPECT_EQ(prefetch.promotions(), 2u);
  EXPECT_EQ(prefetch.rebuilds_queued(), 3u);

  v1::RequestRebuildResponse rebuild;
  RebuildRequestToProto(core::RebuildRequestReply{.queued = 5, .already_queued = 6, .resident = 7},
                        &rebuild);
  EXPECT_EQ(rebuild.queued(), 5u);
  EXPECT_EQ(rebuild.already_queued(), 6u);
  EXPECT_EQ(rebuild.resident(), 7u);
}

TEST(RebuildTaskToProtoTest, EveryField) {
  core::RebuildTask task;
  task.task_id = 41;
  task.ns = RebuildNamespace();
  task.key = Key(0xA, 0xB);
  task.parent = core::BlobParent{.key = Key(0xC, 0xD), .pages = 2};
  task.first_page = 2;
  task.pages = 1;
  task.sequence_tokens = {1, 2, 3, 4, 5, 6};
  task.checksums = {100, 200};
  task.deadline = kNow + absl::Milliseconds(29500);

  v1::RebuildTask out;
  RebuildTaskToProto(task, kNow, &out);
  EXPECT_EQ(out.task_id(), 41u);
  ASSERT_OK_AND_ASSIGN(radix::Namespace ns, proto::NamespaceFromProto(out.ns(), "ns"));
  EXPECT_EQ(ns, RebuildNamespace());
  EXPECT_EQ(proto::BlobKeyOf(out.key()), Key(0xA, 0xB));
  ASSERT_TRUE(out.has_parent());
  EXPECT_EQ(proto::BlobKeyOf(out.parent().key()), Key(0xC, 0xD));
  EXPECT_EQ(out.parent().pages(), 2u);
  EXPECT_EQ(out.first_page(), 2u);
  EXPECT_EQ(out.pages(), 1u);
  EXPECT_EQ(TokensOf(out.sequence_tokens()), task.sequence_tokens);
  EXPECT_EQ(std::vector<uint64_t>(out.chunk_checksums().begin(), out.chunk_checksums().end()),
            task.checksums);
  EXPECT_EQ(out.expires_in_ms(), 29500u);

  // From page 0: no parent; a past deadline is 0 ms, never negative.
  task.parent.reset();
  task.deadline = kNow - absl::Seconds(1);
  RebuildTaskToProto(task, kNow, &out);
  EXPECT_FALSE(out.has_parent());
  EXPECT_EQ(out.expires_in_ms(), 0u);
}

TEST(EvictToProtoTest, DemotedAndDropped) {
  v1::EvictResponse out;
  EvictToProto(core::EvictReply{.bytes_freed = 4096,
                                .pages_evicted = 0,
                                .blobs_unlinked = 0,
                                .blobs_demoted = 3,
                                .blobs_dropped = 2},
               &out);
  EXPECT_EQ(out.bytes_freed(), 4096u);
  EXPECT_EQ(out.blobs_demoted(), 3u);
  EXPECT_EQ(out.blobs_dropped(), 2u);
}

}  // namespace
}  // namespace strata::store::rpc
