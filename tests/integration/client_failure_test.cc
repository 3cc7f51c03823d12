// libstrata when things go wrong on the way: a node killed while reads and writes are in
// flight, and deadlines that pass mid-transfer. Calls return (never hang), report
// UNAVAILABLE / DEADLINE_EXCEEDED rather than OK, and never touch the caller's memory after
// they returned.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>

#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::client_failure_test {

using strata::testing::NodeProcess;

namespace {

constexpr uint32_t kPageTokens = 16;

TEST(ClientFailureTest, NodeKilledMidTransferFailsCallsWithoutHanging) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, StartNodeWithDataPlane("tcp"));
  ClientOptions options = ClientOptionsFor(node->grpc_address(), "tcp");
  options.default_timeout = absl::Seconds(20);
  options.retry.max_retries = 1;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));
  const Namespace ns = ClientTestNamespace("killed");
  // A 512-page blob (8 MiB): each read takes a while over TCP.
  const std::vector<TokenId> tokens = RandomTokens(31, 512 * kPageTokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 512);
  ASSERT_OK(client->Write(ns, std::nullopt, tokens, Source(kv)));
  ASSERT_OK_AND_ASSIGN(MatchResult match, client->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, 512u);

  std::atomic<bool> stop{false};
  std::atomic<int> ok_reads{0};
  std::vector<std::string> bad(3);
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::vector<std::byte> dst(kv.size());
      while (!stop.load()) {
        const absl::Status s = client->Read(ns, match.segments, 512, Host(dst));
        if (s.ok()) {
          if (dst != kv) bad[r] = "OK with wrong bytes";
          ++ok_reads;
          continue;
        }
        // Once the node is gone: UNAVAILABLE (or a deadline); never DATA_LOSS, never OK.
        if (s.code() != absl::StatusCode::kUnavailable &&
            s.code() != absl::StatusCode::kDeadlineExceeded &&
            s.code() != absl::StatusCode::kCancelled) {
          bad[r] = s.ToString();
        }
        return;
      }
    });
  }
  while (ok_reads.load() < 3) absl::SleepFor(absl::Milliseconds(5));
  node->Signal(SIGKILL);
  ASSERT_OK(node->WaitExit(absl::Seconds(10)).status());
  const absl::Time killed = absl::Now();
  for (std::thread& t : readers) t.join();
  stop = true;
  EXPECT_LT(absl::Now() - killed, absl::Seconds(30));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(bad[r], "") << "reader " << r;
  // The client stays usable: calls to the dead node fail quickly with UNAVAILABLE.
  EXPECT_CODE(client->Health(CallOptions::WithTimeout(absl::Seconds(5))),
              absl::StatusCode::kUnavailable);
}

TEST(ClientFailureTest, DeadlineMidReadReturnsAndLeavesTheBufferAlone) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, StartNodeWithDataPlane("tcp"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Connect(ClientOptionsFor(node->grpc_address(), "tcp")));
  const Namespace ns = ClientTestNamespace("deadline");
  const std::vector<TokenId> tokens = RandomTokens(41, 1024 * kPageTokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 1024);  // 16 MiB
  ASSERT_OK(client->Write(ns, std::nullopt, tokens, Source(kv)));
  ASSERT_OK_AND_ASSIGN(MatchResult match, client->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, 1024u);

  // Deadlines from very short to long enough: whatever a call answers, once it has
  // returned nothing writes into its destination any more.
  int deadline_exceeded = 0;
  for (absl::Duration timeout :
       {absl::Microseconds(300), absl::Milliseconds(2), absl::Milliseconds(5),
        absl::Milliseconds(20), absl::Seconds(30)}) {
    std::vector<std::byte> dst(kv.size(), std::byte{0});
    const absl::Status s =
        client->Read(ns, match.segments, 1024, Host(dst), CallOptions::WithTimeout(timeout));
    if (s.ok()) {
      EXPECT_TRUE(dst == kv);
      continue;
    }
    EXPECT_CODE(s, absl::StatusCode::kDeadlineExceeded);
    ++deadline_exceeded;
    std::memset(dst.data(), 0x5A, dst.size());
    absl::SleepFor(absl::Milliseconds(200));
    const std::vector<std::byte> pattern(dst.size(), std::byte{0x5A});
    EXPECT_TRUE(dst == pattern) << "the transport wrote after Read returned (" << timeout << ")";
  }
  EXPECT_GT(deadline_exceeded, 0);
  // The client and the node are fine afterwards.
  std::vector<std::byte> dst(kv.size());
  ASSERT_OK(client->Read(ns, match.segments, 1024, Host(dst)));
  EXPECT_TRUE(dst == kv);
}

}  // namespace
}  // namespace strata::integration::client_failure_test
