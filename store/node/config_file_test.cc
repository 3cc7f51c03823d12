#include "strata/store/node/config_file.h"

#include <string>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::node {
namespace {

TEST(ConfigFileTest, ParsesKeyValueLinesCommentsAndQuotes) {
  const std::string text =
      "# strata-node config\n"
      "\n"
      "grpc_listen = 127.0.0.1:0\n"
      "   dram_bytes=64MiB   \n"
      "\t# indented comment\n"
      "data_dir = \"/tmp/with # hash\"\n"
      "lease_ttl = 5s";  // no trailing newline
  ASSERT_OK_AND_ASSIGN(std::vector<ConfigEntry> entries, ParseConfigText(text, "n.conf"));
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].key, "grpc_listen");
  EXPECT_EQ(entries[0].value, "127.0.0.1:0");
  EXPECT_EQ(entries[0].line, 3);
  EXPECT_EQ(entries[1].key, "dram_bytes");
  EXPECT_EQ(entries[1].value, "64MiB");
  EXPECT_EQ(entries[2].value, "/tmp/with # hash");
  EXPECT_EQ(entries[3].line, 7);

  NodeConfig config;
  ASSERT_OK(ApplyConfigText(text, "n.conf", &config));
  EXPECT_EQ(config.grpc_listen, "127.0.0.1:0");
  EXPECT_EQ(config.dram_bytes, uint64_t{64} << 20);
  EXPECT_EQ(config.data_dir, "/tmp/with # hash");
  EXPECT_EQ(config.lease_ttl, absl::Seconds(5));
}

void ExpectError(const std::string& text, const std::string& message) {
  NodeConfig config;
  const absl::Status status = ApplyConfigText(text, "n.conf", &config);
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()), message);
}

TEST(ConfigFileTest, ErrorsNameFileAndLine) {
  ExpectError("grpc_listen = 127.0.0.1:1\nbogus_key = 1\n", "n.conf:2: unknown key \"bogus_key\"");
  ExpectError("\n\njust words\n", "n.conf:3: expected key = value, got \"just words\"");
  ExpectError(" = 5\n", "n.conf:1: empty key");
  ExpectError("put_ttl = 1s\nput_ttl = 2s\n", "n.conf:2: key \"put_ttl\" given twice");
  ExpectError("lease_ttl = forever\n",
              "n.conf:1: lease_ttl: \"forever\" is not a duration (e.g. 30s, 500ms, 10m, 1h30m)");
  ExpectError("config = other.conf\n",
              "n.conf:1: config: names the config file; it is a command-line flag only");
}

TEST(ConfigFileTest, ReadMissingFileIsNotFound) {
  EXPECT_CODE(ReadConfigFile("/nonexistent/strata-node.conf"), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::store::node
