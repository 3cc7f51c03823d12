// The rebuild worker without a node: what it computes and checks for a task (the model's
// bytes, checksum mismatches of the wrong seed, layout and shape refusals), and how a run
// reports a node it cannot reach and bad options. Against a real node:
// tests/integration/rebuild_test.cc.
#include "client/tools/rebuild_worker.h"

#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/radix/chunk_checksum.h"

namespace strata::tools {
namespace {

constexpr uint64_t kSeed = 7;

KvLayout TestLayout() {
  return KvLayout{.num_layers = 2,
                  .num_kv_heads = 1,
                  .head_dim = 8,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 4,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

// A task for pages [2, 4) of a 16-token sequence, with the checksums of seed kSeed's model.
RebuildTask TaskOf(const worker::ReferenceModel& model) {
  RebuildTask task;
  task.task_id = 3;
  task.ns = Namespace::Create("acme", "ref", TestLayout()).value();
  task.key = BlobKey{PrefixHash{5, 6}};
  task.parent = Parent{BlobKey{PrefixHash{7, 8}}, 2};
  task.first_page = 2;
  task.pages = 2;
  for (TokenId t = 0; t < 16; ++t) task.sequence_tokens.push_back(1000 + 17 * t);
  const std::vector<std::byte> bytes =
      model.ComputeBlobBytes(task.sequence_tokens, task.first_page, task.pages).value();
  task.chunk_checksums = radix::ChunkChecksums(bytes, TestLayout(), task.pages).value();
  return task;
}

TEST(ComputeRebuildTest, TheModelOfTheWritersSeedReproducesTheBytes) {
  const auto model = worker::ReferenceModel::Create(TestLayout(), kSeed).value();
  const RebuildTask task = TaskOf(*model);
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, ComputeRebuild(task, *model));
  EXPECT_EQ(bytes, model->ComputeBlobBytes(task.sequence_tokens, 2, 2).value());
  EXPECT_EQ(bytes.size(), 2 * TestLayout().BytesPerPage());
  EXPECT_EQ(task.OwnTokens(),
            std::vector<TokenId>(task.sequence_tokens.begin() + 8, task.sequence_tokens.end()));
}

TEST(ComputeRebuildTest, AnotherSeedIsDataLoss) {
  const auto writer = worker::ReferenceModel::Create(TestLayout(), kSeed).value();
  const auto other = worker::ReferenceModel::Create(TestLayout(), kSeed + 1).value();
  const auto result = ComputeRebuild(TaskOf(*writer), *other);
  EXPECT_CODE(result, absl::StatusCode::kDataLoss);
  EXPECT_NE(result.status().message().find("seed 8"), absl::string_view::npos) << result.status();
}

TEST(ComputeRebuildTest, RefusesTasksThatDoNotAddUp) {
  const auto model = worker::ReferenceModel::Create(TestLayout(), kSeed).value();
  RebuildTask task = TaskOf(*model);
  task.ns.reset();
  EXPECT_CODE(ComputeRebuild(task, *model), absl::StatusCode::kInvalidArgument);
  task = TaskOf(*model);
  task.sequence_tokens.pop_back();
  EXPECT_CODE(ComputeRebuild(task, *model), absl::StatusCode::kInvalidArgument);
  task = TaskOf(*model);
  task.chunk_checksums.pop_back();
  EXPECT_CODE(ComputeRebuild(task, *model), absl::StatusCode::kInvalidArgument);
  task = TaskOf(*model);
  task.pages = 0;
  EXPECT_CODE(ComputeRebuild(task, *model), absl::StatusCode::kInvalidArgument);
  KvLayout wider = TestLayout();
  wider.head_dim = 16;
  const auto other_layout = worker::ReferenceModel::Create(wider, kSeed).value();
  EXPECT_CODE(ComputeRebuild(TaskOf(*model), *other_layout), absl::StatusCode::kFailedPrecondition);
}

TEST(SeededModelsTest, OneModelPerLayoutOfTheSeed) {
  SeededModels models(kSeed);
  ASSERT_OK_AND_ASSIGN(const worker::ReferenceModel* a, models.For(TestLayout()));
  ASSERT_OK_AND_ASSIGN(const worker::ReferenceModel* again, models.For(TestLayout()));
  EXPECT_EQ(a, again);
  EXPECT_EQ(a->seed(), kSeed);
  KvLayout wider = TestLayout();
  wider.head_dim = 16;
  ASSERT_OK_AND_ASSIGN(const worker::ReferenceModel* b, models.For(wider));
  EXPECT_NE(a, b);
  EXPECT_EQ(b->layout(), wider);
  KvLayout bad = TestLayout();
  bad.num_layers = 0;
  EXPECT_CODE(models.For(bad), absl::StatusCode::kInvalidArgument);
}

// A loopback port nothing listens on: bound, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

std::unique_ptr<Client> NoNodeClient() {
  ClientOptions options;
  options.node = absl::StrCat("127.0.0.1:", ClosedPort());
  options.default_timeout = absl::Seconds(5);
  options.retry.max_retries = 1;
  options.retry.initial_backoff = absl::Milliseconds(10);
  options.retry.max_backoff = absl::Milliseconds(20);
  return Client::Connect(options).value();
}

TEST(RebuildOneTest, OutcomesWithoutANode) {
  const auto model = worker::ReferenceModel::Create(TestLayout(), kSeed).value();
  const auto other = worker::ReferenceModel::Create(TestLayout(), kSeed + 1).value();
  std::unique_ptr<Client> client = NoNodeClient();
  const RebuildTask task = TaskOf(*model);
  auto use = [](const worker::ReferenceModel* m) {
    return [m](const KvLayout&) -> absl::StatusOr<const worker::ReferenceModel*> { return m; };
  };
  // Right bytes, no node: the write fails.
  const RebuildTaskReport unreachable = RebuildOne(*client, task, use(model.get()));
  EXPECT_EQ(unreachable.outcome, RebuildOutcome::kWriteFailed);
  EXPECT_CODE(unreachable.status, absl::StatusCode::kUnavailable);
  EXPECT_EQ(unreachable.bytes, 2 * TestLayout().BytesPerPage());
  // Wrong seed: never written (no RPC).
  const uint64_t rpcs = client->stats().rpcs;
  const RebuildTaskReport mismatch = RebuildOne(*client, task, use(other.get()));
  EXPECT_EQ(mismatch.outcome, RebuildOutcome::kChecksumMismatch);
  EXPECT_CODE(mismatch.status, absl::StatusCode::kDataLoss);
  // No model: skipped.
  const RebuildTaskReport skipped = RebuildOne(
      *client, task, [](const KvLayout&) -> absl::StatusOr<const worker::ReferenceModel*> {
        return absl::FailedPreconditionError("no model");
      });
  EXPECT_EQ(skipped.outcome, RebuildOutcome::kSkipped);
  EXPECT_EQ(client->stats().rpcs, rpcs);
  EXPECT_STREQ(RebuildOutcomeName(RebuildOutcome::kChecksumMismatch), "checksum-mismatch");
}

// A blob past a cluster segment start (page 1 here): its task carries the tokens from the
// start on; the earlier ones come from prefix_tokens, or the task is skipped.
TEST(RebuildOneTest, ASegmentStartNeedsThePrefixTokens) {
  const auto model = worker::ReferenceModel::Create(TestLayout(), kSeed).value();
  std::unique_ptr<Client> client = NoNodeClient();
  const RebuildTask whole = TaskOf(*model);
  RebuildTask task = whole;
  task.segment_start = SegmentStart{PrefixHash{9, 9}, 1};
  const std::vector<TokenId> first_page(whole.sequence_tokens.begin(),
                                        whole.sequence_tokens.begin() + 4);
  task.sequence_tokens.erase(task.sequence_tokens.begin(), task.sequence_tokens.begin() + 4);
  auto use = [&](const KvLayout&) -> absl::StatusOr<const worker::ReferenceModel*> {
    return model.get();
  };
  const uint64_t rpcs = client->stats().rpcs;
  RebuildTaskReport report = RebuildOne(*client, task, use);
  EXPECT_EQ(report.outcome, RebuildOutcome::kSkipped);
  EXPECT_CODE(report.status, absl::StatusCode::kFailedPrecondition);
  // The prefix's source fails: skipped with its status.
  report = RebuildOne(*client, task, use, {}, [](const Namespace&, const SegmentStart&) {
    return absl::StatusOr<std::vector<TokenId>>(absl::NotFoundError("no node holds it"));
  });
  EXPECT_EQ(report.outcome, RebuildOutcome::kSkipped);
  EXPECT_CODE(report.status, absl::StatusCode::kNotFound);
  EXPECT_EQ(client->stats().rpcs, rpcs);
  // With the right prefix the bytes match; the write (no node here) is what fails.
  SegmentStart asked;
  report = RebuildOne(*client, task, use, {}, [&](const Namespace&, const SegmentStart& start) {
    asked = start;
    return absl::StatusOr<std::vector<TokenId>>(first_page);
  });
  EXPECT_EQ(asked, *task.segment_start);
  EXPECT_EQ(report.outcome, RebuildOutcome::kWriteFailed);
  EXPECT_CODE(report.status, absl::StatusCode::kUnavailable);
  // A wrong prefix computes other bytes: a checksum mismatch, never written.
  report = RebuildOne(*client, task, use, {}, [&](const Namespace&, const SegmentStart&) {
    return absl::StatusOr<std::vector<TokenId>>(std::vector<TokenId>(4, 1));
  });
  EXPECT_EQ(report.outcome, RebuildOutcome::kChecksumMismatch);
}

TEST(RunRebuildWorkerTest, BadOptionsAndNoNode) {
  const auto model = worker::ReferenceModel::Create(TestLayout(), kSeed).value();
  std::unique_ptr<Client> client = NoNodeClient();
  RebuildWorkerOptions options;
  options.batch = 0;
  EXPECT_CODE(RunRebuildWorker(*client, *model, options).status,
              absl::StatusCode::kInvalidArgument);
  options.batch = 4;
  options.poll_wait = absl::Seconds(61);
  EXPECT_CODE(RunRebuildWorker(*client, *model, options).status,
              absl::StatusCode::kInvalidArgument);
  options.poll_wait = absl::ZeroDuration();
  options.idle_exit = absl::ZeroDuration();
  const RebuildWorkerSummary summary = RunRebuildWorker(*client, *model, options);
  EXPECT_CODE(summary.status, absl::StatusCode::kUnavailable);
  EXPECT_EQ(summary.pulls, 1u);
  EXPECT_EQ(summary.tasks, 0u);
  // A stop request before the first pull: nothing is pulled.
  options.stop = [] { return true; };
  const RebuildWorkerSummary stopped = RunRebuildWorker(*client, *model, options);
  EXPECT_OK(stopped.status);
  EXPECT_EQ(stopped.pulls, 0u);
}

}  // namespace
}  // namespace strata::tools
