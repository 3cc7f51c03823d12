#include "strata/store/node/node_config.h"

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::node {
namespace {

TEST(ParseListenAddressTest, HostPortForms) {
  std::string host;
  int port = -1;
  ASSERT_OK(ParseListenAddress("127.0.0.1:7400", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 7400);
  ASSERT_OK(ParseListenAddress("[::1]:0", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  ASSERT_OK(ParseListenAddress("localhost:65535", &host, &port));
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", ":7400", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:7x", "::1:7400", "[]:1"}) {
    EXPECT_CODE(ParseListenAddress(bad, &host, &port), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SetNodeOptionTest, EveryKeyOfTheTableIsSettable) {
  std::set<std::string> keys;
  for (const NodeOption& option : NodeOptions()) {
    EXPECT_TRUE(keys.insert(std::string(option.key)).second) << "duplicate " << option.key;
    EXPECT_FALSE(option.help.empty()) << option.key;
    EXPECT_FALSE(option.default_text.empty()) << option.key;
  }
  EXPECT_TRUE(keys.count("grpc_listen") && keys.count("dram_bytes") && keys.count("lease_ttl") &&
              keys.count("put_ttl") && keys.count("data_dir") && keys.count("config"));
  const std::string usage = UsageText();
  for (const std::string& key : keys) {
    EXPECT_NE(usage.find("--" + key + "="), std::string::npos) << key;
  }
}

TEST(SetNodeOptionTest, AppliesValues) {
  NodeConfig config;
  ASSERT_OK(SetNodeOption("grpc_listen", "0.0.0.0:0", &config));
  EXPECT_EQ(config.grpc_listen, "0.0.0.0:0");
  ASSERT_OK(SetNodeOption("dram_bytes", "256MiB", &config));
  EXPECT_EQ(config.dram_bytes, uint64_t{256} << 20);
  ASSERT_OK(SetNodeOption("dram_bytes", "auto", &config));
  EXPECT_EQ(config.dram_bytes, 0u);
  ASSERT_OK(SetNodeOption("lease_ttl", "1500ms", &config));
  EXPECT_EQ(config.lease_ttl, absl::Milliseconds(1500));
  ASSERT_OK(SetNodeOption("put_ttl", "2m", &config));
  EXPECT_EQ(config.put_ttl, absl::Minutes(2));
  ASSERT_OK(SetNodeOption("dram_hugetlb", "off", &config));
  EXPECT_FALSE(config.dram_hugetlb);
  ASSERT_OK(SetNodeOption("log_level", "WARNING", &config));
  EXPECT_EQ(config.log_level, "warning");
  ASSERT_OK(SetNodeOption("data_dir", "/tmp/x y", &config));
  EXPECT_EQ(config.data_dir, "/tmp/x y");
  EXPECT_TRUE(IsBoolOption("dram_populate"));
  EXPECT_FALSE(IsBoolOption("dram_bytes"));
}

TEST(SetNodeOptionTest, Errors) {
  NodeConfig config;
  EXPECT_CODE(SetNodeOption("no_such_key", "1", &config), absl::StatusCode::kNotFound);
  const absl::Status bad_ttl = SetNodeOption("lease_ttl", "30", &config);
  EXPECT_CODE(bad_ttl, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_ttl.message().substr(0, 11), "lease_ttl: ");
  EXPECT_CODE(SetNodeOption("put_ttl", "-5s", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("dram_bytes", "1KiB", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("grpc_listen", "nowhere", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("dram_hugetlb", "maybe", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("log_level", "debug", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("config", "x.conf", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.grpc_listen, "127.0.0.1:7400");  // failed sets change nothing
}

TEST(NodeConfigTest, HttpListenTakesAnAddressOrEmptyForOff) {
  NodeConfig config;
  ASSERT_OK(SetNodeOption("http_listen", "127.0.0.1:0", &config));
  EXPECT_EQ(config.http_listen, "127.0.0.1:0");
  ASSERT_OK(SetNodeOption("http_listen", "", &config));
  EXPECT_EQ(config.http_listen, "");
  EXPECT_OK(config.Validate());
  EXPECT_CODE(SetNodeOption("http_listen", "7402", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.http_listen, "");
}

TEST(NodeConfigTest, DefaultsAreValidAndOnLoopback) {
  const NodeConfig config;
  EXPECT_OK(config.Validate());
  EXPECT_EQ(config.grpc_listen, "127.0.0.1:7400");
  EXPECT_EQ(config.dataplane_listen, "127.0.0.1:7401");
  EXPECT_EQ(config.http_listen, "127.0.0.1:7402");
  EXPECT_EQ(config.data_dir, "./var");
  EXPECT_EQ(config.lease_ttl, absl::Seconds(30));
  EXPECT_EQ(config.put_ttl, absl::Seconds(60));
}

TEST(NodeConfigTest, ValidateCatchesCombinations) {
  NodeConfig config;
  config.lease_ttl = absl::Minutes(11);
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
  config = NodeConfig();
  config.max_blob_bytes = (uint64_t{1} << 30) + 1;
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
  config = NodeConfig();
  config.put_ttl = absl::ZeroDuration();
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
}

TEST(SetNodeOptionTest, TierOptions) {
  NodeConfig config;
  EXPECT_EQ(config.ssd_bytes, uint64_t{2} << 30);
  EXPECT_TRUE(config.ssd_preallocate);
  EXPECT_EQ(config.ssd_queue_depth, 32u);
  EXPECT_EQ(config.dram_policy, "branch-lru");
  EXPECT_EQ(config.ssd_policy, "branch-lru");
  EXPECT_EQ(config.text_bytes, uint64_t{64} << 20);
  EXPECT_EQ(config.rebuild_task_ttl, absl::Seconds(30));
  EXPECT_TRUE(config.meta);
  config.data_dir = "/srv/x";
  EXPECT_EQ(config.SsdPath(), "/srv/x/ssd.tier");
  EXPECT_EQ(config.MetaDir(), "/srv/x/meta");

  ASSERT_OK(SetNodeOption("ssd_bytes", "1000000", &config));
  EXPECT_EQ(config.ssd_bytes, uint64_t{15} << 16);  // rounded down to 64 KiB
  ASSERT_OK(SetNodeOption("ssd_path", "/dev/nvme0n1", &config));
  EXPECT_EQ(config.SsdPath(), "/dev/nvme0n1");
  ASSERT_OK(SetNodeOption("ssd_bytes", "0", &config));
  EXPECT_EQ(config.SsdPath(), "");  // no SSD tier
  ASSERT_OK(SetNodeOption("ssd_preallocate", "false", &config));
  EXPECT_FALSE(config.ssd_preallocate);
  ASSERT_OK(SetNodeOption("dram_policy", "gdsf", &config));
  EXPECT_EQ(config.dram_policy, "gdsf");
  ASSERT_OK(SetNodeOption("ssd_policy", "branch-lru", &config));
  EXPECT_EQ(config.ssd_policy, "branch-lru");
  EXPECT_EQ(config.admission, "always");
  ASSERT_OK(SetNodeOption("admission", "reuse", &config));
  EXPECT_EQ(config.admission, "reuse");
  ASSERT_OK(SetNodeOption("ssd_queue_depth", "128", &config));
  EXPECT_EQ(config.ssd_queue_depth, 128u);
  ASSERT_OK(SetNodeOption("dram_high_watermark", "0.9", &config));
  ASSERT_OK(SetNodeOption("dram_low_watermark", "0.5", &config));
  EXPECT_DOUBLE_EQ(config.dram_high_watermark, 0.9);
  EXPECT_DOUBLE_EQ(config.dram_low_watermark, 0.5);
  ASSERT_OK(SetNodeOption("text_bytes", "0", &config));
  EXPECT_EQ(config.text_bytes, 0u);
  ASSERT_OK(SetNodeOption("rebuild_task_ttl", "2m", &config));
  EXPECT_EQ(config.rebuild_task_ttl, absl::Minutes(2));
  ASSERT_OK(SetNodeOption("max_rebuild_attempts", "7", &config));
  EXPECT_EQ(config.max_rebuild_attempts, 7u);
  EXPECT_EQ(config.mrc_sampled_keys, 8192u);
  ASSERT_OK(SetNodeOption("mrc_sampled_keys", "0", &config));
  EXPECT_EQ(config.mrc_sampled_keys, 0u);
  ASSERT_OK(SetNodeOption("mrc_curve_points", "64", &config));
  EXPECT_EQ(config.mrc_curve_points, 64u);
  ASSERT_OK(SetNodeOption("meta_dir", "/fast/meta", &config));
  EXPECT_EQ(config.MetaDir(), "/fast/meta");
  ASSERT_OK(SetNodeOption("meta", "off", &config));
  EXPECT_EQ(config.MetaDir(), "");
  EXPECT_TRUE(IsBoolOption("meta"));
  EXPECT_TRUE(IsBoolOption("ssd_preallocate"));
  EXPECT_OK(config.Validate());
}

TEST(SetNodeOptionTest, TierOptionErrorsNameTheKey) {
  NodeConfig config;
  const absl::Status policy = SetNodeOption("dram_policy", "clock-pro", &config);
  EXPECT_CODE(policy, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(policy.message().substr(0, 13), "dram_policy: ") << policy;
  EXPECT_NE(policy.message().find("clock-pro"), std::string::npos) << policy;
  EXPECT_CODE(SetNodeOption("ssd_policy", "", &config), absl::StatusCode::kInvalidArgument);
  const absl::Status admission = SetNodeOption("admission", "never", &config);
  EXPECT_CODE(admission, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(admission.message().substr(0, 11), "admission: ") << admission;
  EXPECT_CODE(SetNodeOption("ssd_bytes", "4KiB", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("ssd_path", "", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("ssd_queue_depth", "0", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("ssd_queue_depth", "99999", &config),
              absl::StatusCode::kInvalidArgument);
  for (const char* bad : {"0", "1.5", "-0.1", "nan", "95%", "x"}) {
    EXPECT_CODE(SetNodeOption("dram_high_watermark", bad, &config),
                absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_CODE(SetNodeOption("rebuild_task_ttl", "soon", &config),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("mrc_curve_points", "0", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("mrc_sampled_keys", "5000000", &config),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("max_rebuild_attempts", "0", &config),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("meta", "maybe", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SetNodeOption("meta_dir", "", &config), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.dram_policy, "branch-lru");  // failed sets change nothing
  EXPECT_EQ(config.ssd_bytes, uint64_t{2} << 30);
}

TEST(NodeConfigTest, ValidateCatchesTierCombinations) {
  NodeConfig config;
  config.dram_low_watermark = 0.96;  // above high (0.95)
  absl::Status status = config.Validate();
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().substr(0, 20), "dram_low_watermark: ") << status;
  config.dram_low_watermark = config.dram_high_watermark;  // equal is fine
  EXPECT_OK(config.Validate());
  config.dram_high_watermark = 0;
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);

  config = NodeConfig();
  config.ssd_bytes = 100000;  // set in code, not through the table: not rounded
  status = config.Validate();
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().substr(0, 11), "ssd_bytes: ") << status;
  config = NodeConfig();
  config.ssd_policy = "fifo";
  status = config.Validate();
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().substr(0, 12), "ssd_policy: ") << status;
  config = NodeConfig();
  config.admission = "sometimes";
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
  config = NodeConfig();
  config.rebuild_task_ttl = absl::ZeroDuration();
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
  config = NodeConfig();
  config.ssd_queue_depth = 0;
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
}

// docs/operations.md has one table row per option ("| `key` | ..."), so the documentation
// cannot silently fall behind the table.
TEST(NodeConfigTest, OperationsDocListsEveryOption) {
  std::ifstream in(STRATA_OPERATIONS_DOC);
  ASSERT_TRUE(in.good()) << STRATA_OPERATIONS_DOC;
  std::ostringstream text;
  text << in.rdbuf();
  for (const NodeOption& option : NodeOptions()) {
    const std::string row = "| `" + std::string(option.key) + "` | ";
    EXPECT_NE(text.str().find(row), std::string::npos)
        << "docs/operations.md has no row for option " << option.key;
  }
}

// Issue 12, item 8: no authentication means loopback only, unless told `insecure`; the HTTP
// endpoint (never authenticated) needs `insecure` off loopback in any case.
TEST(NodeConfigTest, ExposureWithoutAuthenticationNeedsInsecure) {
  NodeConfig config;
  EXPECT_OK(config.CheckExposure());  // the defaults: all loopback
  for (std::string* address : {&config.grpc_listen, &config.dataplane_listen}) {
    NodeConfig exposed = config;
    const std::string key = address == &config.grpc_listen ? "grpc_listen" : "dataplane_listen";
    *(address == &config.grpc_listen ? &exposed.grpc_listen : &exposed.dataplane_listen) =
        "0.0.0.0:7400";
    const absl::Status refused = exposed.CheckExposure();
    EXPECT_CODE(refused, absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.message().find(key), absl::string_view::npos) << refused;
    EXPECT_NE(refused.message().find("--insecure"), absl::string_view::npos) << refused;
    exposed.tenants_file = "/etc/strata/tenants.json";
    EXPECT_OK(exposed.CheckExposure());
    exposed.tenants_file.clear();
    exposed.insecure = true;
    EXPECT_OK(exposed.CheckExposure());
  }
  NodeConfig http = config;
  http.http_listen = "[::]:7402";
  http.tenants_file = "/etc/strata/tenants.json";
  EXPECT_CODE(http.CheckExposure(), absl::StatusCode::kFailedPrecondition);
  http.insecure = true;
  EXPECT_OK(http.CheckExposure());
  http.insecure = false;
  http.http_listen = "";
  EXPECT_OK(http.CheckExposure());
  for (const char* host : {"127.0.0.1", "127.8.9.10", "::1", "localhost"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.7", "128.0.0.1", "localhost.example"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:0"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:7400"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:7400"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1"));  // no port: not an address
}

TEST(NodeConfigTest, TlsFilesComeInPairsAndMutualTlsNeedsTls) {
  NodeConfig config;
  config.tls_cert_file = "server.pem";
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
  config.tls_key_file = "server.key";
  EXPECT_OK(config.Validate());
  config.tls_client_ca_file = "ca.pem";
  EXPECT_OK(config.Validate());
  config.tls_cert_file.clear();
  config.tls_key_file.clear();
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
}

TEST(NodeConfigTest, AuthenticationOptionsParseAndValidate) {
  NodeConfig config;
  ASSERT_OK(SetNodeOption("tenants_file", "/etc/strata/tenants.json", &config));
  EXPECT_EQ(config.tenants_file, "/etc/strata/tenants.json");
  ASSERT_OK(SetNodeOption("insecure", "true", &config));
  EXPECT_TRUE(config.insecure);
  ASSERT_OK(SetNodeOption("dataplane_credential_ttl", "90s", &config));
  EXPECT_EQ(config.dataplane_credential_ttl, absl::Seconds(90));
  EXPECT_OK(config.Validate());
  config.dataplane_credential_ttl = absl::Milliseconds(500);
  EXPECT_CODE(config.Validate(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::store::node
