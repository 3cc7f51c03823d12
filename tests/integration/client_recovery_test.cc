// libstrata recovering from the death of either side, with real processes on loopback.
//
// A client process killed mid-read. The reader is this test binary run again as a child
// process (main() below: first argument "--recovery_child"), a real process with its own
// client, UCX worker and lease, started by exec (never a fork of a process running gRPC).
// It reads a 32 MiB blob back to back; the test stops it (SIGSTOP) at moments spread over
// its reads until the node reports a lease held (so the kill lands inside a Read, usually
// mid-transfer), then SIGKILLs it. Asserted through the node's RPCs: within the lease TTL
// plus reaper slack the node holds no lease and no unlinked blob (a dead client leaks
// nothing); the blob is intact for a fresh client; Delete then frees its bytes at once; the
// node keeps serving. And: a Delete made while the stalled reader holds its lease unlinks
// the blob but keeps its bytes, which are freed once the reader is killed.
//
// A node restarted under a connected client. The same Client fails every kind of call
// within its deadline while the node is down; once a new node listens on the same gRPC and
// data-plane ports it reconnects both (gRPC channel, UCX endpoint): the old blob is a miss,
// never garbage, and Write / Match / Read work again. Both over TCP and shared memory, after
// SIGKILL and after SIGTERM.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/testing/child_process.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::client_recovery_test {

using strata::testing::ChildProcess;
using strata::testing::ChildProcessOptions;
using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;

namespace {

constexpr uint32_t kPageTokens = 16;
constexpr char kChildFlag[] = "--recovery_child";
constexpr char kChildLinePrefix[] = "recovery-child: ";

// Lease settings of the nodes that outlive a reader: a killed reader's lease (whatever TTL it
// asked for is clamped to kMaxLeaseTtl) is reaped within kMaxLeaseTtl + kReapInterval.
constexpr absl::Duration kMaxLeaseTtl = absl::Seconds(3);
constexpr absl::Duration kReapInterval = absl::Milliseconds(100);
// Scheduling slack on a shared 2-core machine (ASan).
constexpr absl::Duration kSlack = absl::Seconds(5);

uint64_t PageBytes() { return ClientTestLayout().BytesPerPage(); }

// `size` deterministic pseudo-random bytes (cheaper than the reference model for tens of
// MiB; the node and the client check chunk checksums either way).
std::vector<std::byte> PatternBytes(uint64_t seed, size_t size) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; i += sizeof(uint64_t)) {
    const uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min(sizeof(word), size - i));
  }
  return bytes;
}

std::string SelfExecutable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

const TierStats* DramTier(const NodeTiers& tiers) {
  for (const TierStats& tier : tiers.tiers) {
    if (tier.tier == Tier::kDram) return &tier;
  }
  return nullptr;
}

// Polls the node's Tiers through `client` until `done` holds or `timeout` passes; returns
// the last answer (or the last error).
absl::StatusOr<NodeTiers> WaitForTiers(Client& client,
                                       const std::function<bool(const NodeTiers&)>& done,
                                       absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<NodeTiers> tiers;
  while (true) {
    tiers = client.Tiers(CallOptions::WithTimeout(absl::Seconds(5)));
    if ((tiers.ok() && done(*tiers)) || absl::Now() >= deadline) return tiers;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

// ---------------------------------------------------------------- the child reader

// What the child reads, again and again: `pages` pages of RandomTokens(seed) in tenant
// `tenant`'s namespace, written by the parent from sequence page 0.
struct ChildRead {
  std::string grpc_address;
  std::string ucx_tls;
  std::string tenant;
  uint32_t pages = 0;
  uint64_t seed = 0;
};

void ChildSay(const std::string& line) {
  std::printf("%s%s\n", kChildLinePrefix, line.c_str());
  std::fflush(stdout);
}

// The child's body: reads back to back, printing "read N ok" after each, until killed.
// Exit codes: 2 setup failed, 3 a read failed, 4 not killed within 60 s.
int RunChild(const ChildRead& job) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(ClientOptionsFor(job.grpc_address, job.ucx_tls));
  if (!client.ok()) {
    ChildSay(absl::StrCat("connect failed: ", client.status().ToString()));
    return 2;
  }
  const Namespace ns = ClientTestNamespace(job.tenant);
  const std::vector<TokenId> tokens = RandomTokens(job.seed, size_t{job.pages} * kPageTokens);
  absl::StatusOr<MatchResult> match = (*client)->Match(ns, tokens);
  if (!match.ok() || match->matched_pages != job.pages) {
    ChildSay(absl::StrCat("match failed: ", match.status().ToString()));
    return 2;
  }
  std::vector<std::byte> kv(job.pages * PageBytes());
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  for (int i = 1; absl::Now() < give_up; ++i) {
    const absl::Status read = (*client)->Read(ns, match->segments, job.pages, Host(kv));
    if (!read.ok()) {
      ChildSay(absl::StrCat("read failed: ", read.ToString()));
      return 3;
    }
    ChildSay(absl::StrCat("read ", i, " ok"));
  }
  return 4;
}

// A child process running RunChild; SIGKILLed and reaped at the end if still running.
class ChildReader {
 public:
  static absl::StatusOr<std::unique_ptr<ChildReader>> Start(const ChildRead& job) {
    const std::string binary = SelfExecutable();
    if (binary.empty()) return absl::InternalError("readlink /proc/self/exe failed");
    const std::vector<std::string> args = {
        kChildFlag, job.grpc_address,        job.ucx_tls,
        job.tenant, absl::StrCat(job.pages), absl::StrCat(job.seed)};
    ChildProcessOptions options;
    options.temp_prefix = "strata-recovery-child";
    if (!job.ucx_tls.empty()) options.env["UCX_TLS"] = job.ucx_tls;
    absl::StatusOr<std::unique_ptr<ChildProcess>> child =
        ChildProcess::Start(binary, args, options);
    if (!child.ok()) return child.status();
    return std::unique_ptr<ChildReader>(new ChildReader(*std::move(child)));
  }

  // Waits until the child printed `line` (after the prefix). FAILED_PRECONDITION when it
  // exited first, DEADLINE_EXCEEDED after `timeout`; both carry its output.
  absl::Status WaitForLine(const std::string& line, absl::Duration timeout) {
    const std::string wanted = absl::StrCat(kChildLinePrefix, line, "\n");
    const absl::Status status = child_->WaitForStdout(
        [&](std::string_view out) { return out.find(wanted) != std::string_view::npos; }, timeout,
        absl::Milliseconds(2));
    if (status.ok()) return status;
    return absl::Status(status.code(),
                        absl::StrCat("waiting for \"", line, "\": ", status.message()));
  }

  // Stops (SIGSTOP) or resumes (SIGCONT) the child.
  void Stop() const { child_->Signal(SIGSTOP); }
  void Resume() const { child_->Signal(SIGCONT); }

  // SIGKILLs the child and returns its exit code (137 when the kill ended it).
  int Kill() { return child_->Kill(); }

  std::string Output() const {
    return absl::StrCat("\nchild stdout:\n", child_->StdoutText(), "\nchild stderr:\n",
                        child_->StderrText());
  }

 private:
  explicit ChildReader(std::unique_ptr<ChildProcess> child) : child_(std::move(child)) {}

  // SIGKILLed and reaped, its directory removed, with the ChildReader.
  std::unique_ptr<ChildProcess> child_;
};

// ---------------------------------------------------------------- (a) a reader killed

class ClientKilledMidReadTest : public ::testing::TestWithParam<std::string> {
 protected:
  // 2048 pages of 16 KiB: 32 MiB (four layers of 8 MiB).
  static constexpr uint32_t kPages = 2048;

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(
        node_, StartNodeWithDataPlane(
                   GetParam(), uint64_t{96} << 20,
                   {absl::StrCat("--lease_ttl=", absl::FormatDuration(kMaxLeaseTtl)),
                    absl::StrCat("--max_lease_ttl=", absl::FormatDuration(kMaxLeaseTtl)),
                    absl::StrCat("--reap_interval=", absl::FormatDuration(kReapInterval))}));
    ASSERT_OK_AND_ASSIGN(observer_,
                         Client::Connect(ClientOptionsFor(node_->grpc_address(), GetParam())));
    ASSERT_OK_AND_ASSIGN(NodeTiers empty, observer_->Tiers());
    ASSERT_NE(DramTier(empty), nullptr);
    empty_dram_used_ = DramTier(empty)->used_bytes;

    tokens_ = RandomTokens(kSeed, size_t{kPages} * kPageTokens);
    kv_ = PatternBytes(kSeed, kPages * PageBytes());
    ASSERT_OK_AND_ASSIGN(written_, observer_->Write(ns(), std::nullopt, tokens_, Source(kv_)));
    ASSERT_FALSE(written_.existed);
  }

  Namespace ns() const { return ClientTestNamespace(kTenant); }

  ChildRead Job() const {
    return ChildRead{node_->grpc_address(), GetParam(), kTenant, kPages, kSeed};
  }

  // Stops the child at moments spread over its reads until the node holds a lease of it
  // (seen twice, 50 ms apart, so it is not one that was about to end) and returns with the
  // child stopped there: usually mid-transfer, since moving 32 MiB takes most of each read.
  // Fails the test after 300 tries.
  void StopWhileItHoldsALease(ChildReader& child) {
    std::mt19937_64 rng(kSeed);
    for (int attempt = 0; attempt < 300; ++attempt) {
      child.Resume();
      absl::SleepFor(absl::Microseconds(rng() % 5000));
      child.Stop();
      int held = 0;
      for (int look = 0; look < 2; ++look) {
        if (look > 0) absl::SleepFor(absl::Milliseconds(50));
        absl::StatusOr<NodeTiers> tiers = observer_->Tiers();
        ASSERT_OK(tiers.status());
        ASSERT_LE(tiers->engine.leases, 1u);
        held += static_cast<int>(tiers->engine.leases);
      }
      if (held == 2) {
        std::printf("stopped holding a lease after %d tries\n", attempt + 1);
        return;
      }
    }
    FAIL() << "never caught the child holding a lease" << child.Output();
  }

  // A client that never read before reads the whole blob.
  void ExpectAFreshClientReadsItIntact() {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> fresh,
                         Client::Connect(ClientOptionsFor(node_->grpc_address(), GetParam())));
    ASSERT_OK_AND_ASSIGN(MatchResult match, fresh->Match(ns(), tokens_));
    ASSERT_EQ(match.matched_pages, kPages);
    std::vector<std::byte> kv(kv_.size(), std::byte{0});
    ASSERT_OK(fresh->Read(ns(), match.segments, kPages, Host(kv)));
    EXPECT_TRUE(kv == kv_);
    EXPECT_EQ(fresh->stats().checksum_failures, 0u);
  }

  // Waits until the node holds no lease and no unlinked blob, and its DRAM tier holds
  // `blob_bytes` more than before the test wrote; fails the test when that takes longer
  // than `bound` after `since`.
  void ExpectEverythingReclaimedWithin(absl::Time since, absl::Duration bound,
                                       uint64_t blob_bytes) {
    const uint64_t used = empty_dram_used_ + blob_bytes;
    const auto reclaimed = [used](const NodeTiers& t) {
      return t.engine.leases == 0 && t.engine.unlinked_blobs == 0 &&
             DramTier(t)->used_bytes == used;
    };
    absl::StatusOr<NodeTiers> tiers =
        WaitForTiers(*observer_, reclaimed, since + bound - absl::Now());
    ASSERT_OK(tiers.status());
    EXPECT_EQ(tiers->engine.leases, 0u);
    EXPECT_EQ(tiers->engine.unlinked_blobs, 0u);
    EXPECT_EQ(DramTier(*tiers)->used_bytes, used);
    std::printf("reclaimed %s after the kill or Delete (bound %s)\n",
                absl::FormatDuration(absl::Now() - since).c_str(),
                absl::FormatDuration(bound).c_str());
  }

  // The node still takes writes and serves reads.
  void ExpectTheNodeKeepsServing() {
    ASSERT_OK_AND_ASSIGN(HealthInfo health, observer_->Health());
    EXPECT_FALSE(health.draining);
    const std::vector<TokenId> tokens = RandomTokens(kSeed + 1, 8 * kPageTokens);
    const std::vector<std::byte> kv = PatternBytes(kSeed + 1, 8 * PageBytes());
    ASSERT_OK(observer_->Write(ns(), std::nullopt, tokens, Source(kv)));
    ASSERT_OK_AND_ASSIGN(MatchResult match, observer_->Match(ns(), tokens));
    ASSERT_EQ(match.matched_pages, 8u);
    std::vector<std::byte> back(kv.size());
    ASSERT_OK(observer_->Read(ns(), match.segments, 8, Host(back)));
    EXPECT_TRUE(back == kv);
  }

  static constexpr uint64_t kSeed = 77;
  static constexpr char kTenant[] = "recovery";
  std::unique_ptr<NodeProcess> node_;
  std::unique_ptr<Client> observer_;
  uint64_t empty_dram_used_ = 0;
  std::vector<TokenId> tokens_;
  std::vector<std::byte> kv_;
  WriteResult written_;
};

TEST_P(ClientKilledMidReadTest, ItsLeaseIsReclaimedAndTheBlobStaysIntact) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ChildReader> child, ChildReader::Start(Job()));
  ASSERT_OK(child->WaitForLine("read 1 ok", absl::Seconds(30)));
  StopWhileItHoldsALease(*child);
  if (HasFatalFailure()) return;
  ASSERT_OK_AND_ASSIGN(BlobInfo leased, observer_->Stat(written_.key));
  EXPECT_EQ(leased.leases, 1u);
  EXPECT_EQ(child->Kill(), 128 + SIGKILL) << child->Output();
  const absl::Time killed = absl::Now();

  // The lease ends (when the node notices the dead peer, or by expiry and the reaper at the
  // latest): the dead client leaked nothing, and the blob is still there.
  ExpectEverythingReclaimedWithin(killed, kMaxLeaseTtl + kReapInterval + kSlack, kv_.size());
  // Its bytes are intact for everyone else.
  ExpectAFreshClientReadsItIntact();
  // Nothing holds it any more: Delete unlinks it and frees its bytes at once.
  ASSERT_OK_AND_ASSIGN(DeleteResult deleted, observer_->Delete(written_.key));
  EXPECT_EQ(deleted.blobs_unlinked, 1u);
  ASSERT_OK_AND_ASSIGN(MatchResult miss, observer_->Match(ns(), tokens_));
  EXPECT_EQ(miss.matched_pages, 0u);
  ExpectEverythingReclaimedWithin(absl::Now(), kSlack, 0);
  ExpectTheNodeKeepsServing();
}

TEST_P(ClientKilledMidReadTest, BytesDeletedUnderItsLeaseAreFreedOnceItIsKilled) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ChildReader> child, ChildReader::Start(Job()));
  ASSERT_OK(child->WaitForLine("read 1 ok", absl::Seconds(30)));
  StopWhileItHoldsALease(*child);
  if (HasFatalFailure()) return;
  // Delete unlinks the blob at once (new readers miss it), but the stalled reader's lease
  // keeps its bytes allocated.
  ASSERT_OK_AND_ASSIGN(DeleteResult deleted, observer_->Delete(written_.key));
  EXPECT_EQ(deleted.blobs_unlinked, 1u);
  ASSERT_OK_AND_ASSIGN(MatchResult miss, observer_->Match(ns(), tokens_));
  EXPECT_EQ(miss.matched_pages, 0u);
  ASSERT_OK_AND_ASSIGN(NodeTiers held, observer_->Tiers());
  EXPECT_EQ(held.engine.leases, 1u);
  EXPECT_EQ(held.engine.unlinked_blobs, 1u);
  EXPECT_EQ(DramTier(held)->used_bytes, empty_dram_used_ + kv_.size());

  EXPECT_EQ(child->Kill(), 128 + SIGKILL) << child->Output();
  const absl::Time killed = absl::Now();
  ExpectEverythingReclaimedWithin(killed, kMaxLeaseTtl + kReapInterval + kSlack, 0);
  ExpectTheNodeKeepsServing();
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientKilledMidReadTest,
                         ::testing::Values(std::string("tcp"), std::string("tcp,shm,cma"),
                                           std::string(kSameHost)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return TransportTestName(info.param);
                         });

// ---------------------------------------------------------------- (b) a node restarted

// "127.0.0.1:PORT" -> PORT.
std::string PortOf(const std::string& address) { return address.substr(address.rfind(':') + 1); }

// A node whose data-plane listener may take a port that still has connections of a dead
// predecessor in TIME_WAIT: the data plane's listening socket has SO_REUSEADDR
// (store/transport/stream_socket.cc), which this test relies on.
absl::StatusOr<std::unique_ptr<NodeProcess>> StartRestartableNode(const std::string& ucx_tls,
                                                                  const std::string& grpc_listen,
                                                                  const std::string& dp_listen,
                                                                  bool wait_for_health = true) {
  NodeProcessOptions options;
  options.wait_for_health = wait_for_health;
  options.args = {absl::StrCat("--grpc_listen=", grpc_listen),
                  absl::StrCat("--dataplane_listen=", dp_listen)};
  options.env["UCX_TLS"] = ucx_tls == kSameHost ? "tcp" : ucx_tls;
  return NodeProcess::Start(std::move(options));
}

// A new node on the ports of the old one, returned as soon as it printed "ready" (its
// listeners are up; nothing has called it yet). Should a port be taken by someone else meanwhile
// (small chance), this retries for up to 10 s; NOT_FOUND when the ports stayed taken (the
// message says why).
absl::StatusOr<std::unique_ptr<NodeProcess>> RestartOnSamePorts(const std::string& ucx_tls,
                                                                const std::string& grpc_address,
                                                                const std::string& data_plane) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (true) {
    absl::StatusOr<std::unique_ptr<NodeProcess>> node =
        StartRestartableNode(ucx_tls, grpc_address, data_plane, /*wait_for_health=*/false);
    if (node.ok() || node.status().code() != absl::StatusCode::kFailedPrecondition) return node;
    // gRPC says "in use", UCX "Device is busy" (UCS_ERR_BUSY from EADDRINUSE).
    const bool taken = absl::StrContains(node.status().message(), "in use") ||
                       absl::StrContains(node.status().message(), "busy");
    if (!taken) return node.status();
    if (absl::Now() >= deadline) return absl::NotFoundError(node.status().message());
    absl::SleepFor(absl::Milliseconds(200));
  }
}

// A call during the outage: UNAVAILABLE or DEADLINE_EXCEEDED, within its deadline plus
// slack.
void ExpectFailsFast(const std::string& what,
                     const std::function<absl::Status(const CallOptions&)>& call) {
  constexpr absl::Duration kTimeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  const absl::Status s = call(CallOptions::WithTimeout(kTimeout));
  const absl::Duration took = absl::Now() - start;
  std::printf("while down, %s answered %s after %s\n", what.c_str(),
              std::string(absl::StatusCodeToString(s.code())).c_str(),
              absl::FormatDuration(took).c_str());
  EXPECT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
              s.code() == absl::StatusCode::kDeadlineExceeded)
      << what << ": " << s;
  EXPECT_LT(took, kTimeout + absl::Seconds(2)) << what;
}

class ClientReconnectTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ClientReconnectTest, SameClientReconnectsToANewNodeOnTheSamePorts) {
  const auto& [ucx_tls, stop_signal] = GetParam();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                       StartRestartableNode(ucx_tls, "127.0.0.1:0", "127.0.0.1:0"));
  const std::string grpc_address = node->grpc_address();
  const std::string data_plane = node->data_plane_address();
  ASSERT_NE(PortOf(grpc_address), "0");
  ASSERT_NE(PortOf(data_plane), "0");
  ClientOptions options = ClientOptionsFor(grpc_address, ucx_tls);
  options.default_timeout = absl::Seconds(10);
  options.retry = RetryOptions();  // the library's defaults, as an application has them
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));

  const Namespace ns = ClientTestNamespace("restart");
  constexpr uint32_t kPages = 32;
  const std::vector<TokenId> tokens = RandomTokens(5, kPages * kPageTokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, kPages);
  ASSERT_OK(client->Write(ns, std::nullopt, tokens, Source(kv)));
  ASSERT_OK_AND_ASSIGN(MatchResult before, client->Match(ns, tokens));
  ASSERT_EQ(before.matched_pages, kPages);
  std::vector<std::byte> back(kv.size());
  ASSERT_OK(client->Read(ns, before.segments, kPages, Host(back)));
  ASSERT_TRUE(back == kv);

  node->Signal(stop_signal);
  ASSERT_OK_AND_ASSIGN(int exit_code, node->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(exit_code, stop_signal == SIGKILL ? 128 + SIGKILL : 0) << node->StderrText();
  node.reset();

  // Down: every kind of call gives up within its deadline.
  ExpectFailsFast("Health", [&](const CallOptions& c) { return client->Health(c).status(); });
  ExpectFailsFast("Match",
                  [&](const CallOptions& c) { return client->Match(ns, tokens, c).status(); });
  ExpectFailsFast("Read", [&](const CallOptions& c) {
    return client->Read(ns, before.segments, kPages, Host(back), c);
  });
  ExpectFailsFast("Write", [&](const CallOptions& c) {
    return client->Write(ns, std::nullopt, tokens, Source(kv), c).status();
  });

  absl::StatusOr<std::unique_ptr<NodeProcess>> restarted =
      RestartOnSamePorts(ucx_tls, grpc_address, data_plane);
  if (restarted.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "the old node's ports stayed taken for 10 s: " << restarted.status();
  }
  ASSERT_OK(restarted.status());
  ASSERT_EQ((*restarted)->grpc_address(), grpc_address);
  ASSERT_EQ((*restarted)->data_plane_address(), data_plane);
  const absl::Time up = absl::Now();
  // The same Client, the new node: calls answer UNAVAILABLE (and nothing else) until the
  // client's gRPC channel has reconnected, which takes a few seconds at most. (Measured
  // here: ~3 s, most of it the kernel's SYN retransmission: the new connection tends to
  // reuse the 4-tuple of one the dead node left in TIME_WAIT.) The DRAM tier did not
  // survive: the old prefix is a miss (a node that never saw the namespace answers
  // NOT_FOUND), the old blob is NOT_FOUND.
  constexpr absl::Duration kReconnectBound = absl::Seconds(10);
  absl::StatusOr<MatchResult> cold;
  int unavailable = 0;
  while (true) {
    cold = client->Match(ns, tokens, CallOptions::WithTimeout(absl::Seconds(2)));
    if (cold.status().code() != absl::StatusCode::kUnavailable) break;
    ++unavailable;
    if (absl::Now() - up > kReconnectBound) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  const absl::Duration reconnected = absl::Now() - up;
  std::printf(
      "the same client got through %s after the new node was ready (%d calls answered "
      "UNAVAILABLE first)\n",
      absl::FormatDuration(reconnected).c_str(), unavailable);
  EXPECT_LE(reconnected, kReconnectBound);
  if (cold.ok()) {
    EXPECT_EQ(cold->matched_pages, 0u);
  } else {
    EXPECT_CODE(cold.status(), absl::StatusCode::kNotFound);
  }
  std::fill(back.begin(), back.end(), std::byte{0});
  EXPECT_CODE(client->Read(ns, before.segments, kPages, Host(back)), absl::StatusCode::kNotFound);

  // Both planes work again: a write (PUT_DATA over a new data-plane connection), a match
  // and a byte-exact read.
  ASSERT_OK_AND_ASSIGN(WriteResult again, client->Write(ns, std::nullopt, tokens, Source(kv)));
  EXPECT_FALSE(again.existed);
  ASSERT_OK_AND_ASSIGN(MatchResult after, client->Match(ns, tokens));
  ASSERT_EQ(after.matched_pages, kPages);
  std::fill(back.begin(), back.end(), std::byte{0});
  ASSERT_OK(client->Read(ns, after.segments, kPages, Host(back)));
  EXPECT_TRUE(back == kv);
  ASSERT_OK_AND_ASSIGN(const std::string lanes, client->DescribeDataPlane());
  EXPECT_NE(lanes.find("stream: tcp "), std::string::npos) << lanes;
  EXPECT_EQ(client->stats().checksum_failures, 0u);
  EXPECT_LT(absl::Now() - up, kReconnectBound + absl::Seconds(10));
}

INSTANTIATE_TEST_SUITE_P(TransportsAndSignals, ClientReconnectTest,
                         ::testing::Combine(::testing::Values(std::string("tcp"),
                                                              std::string("tcp,shm,cma"),
                                                              std::string(kSameHost)),
                                            ::testing::Values(SIGKILL, SIGTERM)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
                           return absl::StrCat(
                               TransportTestName(std::get<0>(info.param)),
                               std::get<1>(info.param) == SIGKILL ? "Sigkill" : "Sigterm");
                         });

}  // namespace
}  // namespace strata::integration::client_recovery_test

// The test binary, or (arguments --recovery_child GRPC TLS TENANT PAGES SEED) the child
// reader. strata_add_test links gtest_main, whose main() this one replaces (a static
// archive member is only linked when main is undefined).
int main(int argc, char** argv) {
  using strata::integration::client_recovery_test::kChildFlag;
  if (argc >= 2 && std::strcmp(argv[1], kChildFlag) == 0) {
    strata::integration::client_recovery_test::ChildRead job;
    if (argc != 7 || !absl::SimpleAtoi(argv[5], &job.pages) ||
        !absl::SimpleAtoi(argv[6], &job.seed)) {
      std::fprintf(stderr, "usage: %s %s GRPC TLS TENANT PAGES SEED\n", argv[0], kChildFlag);
      return 2;
    }
    job.grpc_address = argv[2];
    job.ucx_tls = argv[3];
    job.tenant = argv[4];
    return strata::integration::client_recovery_test::RunChild(job);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
