// Rebuild from text end to end: a real strata-node process (a node per test), libstrata, and
// the reference rebuild worker (client/tools/rebuild_worker.h) both in-process and as the
// strata-worker program. A chain of blobs computed by the reference model is written, its
// DRAM evicted (bytes dropped, tokens kept: TEXT), matched (TEXT segments with the right
// tokens, nothing readable), rebuilt through the node's queue, and read back byte-identical
// with the original checksums. Plus the refusals: bad pulls, unknown keys, and a "rebuild"
// with other bytes (the wrong seed), which the node refuses while the blob stays TEXT.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client/tools/rebuild_worker.h"
#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/testing/process.h"
#include "strata/testing/shared_node_test.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::rebuild_test {

using strata::testing::Call;
using strata::testing::ContextWithDeadline;
using strata::testing::NodeProcess;
using strata::testing::ProgramOptions;
using strata::testing::ProgramResult;
using strata::testing::RunProgram;

namespace {

constexpr uint32_t kPageTokens = 16;
constexpr uint32_t kBlobPages = 4;
constexpr uint32_t kBlobs = 3;
constexpr uint32_t kPages = kBlobs * kBlobPages;
constexpr char kTransport[] = "tcp";

class RebuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(node_, StartNodeWithDataPlane(kTransport));
    ASSERT_OK_AND_ASSIGN(client_,
                         Client::Connect(ClientOptionsFor(node_->grpc_address(), kTransport)));
    tokens_ = RandomTokens(11, kPages * kPageTokens + 3);
  }

  // Writes the chain: blob i holds pages [4i, 4i + 4), continuing blob i - 1.
  void WriteChain() {
    std::optional<Parent> parent;
    for (uint32_t i = 0; i < kBlobs; ++i) {
      const uint32_t first = i * kBlobPages;
      const std::vector<std::byte> kv = ModelBytes(tokens_, first, kBlobPages);
      ASSERT_OK_AND_ASSIGN(WriteResult written,
                           client_->Write(ns_, parent,
                                          absl::MakeConstSpan(tokens_).subspan(
                                              first * kPageTokens, kBlobPages * kPageTokens),
                                          Source(kv)));
      ASSERT_FALSE(written.existed);
      keys_.push_back(written.key);
      ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(written.key));
      EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kDram});
      checksums_.push_back(info.checksum);
      parent = Parent{written.key, first + kBlobPages};
    }
  }

  // Drops every blob's bytes: DRAM out (to SSD when the node has one), then SSD out.
  void EvictAllToText() {
    ASSERT_OK_AND_ASSIGN(EvictResult dram, client_->Evict(Tier::kDram, UINT64_MAX));
    EXPECT_GE(dram.blobs_dropped + dram.blobs_demoted, kBlobs);
    absl::StatusOr<EvictResult> ssd = client_->Evict(Tier::kSsd, UINT64_MAX);
    if (!ssd.ok()) {
      EXPECT_CODE(ssd, absl::StatusCode::kInvalidArgument);  // no SSD tier
    }
    for (const BlobKey& key : keys_) {
      ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(key));
      EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kText}) << key.ToHex();
    }
  }

  // Every blob has bytes again, the original checksum, and reads back byte-identical.
  void ExpectRebuiltByteIdentical() {
    for (size_t i = 0; i < keys_.size(); ++i) {
      ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(keys_[i]));
      EXPECT_EQ(info.tiers.front(), Tier::kDram) << i;
      EXPECT_EQ(info.checksum, checksums_[i]) << i;
    }
    ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns_, tokens_));
    EXPECT_EQ(match.matched_pages, kPages);
    EXPECT_EQ(match.ReadablePages(), kPages);
    EXPECT_TRUE(match.TextSegments().empty());
    std::vector<std::byte> kv(PagesBytes(ns_.layout(), kPages), std::byte{0xEE});
    ASSERT_OK(client_->Read(ns_, match.segments, kPages, Host(kv)));
    EXPECT_TRUE(kv == ModelBytes(tokens_, 0, kPages));
    EXPECT_EQ(client_->stats().checksum_failures, 0u);
  }

  std::unique_ptr<NodeProcess> node_;
  std::unique_ptr<Client> client_;
  Namespace ns_ = ClientTestNamespace("rebuild");
  std::vector<TokenId> tokens_;
  std::vector<BlobKey> keys_;
  std::vector<uint64_t> checksums_;
};

TEST_F(RebuildTest, TextIsMatchedWithItsTokensAndRebuiltByteIdentical) {
  ASSERT_NO_FATAL_FAILURE(WriteChain());
  ASSERT_NO_FATAL_FAILURE(EvictAllToText());

  // Match: every page is still matched, as TEXT, with the query's own tokens; none readable.
  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns_, tokens_));
  EXPECT_EQ(match.matched_pages, kPages);
  EXPECT_EQ(match.ReadablePages(), 0u);
  ASSERT_FALSE(match.segments.empty());
  uint32_t covered = 0;
  for (const Segment& segment : match.segments) {
    EXPECT_EQ(segment.tier, Tier::kText);
    EXPECT_EQ(segment.seq_page_begin, covered);
    const auto expected = absl::MakeConstSpan(tokens_).subspan(segment.seq_page_begin * kPageTokens,
                                                               segment.page_count * kPageTokens);
    EXPECT_EQ(segment.tokens, std::vector<TokenId>(expected.begin(), expected.end()));
    covered += segment.page_count;
  }
  EXPECT_EQ(covered, kPages);
  EXPECT_EQ(match.TextSegments().size(), match.segments.size());

  // A TEXT blob is a miss, never garbage: through the match (refused by the client) and by
  // an explicit range (refused by the node).
  std::vector<std::byte> kv(PagesBytes(ns_.layout(), kPages), std::byte{0xEE});
  EXPECT_CODE(client_->Read(ns_, match.segments, kPages, Host(kv)), absl::StatusCode::kNotFound);
  std::vector<std::byte> one(PagesBytes(ns_.layout(), kBlobPages));
  const std::vector<ReadRange> range = {{keys_.back(), 0, kBlobPages}};
  const std::vector<MemoryDescriptor> dest = {Host(one)};
  EXPECT_CODE(client_->Read(ns_, range, dest), absl::StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(NodeTiers before, client_->Tiers());
  EXPECT_GE(before.text.blobs, kBlobs);
  EXPECT_GE(before.text.drops, kBlobs);

  // Rebuild the last blob with its prefix: parents first, all three queued; again: nothing
  // new.
  ASSERT_OK_AND_ASSIGN(RebuildRequestResult queued, client_->RequestRebuild(keys_.back(), true));
  EXPECT_EQ(queued.queued, kBlobs);
  EXPECT_EQ(queued.already_queued, 0u);
  EXPECT_EQ(queued.resident, 0u);
  ASSERT_OK_AND_ASSIGN(RebuildRequestResult again, client_->RequestRebuild(keys_.back(), true));
  EXPECT_EQ(again.queued, 0u);
  EXPECT_EQ(again.already_queued, kBlobs);

  tools::RebuildWorkerOptions options;
  options.idle_exit = absl::ZeroDuration();  // until the queue is empty
  options.poll_wait = absl::ZeroDuration();
  std::vector<BlobKey> order;
  options.on_task = [&order](const tools::RebuildTaskReport& r) {
    EXPECT_EQ(r.outcome, tools::RebuildOutcome::kRebuilt) << r.status;
    order.push_back(r.task.key);
  };
  const tools::RebuildWorkerSummary summary =
      tools::RunRebuildWorker(*client_, TestModel(), options);
  ASSERT_OK(summary.status);
  EXPECT_EQ(summary.rebuilt, kBlobs);
  EXPECT_EQ(summary.checksum_mismatches, 0u);
  EXPECT_EQ(summary.write_failures, 0u);
  EXPECT_EQ(order, keys_);  // parents first

  ASSERT_NO_FATAL_FAILURE(ExpectRebuiltByteIdentical());
  ASSERT_OK_AND_ASSIGN(NodeTiers after, client_->Tiers());
  EXPECT_EQ(after.text.rebuilds, before.text.rebuilds + kBlobs);
  EXPECT_EQ(after.rebuild.completed, before.rebuild.completed + kBlobs);
  EXPECT_EQ(after.rebuild.queued, 0u);
  EXPECT_EQ(after.rebuild.in_flight, 0u);
}

TEST_F(RebuildTest, TheStrataWorkerProgramRebuildsWhatPrefetchQueued) {
  ASSERT_NO_FATAL_FAILURE(WriteChain());
  ASSERT_NO_FATAL_FAILURE(EvictAllToText());

  // Prefetch matches the whole chain (TEXT pages count) and queues every TEXT blob.
  ASSERT_OK_AND_ASSIGN(PrefetchResult prefetch, client_->Prefetch(ns_, tokens_));
  EXPECT_EQ(prefetch.matched_pages, kPages);
  EXPECT_EQ(prefetch.resident_pages, 0u);
  EXPECT_EQ(prefetch.rebuilds_queued, kBlobs);

  ProgramOptions worker_options;
  worker_options.env = {{"STRATA_UCX_TLS", kTransport}};
  worker_options.timeout = absl::Seconds(120);
  const absl::StatusOr<ProgramResult> worker = RunProgram(
      STRATA_WORKER_BINARY,
      {"--node", node_->grpc_address(), "--seed", "42", "--idle-exit", "0", "--poll", "0"},
      worker_options);
  ASSERT_TRUE(worker.ok()) << worker.status();
  const std::string& out = worker->out;
  EXPECT_EQ(worker->exit_code, 0) << out << worker->err;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("strata-worker: ", kBlobs, " tasks in "))) << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat(kBlobs, " rebuilt"))) << out;
  for (const BlobKey& key : keys_) {
    EXPECT_TRUE(absl::StrContains(out, key.ToHex() + " pages")) << out;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectRebuiltByteIdentical());

  // Prefetch of a resident prefix queues nothing.
  ASSERT_OK_AND_ASSIGN(prefetch, client_->Prefetch(ns_, tokens_));
  EXPECT_EQ(prefetch.resident_pages, kPages);
  EXPECT_EQ(prefetch.rebuilds_queued, 0u);
}

TEST_F(RebuildTest, TheWrongSeedIsRefusedAndTheBlobStaysText) {
  ASSERT_NO_FATAL_FAILURE(WriteChain());
  ASSERT_NO_FATAL_FAILURE(EvictAllToText());
  ASSERT_OK_AND_ASSIGN(NodeTiers before, client_->Tiers());

  // A put of the last blob's key with other bytes (a model of another seed): refused.
  const auto wrong_model = worker::ReferenceModel::Create(ClientTestLayout(), 43).value();
  const uint32_t first = (kBlobs - 1) * kBlobPages;
  const std::vector<std::byte> wrong =
      wrong_model
          ->ComputeBlobBytes(absl::MakeConstSpan(tokens_).first(kPages * kPageTokens), first,
                             kBlobPages)
          .value();
  ASSERT_FALSE(wrong == ModelBytes(tokens_, first, kBlobPages));
  const absl::StatusOr<WriteResult> refused = client_->Write(
      ns_, Parent{keys_[kBlobs - 2], first},
      absl::MakeConstSpan(tokens_).subspan(first * kPageTokens, kBlobPages * kPageTokens),
      Source(wrong));
  ASSERT_FALSE(refused.ok()) << "a TEXT blob took bytes that differ from its original";
  EXPECT_TRUE(refused.status().code() == absl::StatusCode::kFailedPrecondition ||
              refused.status().code() == absl::StatusCode::kDataLoss)
      << refused.status();

  // The blob stays TEXT and never serves those bytes.
  ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(keys_.back()));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kText});
  EXPECT_EQ(info.checksum, checksums_.back());
  std::vector<std::byte> one(PagesBytes(ns_.layout(), kBlobPages));
  const std::vector<ReadRange> range = {{keys_.back(), 0, kBlobPages}};
  const std::vector<MemoryDescriptor> dest = {Host(one)};
  EXPECT_CODE(client_->Read(ns_, range, dest), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(NodeTiers after, client_->Tiers());
  EXPECT_EQ(after.text.rebuilds, before.text.rebuilds);

  // The worker with the wrong seed pulls the task, sees the mismatch and writes nothing.
  ASSERT_OK_AND_ASSIGN(RebuildRequestResult queued, client_->RequestRebuild(keys_.back(), false));
  EXPECT_EQ(queued.queued, 1u);
  tools::RebuildWorkerOptions options;
  options.idle_exit = absl::ZeroDuration();
  options.poll_wait = absl::ZeroDuration();
  const tools::RebuildWorkerSummary summary =
      tools::RunRebuildWorker(*client_, *wrong_model, options);
  ASSERT_OK(summary.status);
  EXPECT_EQ(summary.tasks, 1u);
  EXPECT_EQ(summary.checksum_mismatches, 1u);
  EXPECT_EQ(summary.rebuilt, 0u);
  ASSERT_OK_AND_ASSIGN(info, client_->Stat(keys_.back()));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kText});
}

TEST_F(RebuildTest, BadInput) {
  ASSERT_NO_FATAL_FAILURE(WriteChain());
  // On the wire: max_tasks 0 or over the limit, wait_ms over the limit, a missing key.
  std::unique_ptr<v1::Store::Stub> store = node_->StoreStub();
  {
    v1::PullRebuildTasksRequest request;
    v1::PullRebuildTasksResponse response;
    const absl::Status zero =
        Call(store->PullRebuildTasks(ContextWithDeadline().get(), request, &response));
    EXPECT_CODE(zero, absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(zero.message(), "max_tasks: ")) << zero;
    request.set_max_tasks(5000);
    const absl::Status many =
        Call(store->PullRebuildTasks(ContextWithDeadline().get(), request, &response));
    EXPECT_CODE(many, absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(many.message(), "max_tasks: 5000 exceeds")) << many;
    request.set_max_tasks(1);
    request.set_wait_ms(60001);
    const absl::Status wait =
        Call(store->PullRebuildTasks(ContextWithDeadline().get(), request, &response));
    EXPECT_CODE(wait, absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(wait.message(), "wait_ms: ")) << wait;
    // Nothing queued: the node waits no longer than the call's deadline allows (answering
    // empty just before it), not the 50 s asked for.
    request.set_wait_ms(50000);
    const absl::Time start = absl::Now();
    const absl::Status polled = Call(
        store->PullRebuildTasks(ContextWithDeadline(absl::Seconds(2)).get(), request, &response));
    if (polled.ok()) {
      EXPECT_EQ(response.tasks_size(), 0);
    } else {
      EXPECT_CODE(polled, absl::StatusCode::kDeadlineExceeded);  // a slow machine
    }
    EXPECT_GE(absl::Now() - start, absl::Seconds(1));
    EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  }
  {
    v1::RequestRebuildRequest request;
    v1::RequestRebuildResponse response;
    const absl::Status missing =
        Call(store->RequestRebuild(ContextWithDeadline().get(), request, &response));
    EXPECT_CODE(missing, absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(missing.message(), "key: missing")) << missing;
  }
  // Through the client.
  EXPECT_CODE(client_->PullRebuildTasks(0, absl::ZeroDuration()),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client_->RequestRebuild(BlobKey{PrefixHash{0x1234, 0x5678}}, true),
              absl::StatusCode::kNotFound);
  const Namespace unknown = ClientTestNamespace("never-written");
  EXPECT_CODE(client_->Prefetch(unknown, tokens_), absl::StatusCode::kNotFound);

  // A resident blob: nothing to rebuild, nothing to pull.
  ASSERT_OK_AND_ASSIGN(RebuildRequestResult resident, client_->RequestRebuild(keys_.back(), true));
  EXPECT_EQ(resident.queued, 0u);
  EXPECT_EQ(resident.resident, kBlobs);
  ASSERT_OK_AND_ASSIGN(std::vector<RebuildTask> none,
                       client_->PullRebuildTasks(8, absl::ZeroDuration()));
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace strata::integration::rebuild_test
