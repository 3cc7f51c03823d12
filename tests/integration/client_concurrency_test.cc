// Eight libstrata clients (each with its own UCX worker and connections) hammer one node
// with random writes, matched reads and deletes over shared documents. Every read either
// misses (NOT_FOUND: deleted or evicted meanwhile) or returns exactly the reference model's
// bytes; no call ever reports corrupt data.
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::client_concurrency_test {

using strata::testing::NodeProcess;

namespace {

constexpr int kClients = 8;
constexpr int kOpsPerClient = 30;
constexpr int kDocuments = 10;
constexpr uint32_t kPageTokens = 16;

struct Tally {
  std::atomic<int> writes{0};
  std::atomic<int> existed{0};
  std::atomic<int> reads_ok{0};
  std::atomic<int> misses{0};
  std::atomic<int> deletes{0};
  std::atomic<uint64_t> bytes_compared{0};
};

class ClientConcurrencyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ClientConcurrencyTest, RandomPutsReadsAndDeletesNeverReturnGarbage) {
  // 16 MiB of DRAM (1024 pages): prefixes of different lengths are distinct blobs, so the
  // tier may fill and evict while the clients run (writes may then see RESOURCE_EXHAUSTED).
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                       StartNodeWithDataPlane(GetParam(), uint64_t{16} << 20));
  const Namespace ns = ClientTestNamespace("stress");
  const uint64_t page_bytes = ClientTestLayout().BytesPerPage();
  std::vector<std::vector<TokenId>> documents;
  for (int d = 0; d < kDocuments; ++d) {
    std::vector<TokenId> doc = RandomTokens(100 + d, (8 + d) * kPageTokens);
    // Documents in pairs share their first 4 pages (branches of one prefix).
    if (d % 2 == 1) std::copy_n(documents[d - 1].begin(), 4 * kPageTokens, doc.begin());
    documents.push_back(std::move(doc));
  }

  Tally tally;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto fail = [&](const std::string& what) {
        if (failures[c].empty()) failures[c] = what;
      };
      absl::StatusOr<std::unique_ptr<Client>> client =
          Client::Connect(ClientOptionsFor(node->grpc_address(), GetParam()));
      if (!client.ok()) return fail(client.status().ToString());
      std::mt19937_64 rng(7000 + c);
      for (int op = 0; op < kOpsPerClient && failures[c].empty(); ++op) {
        const std::vector<TokenId>& doc = documents[rng() % kDocuments];
        const uint32_t doc_pages = static_cast<uint32_t>(doc.size() / kPageTokens);
        const int kind = static_cast<int>(rng() % 100);
        if (kind < 45) {  // write a prefix of the document from page 0
          const uint32_t pages = 2 + static_cast<uint32_t>(rng() % (doc_pages - 1));
          const std::vector<std::byte> kv = ModelBytes(doc, 0, pages);
          absl::StatusOr<WriteResult> w = (*client)->Write(
              ns, std::nullopt, absl::MakeConstSpan(doc).first(pages * kPageTokens), Source(kv));
          if (w.ok()) {
            ++tally.writes;
            if (w->existed) ++tally.existed;
          } else if (w.status().code() != absl::StatusCode::kResourceExhausted) {
            fail(absl::StrCat("write: ", w.status().ToString()));
          }
        } else if (kind < 85) {  // match and read what is cached
          absl::StatusOr<MatchResult> m = (*client)->Match(ns, doc);
          if (!m.ok()) {
            // A namespace no write has reached yet is NOT_FOUND (a cold node).
            if (m.status().code() != absl::StatusCode::kNotFound) {
              fail(absl::StrCat("match: ", m.status().ToString()));
            }
            continue;
          }
          if (m->matched_pages == 0) continue;
          std::vector<std::byte> kv(m->matched_pages * page_bytes);
          const absl::Status r = (*client)->Read(ns, m->segments, m->matched_pages, Host(kv));
          if (r.ok()) {
            if (kv != ModelBytes(doc, 0, m->matched_pages)) {
              fail(
                  absl::StrCat("read returned OK with wrong bytes (", m->matched_pages, " pages)"));
            }
            ++tally.reads_ok;
            tally.bytes_compared += kv.size();
          } else if (r.code() == absl::StatusCode::kNotFound) {
            ++tally.misses;
          } else {
            fail(absl::StrCat("read: ", r.ToString()));
          }
        } else {  // delete the deepest blob of a match
          absl::StatusOr<MatchResult> m = (*client)->Match(ns, doc);
          if (!m.ok() || m->segments.empty()) continue;
          absl::StatusOr<DeleteResult> d = (*client)->Delete(m->segments.back().blob);
          if (d.ok()) {
            ++tally.deletes;
          } else if (d.status().code() != absl::StatusCode::kNotFound) {
            fail(absl::StrCat("delete: ", d.status().ToString()));
          }
        }
      }
      if ((*client)->stats().checksum_failures != 0) fail("checksum failures counted");
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(failures[c], "") << "client " << c;
  LOG(INFO) << "writes " << tally.writes << " (existed " << tally.existed << "), reads "
            << tally.reads_ok << " (" << tally.bytes_compared << " bytes compared), misses "
            << tally.misses << ", deletes " << tally.deletes;
  EXPECT_GT(tally.writes.load(), 0);
  EXPECT_GT(tally.reads_ok.load(), 0);
  EXPECT_GT(tally.deletes.load(), 0);
  // Nothing leaked: every lease was released (in the background) and no put is pending.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> admin,
                       Client::Connect(ClientOptionsFor(node->grpc_address(), GetParam())));
  absl::StatusOr<NodeTiers> tiers;
  for (int i = 0; i < 100; ++i) {
    tiers = admin->Tiers();
    ASSERT_OK(tiers);
    if (tiers->engine.leases == 0 && tiers->engine.pending_puts == 0) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(tiers->engine.leases, 0u);
  EXPECT_EQ(tiers->engine.pending_puts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientConcurrencyTest,
                         ::testing::Values(std::string("tcp"), std::string("tcp,shm,cma"),
                                           std::string(kSameHost)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return TransportTestName(info.param);
                         });

}  // namespace
}  // namespace strata::integration::client_concurrency_test
