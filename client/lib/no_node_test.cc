// strata::Client against no node at all: what it refuses before any RPC, how it retries
// UNAVAILABLE within the deadline, and the async and batch forms' plumbing.
#include <string>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/gpu/device.h"

namespace strata {
namespace {

// A loopback port nothing listens on: bound, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

ClientOptions NoNode() {
  ClientOptions options;
  options.node = absl::StrCat("127.0.0.1:", ClosedPort());
  options.default_timeout = absl::Seconds(5);
  options.retry.max_retries = 2;
  options.retry.initial_backoff = absl::Milliseconds(10);
  options.retry.max_backoff = absl::Milliseconds(20);
  return options;
}

// Bytes of one page of Ns(): 2 layers x (K + V) x 4 tokens x 1 head x 4 dims x 2 bytes.
constexpr uint64_t kPage = 128;

Namespace Ns() {
  return Namespace::Create("acme", "org/tiny",
                           KvLayout{.num_layers = 2,
                                    .num_kv_heads = 1,
                                    .head_dim = 4,
                                    .dtype = DType::kFloat16,
                                    .page_tokens = 4,
                                    .format = KvFormat::kKeyValue,
                                    .tp_rank = 0,
                                    .tp_world = 1})
      .value();
}

TEST(NoNodeTest, ConnectRefusesBadOptions) {
  ClientOptions options;
  options.node = "nowhere";
  EXPECT_CODE(Client::Connect(options), absl::StatusCode::kInvalidArgument);
}

TEST(NoNodeTest, ConnectIsLazyUnlessAskedToWait) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(NoNode()));
  EXPECT_EQ(client->stats().rpcs, 0u);
  ClientOptions wait = NoNode();
  wait.wait_for_node = true;
  EXPECT_CODE(Client::Connect(wait), absl::StatusCode::kUnavailable);
}

TEST(NoNodeTest, UnavailableIsRetriedThenReturned) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(NoNode()));
  const std::vector<TokenId> tokens(8, 1);
  EXPECT_CODE(client->Match(Ns(), tokens), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client->stats().rpcs, 3u);  // 1 + max_retries
  EXPECT_EQ(client->stats().rpc_retries, 2u);
  // Delete and Evict are never repeated.
  EXPECT_CODE(client->Delete(BlobKey{PrefixHash{1, 2}}), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client->stats().rpcs, 4u);
  EXPECT_CODE(client->Evict(Tier::kDram, 1), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client->stats().rpcs, 5u);
}

TEST(NoNodeTest, RetriesStopAtTheDeadline) {
  ClientOptions options = NoNode();
  options.retry.max_retries = 1000;
  options.retry.initial_backoff = absl::Milliseconds(50);
  options.retry.max_backoff = absl::Milliseconds(50);
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(options));
  const absl::Time start = absl::Now();
  // The last attempt's answer: UNAVAILABLE, or DEADLINE_EXCEEDED when the deadline cut that
  // attempt short (a loaded machine: the ASan CI run beside a build saw it).
  const absl::Status health =
      client->Health(CallOptions::WithTimeout(absl::Milliseconds(300))).status();
  EXPECT_TRUE(absl::IsUnavailable(health) || absl::IsDeadlineExceeded(health)) << health;
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(2)) << took;
  EXPECT_GT(client->stats().rpc_retries, 0u);
  EXPECT_LT(client->stats().rpc_retries, 20u);
}

TEST(NoNodeTest, LocalRefusalsSendNothing) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(NoNode()));
  const Namespace ns = Ns();
  std::vector<std::byte> buffer(4 * ns.layout().BytesPerPage());
  const std::vector<TokenId> tokens(8, 3);
  // Device memory without a device, unaligned tokens, wrong sizes, zero keys.
  const absl::Status device_write =
      client
          ->Write(ns, std::nullopt, tokens,
                  MemoryDescriptor::CudaDevice(buffer.data(), 2 * kPage, 0))
          .status();
  EXPECT_FALSE(device_write.ok());
  if (gpu::CudaDeviceCount() == 0) {
    EXPECT_CODE(device_write, absl::StatusCode::kUnavailable);
  }
  EXPECT_CODE(client->Write(ns, std::nullopt, absl::MakeConstSpan(tokens).first(6),
                            MemoryDescriptor::Host(buffer.data(), kPage)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->Write(ns, std::nullopt, {}, MemoryDescriptor::Host(buffer.data(), 0)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(
      client->Write(ns, std::nullopt, tokens, MemoryDescriptor::Host(buffer.data(), 2 * kPage + 1)),
      absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->Write(ns, Parent{BlobKey{}, 2}, tokens,
                            MemoryDescriptor::Host(buffer.data(), 2 * kPage)),
              absl::StatusCode::kInvalidArgument);
  const std::vector<ReadRange> ranges = {{BlobKey{PrefixHash{1, 1}}, 0, 2}};
  const std::vector<MemoryDescriptor> device = {
      MemoryDescriptor::CudaDevice(buffer.data(), 2 * kPage, 0)};
  const absl::Status device_read = client->Read(ns, ranges, device);
  EXPECT_FALSE(device_read.ok());
  if (gpu::CudaDeviceCount() == 0) {
    EXPECT_CODE(device_read, absl::StatusCode::kUnavailable);
  }
  const std::vector<Segment> gap = {{BlobKey{PrefixHash{1, 1}}, 0, 1, 1, 1, Tier::kDram}};
  EXPECT_CODE(client->Read(ns, gap, 1, MemoryDescriptor::Host(buffer.data(), kPage)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_OK(client->Read(ns, gap, 0, MemoryDescriptor{}));  // nothing to read
  EXPECT_CODE(client->Delete(BlobKey{}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->Pin(BlobKey{}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->Stat(BlobKey{}), absl::StatusCode::kInvalidArgument);
  ListOptions both;
  both.ns = ns;
  both.namespace_hash = PrefixHash{1, 2};
  EXPECT_CODE(client->List(both), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->Drain(-absl::Seconds(1)), absl::StatusCode::kInvalidArgument);
  const std::vector<TokenId> too_many(size_t{1} << 21 | 4, 1);
  EXPECT_CODE(client->Match(ns, too_many), absl::StatusCode::kInvalidArgument);
  // A TEXT segment is never read: a miss before anything is sent.
  const std::vector<Segment> text = {{BlobKey{PrefixHash{1, 1}}, 0, 1, 0, 1, Tier::kText, {}}};
  EXPECT_CODE(client->Read(ns, text, 1, MemoryDescriptor::Host(buffer.data(), kPage)),
              absl::StatusCode::kNotFound);
  // Rebuild calls: limits checked here.
  EXPECT_CODE(client->Prefetch(ns, too_many), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->RequestRebuild(BlobKey{}, true), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->PullRebuildTasks(0, absl::ZeroDuration()),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->PullRebuildTasks(1025, absl::ZeroDuration()),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->PullRebuildTasks(1, absl::Seconds(61)), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->PullRebuildTasks(1, -absl::Seconds(1)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client->stats().rpcs, 0u);
}

TEST(NoNodeTest, AsyncFormsReportThroughTheirCallbacks) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(NoNode()));
  const Namespace ns = Ns();
  std::vector<std::byte> buffer(2 * kPage);
  const std::vector<TokenId> tokens(8, 3);
  absl::Notification wrote, read;
  absl::StatusOr<WriteResult> write_result;
  absl::Status read_status;
  client->WriteAsync(ns, std::nullopt, tokens, MemoryDescriptor::Host(buffer.data(), 2 * kPage), {},
                     [&](absl::StatusOr<WriteResult> r) {
                       write_result = std::move(r);
                       wrote.Notify();
                     });
  const std::vector<ReadRange> ranges = {{BlobKey{PrefixHash{1, 1}}, 0, 2}};
  const std::vector<MemoryDescriptor> dests = {MemoryDescriptor::Host(buffer.data(), 2 * kPage)};
  client->ReadAsync(ns, ranges, dests, {}, [&](absl::Status s) {
    read_status = std::move(s);
    read.Notify();
  });
  ASSERT_TRUE(wrote.WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_TRUE(read.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_CODE(write_result, absl::StatusCode::kUnavailable);
  EXPECT_CODE(read_status, absl::StatusCode::kUnavailable);
}

TEST(NoNodeTest, WriteBatchChecksItsItems) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(NoNode()));
  const Namespace ns = Ns();
  std::vector<std::byte> buffer(2 * kPage);
  const std::vector<TokenId> tokens(8, 3);
  const MemoryDescriptor source = MemoryDescriptor::Host(buffer.data(), 2 * kPage);
  std::vector<WriteItem> items(4);
  items[0] = WriteItem{std::nullopt, std::nullopt, tokens, source};  // no node
  items[1] = WriteItem{std::nullopt, size_t{0}, tokens, source};     // parent failed
  items[2] = WriteItem{std::nullopt, size_t{2}, tokens, source};     // not earlier
  items[3] = WriteItem{Parent{BlobKey{PrefixHash{1, 1}}, 2}, size_t{0}, tokens, source};  // both
  const auto results = client->WriteBatch(ns, items);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_CODE(results[0], absl::StatusCode::kUnavailable);
  EXPECT_CODE(results[1], absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(results[2], absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(results[3], absl::StatusCode::kInvalidArgument);
}

TEST(NoNodeTest, RegisteredMemoryMustNotOverlap) {
  ASSERT_OK_AND_ASSIGN(auto client, Client::Connect(NoNode()));
  std::vector<std::byte> buffer(1 << 16);
  ASSERT_OK(client->RegisterMemory(MemoryDescriptor::Host(buffer.data(), 4096)));
  EXPECT_CODE(client->RegisterMemory(MemoryDescriptor::Host(buffer.data() + 100, 4096)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_OK(client->RegisterMemory(MemoryDescriptor::Host(buffer.data() + 4096, 4096)));
  EXPECT_CODE(client->UnregisterMemory(buffer.data() + 1), absl::StatusCode::kNotFound);
  EXPECT_OK(client->UnregisterMemory(buffer.data()));
  EXPECT_OK(client->UnregisterMemory(buffer.data() + 4096));
  EXPECT_CODE(client->RegisterMemory(MemoryDescriptor::CudaDevice(buffer.data(), 64, 0)),
              absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace strata
