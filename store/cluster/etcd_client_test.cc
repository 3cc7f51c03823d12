// EtcdClient against a real etcd (Debian's etcd-server) on loopback.
#include "strata/store/cluster/etcd_client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/testing/etcd_process.h"
#include "strata/testing/process.h"

namespace strata::store::cluster {
namespace {

using strata::testing::EtcdProcess;

class EtcdClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdProcess::Start());
    ASSERT_OK_AND_ASSIGN(client_, EtcdClient::Create({.endpoints = {etcd_->endpoint()}}));
  }

  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<EtcdClient> client_;
};

// What a watch delivered, for a test thread to wait on.
struct Delivered {
  absl::Mutex mu;
  std::vector<WatchEvent> events ABSL_GUARDED_BY(mu);
  std::vector<absl::Status> resets ABSL_GUARDED_BY(mu);

  bool WaitForEvents(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return events.size() >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
  bool WaitForResets(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return resets.size() >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
};

std::unique_ptr<EtcdClient::Watch> WatchInto(EtcdClient* client, const std::string& prefix,
                                             int64_t revision, Delivered* delivered) {
  return client->WatchPrefix(
      prefix, revision,
      [delivered](const std::vector<WatchEvent>& events, int64_t) {
        absl::MutexLock lock(&delivered->mu);
        delivered->events.insert(delivered->events.end(), events.begin(), events.end());
      },
      [delivered](const absl::Status& status) {
        absl::MutexLock lock(&delivered->mu);
        delivered->resets.push_back(status);
      });
}

TEST(EtcdClientOptionsTest, BadEndpointsAreInvalidArgument) {
  EXPECT_CODE(EtcdClient::Create({}).status(), absl::StatusCode::kInvalidArgument);
  for (const std::string bad : {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", ":2379", "x:y"}) {
    EXPECT_CODE(EtcdClient::Create({.endpoints = {bad}}).status(),
                absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_OK(EtcdClient::Create({.endpoints = {"127.0.0.1:2379", "127.0.0.2:2379"}}).status());
  EXPECT_OK(EtcdClient::Create({.endpoints = {"localhost:2379"}}).status());
}

TEST(EtcdClientOptionsTest, PrefixEndIsTheNextKeyAfterThePrefix) {
  EXPECT_EQ(PrefixEnd("/strata/a/"), "/strata/a0");
  EXPECT_EQ(PrefixEnd("ab\xff"), "ac");
  EXPECT_EQ(PrefixEnd("\xff\xff"), std::string(1, '\0'));
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
}

TEST(EtcdClientOptionsTest, AnUnreachableEtcdIsUnavailableWithinTheCallTimeout) {
  // A port nothing listens on: connection refused.
  ASSERT_OK_AND_ASSIGN(auto client, EtcdClient::Create({.endpoints = {"127.0.0.1:1"},
                                                        .call_timeout = absl::Milliseconds(300)}));
  const absl::Time start = absl::Now();
  const absl::StatusOr<int64_t> put = client->Put("/k", "v");
  EXPECT_CODE(put.status(), absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_FALSE(client->GrantLease(absl::Seconds(5)).ok());
}

TEST_F(EtcdClientTest, KeysPrefixesAndPutIfAbsent) {
  ASSERT_OK_AND_ASSIGN(const int64_t r1, client_->Put("/t/b", "2"));
  ASSERT_OK_AND_ASSIGN(const int64_t r2, client_->Put("/t/a", "1"));
  EXPECT_GT(r2, r1);
  ASSERT_OK(client_->Put("/u/c", "3").status());

  ASSERT_OK_AND_ASSIGN(RangeResult one, client_->Get("/t/a"));
  ASSERT_EQ(one.kvs.size(), 1u);
  EXPECT_EQ(one.kvs[0].value, "1");
  EXPECT_EQ(one.kvs[0].mod_revision, r2);
  EXPECT_GE(one.revision, r2);
  ASSERT_OK_AND_ASSIGN(RangeResult absent, client_->Get("/t/zz"));
  EXPECT_TRUE(absent.kvs.empty());

  ASSERT_OK_AND_ASSIGN(RangeResult prefix, client_->GetPrefix("/t/"));
  ASSERT_EQ(prefix.kvs.size(), 2u);
  EXPECT_EQ(prefix.kvs[0].key, "/t/a");  // ascending
  EXPECT_EQ(prefix.kvs[1].key, "/t/b");

  ASSERT_OK_AND_ASSIGN(bool set, client_->PutIfAbsent("/t/a", "other"));
  EXPECT_FALSE(set);
  ASSERT_OK_AND_ASSIGN(RangeResult unchanged, client_->Get("/t/a"));
  EXPECT_EQ(unchanged.kvs[0].value, "1");
  ASSERT_OK_AND_ASSIGN(set, client_->PutIfAbsent("/t/new", "fresh"));
  EXPECT_TRUE(set);

  ASSERT_OK_AND_ASSIGN(int64_t deleted, client_->Delete("/t/b"));
  EXPECT_EQ(deleted, 1);
  ASSERT_OK_AND_ASSIGN(deleted, client_->DeletePrefix("/t/"));
  EXPECT_EQ(deleted, 2);
  ASSERT_OK_AND_ASSIGN(RangeResult rest, client_->GetPrefix("/"));
  ASSERT_EQ(rest.kvs.size(), 1u);
  EXPECT_EQ(rest.kvs[0].key, "/u/c");
  EXPECT_CODE(client_->Put("", "v").status(), absl::StatusCode::kInvalidArgument);
}

TEST_F(EtcdClientTest, ALeaseKeepsItsKeysOnlyWhileRefreshed) {
  ASSERT_OK_AND_ASSIGN(LeaseGrant lease, client_->GrantLease(absl::Seconds(2)));
  EXPECT_GE(lease.ttl, absl::Seconds(2));
  ASSERT_OK(client_->Put("/lease/k", "v", lease.id).status());
  ASSERT_OK_AND_ASSIGN(RangeResult got, client_->Get("/lease/k"));
  ASSERT_EQ(got.kvs.size(), 1u);
  EXPECT_EQ(got.kvs[0].lease, lease.id);

  // Refreshed for longer than the TTL: the key stays.
  const absl::Time until = absl::Now() + lease.ttl + absl::Seconds(1);
  while (absl::Now() < until) {
    ASSERT_OK_AND_ASSIGN(absl::Duration left, client_->KeepAlive(lease.id));
    EXPECT_GT(left, absl::ZeroDuration());
    absl::SleepFor(absl::Milliseconds(300));
  }
  ASSERT_OK_AND_ASSIGN(got, client_->Get("/lease/k"));
  EXPECT_EQ(got.kvs.size(), 1u);

  // Left alone: gone within the TTL (etcd checks expiry every 500 ms).
  const absl::Time gone_by = absl::Now() + lease.ttl + absl::Seconds(2);
  for (;;) {
    ASSERT_OK_AND_ASSIGN(got, client_->Get("/lease/k"));
    if (got.kvs.empty()) break;
    ASSERT_LT(absl::Now(), gone_by) << "the key outlived its lease";
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_CODE(client_->KeepAlive(lease.id).status(), absl::StatusCode::kNotFound);
  EXPECT_OK(client_->RevokeLease(lease.id));  // already gone: fine

  // A revoked lease takes its keys at once.
  ASSERT_OK_AND_ASSIGN(LeaseGrant second, client_->GrantLease(absl::Seconds(30)));
  ASSERT_OK(client_->Put("/lease/k2", "v", second.id).status());
  ASSERT_OK(client_->RevokeLease(second.id));
  ASSERT_OK_AND_ASSIGN(got, client_->Get("/lease/k2"));
  EXPECT_TRUE(got.kvs.empty());
  // A key cannot be attached to a lease that does not exist.
  EXPECT_CODE(client_->Put("/lease/k3", "v", second.id).status(), absl::StatusCode::kNotFound);
}

TEST_F(EtcdClientTest, AWatchDeliversInOrderAndResumesAfterEtcdRestarts) {
  Delivered delivered;
  std::unique_ptr<EtcdClient::Watch> watch = WatchInto(client_.get(), "/w/", 0, &delivered);
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (!watch->established() && absl::Now() < until) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_TRUE(watch->established());

  ASSERT_OK(client_->Put("/w/a", "1").status());
  ASSERT_OK(client_->Put("/other", "x").status());  // not under the prefix
  ASSERT_OK(client_->Put("/w/b", "2").status());
  ASSERT_OK(client_->Delete("/w/a").status());
  ASSERT_TRUE(delivered.WaitForEvents(3, absl::Seconds(10)));

  etcd_->Kill();
  ASSERT_TRUE(delivered.WaitForResets(1, absl::Seconds(10)));
  EXPECT_FALSE(watch->established());
  ASSERT_OK(etcd_->Restart());
  // A write after the restart arrives on the resumed watch, nothing before it twice.
  for (absl::Time stop = absl::Now() + absl::Seconds(15);;) {
    const absl::Status put = client_->Put("/w/c", "3").status();
    if (put.ok()) break;
    ASSERT_LT(absl::Now(), stop) << "etcd did not come back: " << put;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(delivered.WaitForEvents(4, absl::Seconds(15)));
  absl::SleepFor(absl::Milliseconds(200));
  absl::MutexLock lock(&delivered.mu);
  ASSERT_EQ(delivered.events.size(), 4u);
  const std::vector<std::string> keys = {"/w/a", "/w/b", "/w/a", "/w/c"};
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(delivered.events[i].kv.key, keys[i]) << i;
    if (i > 0) {
      EXPECT_GT(delivered.events[i].kv.mod_revision, delivered.events[i - 1].kv.mod_revision);
    }
  }
  EXPECT_EQ(delivered.events[2].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(delivered.events[3].kv.value, "3");
  EXPECT_TRUE(absl::IsUnavailable(delivered.resets[0]) || absl::IsCancelled(delivered.resets[0]))
      << delivered.resets[0];
}

TEST_F(EtcdClientTest, AWatchFromACompactedRevisionEndsOutOfRange) {
  ASSERT_OK_AND_ASSIGN(const int64_t first, client_->Put("/c/a", "1"));
  ASSERT_OK(client_->Put("/c/a", "2").status());
  ASSERT_OK_AND_ASSIGN(const int64_t last, client_->Put("/c/a", "3"));
  ASSERT_OK_AND_ASSIGN(
      const strata::testing::ProgramResult compacted,
      strata::testing::RunProgram(
          "/usr/bin/etcdctl", {"--endpoints=" + etcd_->endpoint(), "compact", std::to_string(last)},
          {.env = {{"ETCDCTL_API", "3"}}}));
  ASSERT_EQ(compacted.exit_code, 0) << compacted.out << compacted.err;

  Delivered delivered;
  std::unique_ptr<EtcdClient::Watch> watch = WatchInto(client_.get(), "/c/", first, &delivered);
  ASSERT_TRUE(delivered.WaitForResets(1, absl::Seconds(10)));
  absl::MutexLock lock(&delivered.mu);
  EXPECT_CODE(delivered.resets[0], absl::StatusCode::kOutOfRange);
  EXPECT_NE(delivered.resets[0].message().find("compacted"), std::string::npos);
  EXPECT_TRUE(delivered.events.empty());
}

}  // namespace
}  // namespace strata::store::cluster
