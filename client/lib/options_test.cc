#include "strata/options.h"

#include <cstdlib>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata {
namespace {

class EnvGuard {
 public:
  EnvGuard() { Clear(); }
  ~EnvGuard() { Clear(); }

 private:
  static void Clear() {
    for (const char* name : {"STRATA_NODE", "STRATA_UCX_TLS", "STRATA_TOKEN", "STRATA_TLS_CA"}) {
      unsetenv(name);
    }
  }
};

TEST(ClientOptionsTest, DefaultsAreValid) {
  EnvGuard env;
  const ClientOptions options = ClientOptions::FromEnvironment();
  EXPECT_EQ(options.node, "127.0.0.1:7400");
  EXPECT_EQ(options.ucx_transports, "");
  EXPECT_OK(options.Validate());
  EXPECT_OK(ClientOptions{}.Validate());
}

TEST(ClientOptionsTest, EnvironmentOverridesNodeAndTransports) {
  EnvGuard env;
  setenv("STRATA_NODE", "10.1.2.3:9000", 1);
  setenv("STRATA_UCX_TLS", "tcp", 1);
  const ClientOptions options = ClientOptions::FromEnvironment();
  EXPECT_EQ(options.node, "10.1.2.3:9000");
  EXPECT_EQ(options.ucx_transports, "tcp");
  EXPECT_OK(options.Validate());
}

TEST(ClientOptionsTest, EnvironmentGivesTokenAndTls) {
  EnvGuard env;
  setenv("STRATA_TOKEN", "token-0123456789abcdef", 1);
  setenv("STRATA_TLS_CA", "/etc/strata/ca.pem", 1);
  const ClientOptions options = ClientOptions::FromEnvironment();
  EXPECT_EQ(options.token, "token-0123456789abcdef");
  EXPECT_TRUE(options.tls);
  EXPECT_EQ(options.tls_ca_file, "/etc/strata/ca.pem");
  EXPECT_OK(options.Validate());
}

TEST(ClientOptionsTest, TokenAndTlsFieldsAreChecked) {
  ClientOptions options;
  for (const char* bad : {"has space", "tab\there", "new\nline", "\x7f", "caf\xc3\xa9"}) {
    options.token = bad;
    EXPECT_CODE(options.Validate(), absl::StatusCode::kInvalidArgument) << bad;
  }
  options.token = "ok-token";
  options.tls_ca_file = "ca.pem";  // without tls
  EXPECT_CODE(options.Validate(), absl::StatusCode::kInvalidArgument);
  options.tls = true;
  EXPECT_OK(options.Validate());
  options.tls_cert_file = "client.pem";  // without its key
  EXPECT_CODE(options.Validate(), absl::StatusCode::kInvalidArgument);
  options.tls_key_file = "client.key";
  EXPECT_OK(options.Validate());
}

TEST(ClientOptionsTest, EmptyEnvironmentValuesKeepDefaults) {
  EnvGuard env;
  setenv("STRATA_NODE", "", 1);
  EXPECT_EQ(ClientOptions::FromEnvironment().node, "127.0.0.1:7400");
}

TEST(ClientOptionsTest, NodeAddress) {
  ClientOptions options;
  for (const char* good : {"localhost:1", "127.0.0.1:65535", "[::1]:7400", "node-7.example:80"}) {
    options.node = good;
    EXPECT_OK(options.Validate()) << good;
  }
  for (const char* bad : {"", "127.0.0.1", ":7400", "host:", "host:0", "host:65536", "host:x",
                          "[::1:7400", "[]:7400", "host:-1"}) {
    options.node = bad;
    EXPECT_CODE(options.Validate(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ClientOptionsTest, EachBadFieldIsNamed) {
  struct Case {
    void (*mutate)(ClientOptions*);
    const char* field;
  };
  const Case cases[] = {
      {[](ClientOptions* o) { o->default_timeout = absl::ZeroDuration(); }, "default_timeout"},
      {[](ClientOptions* o) { o->connect_timeout = -absl::Seconds(1); }, "connect_timeout"},
      {[](ClientOptions* o) { o->lease_ttl = -absl::Seconds(1); }, "lease_ttl"},
      {[](ClientOptions* o) { o->retry.max_retries = -1; }, "max_retries"},
      {[](ClientOptions* o) { o->retry.initial_backoff = absl::ZeroDuration(); },
       "initial_backoff"},
      {[](ClientOptions* o) { o->retry.max_backoff = absl::Milliseconds(1); }, "max_backoff"},
      {[](ClientOptions* o) { o->retry.multiplier = 0.5; }, "multiplier"},
      {[](ClientOptions* o) { o->retry.jitter = 1.5; }, "jitter"},
      {[](ClientOptions* o) { o->ucx_transports = "shm,cma"; }, "ucx_transports"},
      {[](ClientOptions* o) { o->put_message_bytes = 100; }, "put_message_bytes"},
      {[](ClientOptions* o) { o->async_threads = 0; }, "async_threads"},
      {[](ClientOptions* o) { o->reads_in_flight = 0; }, "reads_in_flight"},
      {[](ClientOptions* o) {
         o->cluster = "etcd://127.0.0.1:2379/a";
         o->cluster_nodes = {"127.0.0.1:7400"};
       },
       "cluster and cluster_nodes"},
      {[](ClientOptions* o) {
         o->cluster_nodes = {"127.0.0.1:7400"};
         o->segment_pages = 0;
       },
       "segment_pages"},
      {[](ClientOptions* o) {
         o->cluster_nodes = {"127.0.0.1:7400"};
         o->text_replicas = 0;
       },
       "text_replicas"},
      {[](ClientOptions* o) {
         o->cluster_nodes = {"127.0.0.1:7400"};
         o->node_timeout = absl::ZeroDuration();
       },
       "node_timeout"},
      {[](ClientOptions* o) {
         o->cluster_nodes = {"127.0.0.1:7400", "nohost"};
       },
       "cluster_nodes"},
  };
  for (const Case& c : cases) {
    ClientOptions options;
    c.mutate(&options);
    const absl::Status status = options.Validate();
    EXPECT_CODE(status, absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(status.message().find(c.field), absl::string_view::npos) << status;
  }
}

// With a cluster, `node` is not used (and not checked).
TEST(ClientOptionsTest, AClusterReplacesTheNode) {
  ClientOptions options;
  EXPECT_FALSE(options.on_cluster());
  options.node = "not an address";
  options.cluster = "etcd://127.0.0.1:2379/a";
  EXPECT_TRUE(options.on_cluster());
  EXPECT_OK(options.Validate());
}

TEST(ClientOptionsTest, TransportListsThatKeepTcp) {
  ClientOptions options;
  for (const char* good : {"tcp", "tcp,shm,cma", "shm,tcp", "all", "^shm"}) {
    options.ucx_transports = good;
    EXPECT_OK(options.Validate()) << good;
  }
  for (const char* bad : {"shm", "cma,shm", "^tcp"}) {
    options.ucx_transports = bad;
    EXPECT_CODE(options.Validate(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(CallOptionsTest, WithTimeoutSetsAnAbsoluteDeadline) {
  const absl::Time before = absl::Now();
  const CallOptions call = CallOptions::WithTimeout(absl::Seconds(3));
  EXPECT_GE(call.deadline, before + absl::Seconds(3));
  EXPECT_LE(call.deadline, absl::Now() + absl::Seconds(3));
  EXPECT_EQ(CallOptions{}.deadline, absl::InfiniteFuture());
}

}  // namespace
}  // namespace strata
