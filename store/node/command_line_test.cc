#include "strata/store/node/command_line.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::node {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ParseCommandLineTest, FlagForms) {
  ASSERT_OK_AND_ASSIGN(CommandLine cl,
                       ParseCommandLine({"--grpc_listen=127.0.0.1:0", "--dram_bytes", "64MiB",
                                         "--dram_populate", "--config", "n.conf"}));
  EXPECT_FALSE(cl.help);
  ASSERT_TRUE(cl.config_path.has_value());
  EXPECT_EQ(*cl.config_path, "n.conf");
  ASSERT_EQ(cl.flags.size(), 3u);
  EXPECT_EQ(cl.flags[0], (std::pair<std::string, std::string>("grpc_listen", "127.0.0.1:0")));
  EXPECT_EQ(cl.flags[1], (std::pair<std::string, std::string>("dram_bytes", "64MiB")));
  EXPECT_EQ(cl.flags[2], (std::pair<std::string, std::string>("dram_populate", "true")));
  ASSERT_OK_AND_ASSIGN(CommandLine help, ParseCommandLine({"-h"}));
  EXPECT_TRUE(help.help);
  ASSERT_OK_AND_ASSIGN(CommandLine none, ParseCommandLine({}));
  EXPECT_TRUE(none.flags.empty());
  EXPECT_FALSE(none.config_path.has_value());
}

void ExpectUsageError(const std::vector<std::string>& args, const std::string& message) {
  const absl::StatusOr<CommandLine> cl = ParseCommandLine(args);
  EXPECT_CODE(cl, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(cl.status().message()), message);
}

TEST(ParseCommandLineTest, Errors) {
  ExpectUsageError({"--bogus=1"}, "unknown flag --bogus");
  ExpectUsageError({"--grpc-listen=1"}, "unknown flag --grpc-listen");
  ExpectUsageError({"serve"}, "unexpected argument \"serve\"");
  ExpectUsageError({"-v"}, "unexpected argument \"-v\"");
  ExpectUsageError({"--"}, "unexpected argument \"--\"");
  ExpectUsageError({"--put_ttl"}, "flag --put_ttl needs a value");
  ExpectUsageError({"--put_ttl=1s", "--put_ttl=2s"}, "flag --put_ttl given twice");
  ExpectUsageError({"--config="}, "flag --config needs a file name");
}

class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/resolve_test.conf";
    std::ofstream(path_) << "grpc_listen = 127.0.0.1:1111\n"
                            "data_dir = /from/config\n"
                            "put_ttl = 7s\n";
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

TEST_F(ResolveTest, DefaultsWithoutAnything) {
  ASSERT_OK_AND_ASSIGN(NodeConfig config, ResolveNodeConfig(CommandLine{}, Env({})));
  EXPECT_EQ(config.grpc_listen, "127.0.0.1:7400");
  EXPECT_EQ(config.data_dir, "./var");
}

TEST_F(ResolveTest, EnvOverridesDefault) {
  ASSERT_OK_AND_ASSIGN(NodeConfig config,
                       ResolveNodeConfig(CommandLine{}, Env({{"STRATA_DATA", "/from/env"}})));
  EXPECT_EQ(config.data_dir, "/from/env");
}

TEST_F(ResolveTest, FlagsBeatConfigBeatsEnv) {
  ASSERT_OK_AND_ASSIGN(CommandLine cl,
                       ParseCommandLine({"--config", path_, "--grpc_listen=127.0.0.1:2222"}));
  ASSERT_OK_AND_ASSIGN(NodeConfig config,
                       ResolveNodeConfig(cl, Env({{"STRATA_DATA", "/from/env"}})));
  EXPECT_EQ(config.grpc_listen, "127.0.0.1:2222");  // flag over config file
  EXPECT_EQ(config.data_dir, "/from/config");       // config file over env
  EXPECT_EQ(config.put_ttl, absl::Seconds(7));      // config file over default
  EXPECT_EQ(config.lease_ttl, absl::Seconds(30));   // default
}

TEST_F(ResolveTest, BadFlagValueMissingConfigAndInvalidCombination) {
  ASSERT_OK_AND_ASSIGN(CommandLine bad_value, ParseCommandLine({"--lease_ttl=soon"}));
  const absl::StatusOr<NodeConfig> r1 = ResolveNodeConfig(bad_value, Env({}));
  EXPECT_CODE(r1, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r1.status().message().substr(0, 12), "--lease_ttl:");

  ASSERT_OK_AND_ASSIGN(CommandLine missing, ParseCommandLine({"--config=/nonexistent.conf"}));
  EXPECT_CODE(ResolveNodeConfig(missing, Env({})), absl::StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(CommandLine combo,
                       ParseCommandLine({"--lease_ttl=20m", "--max_lease_ttl=10m"}));
  EXPECT_CODE(ResolveNodeConfig(combo, Env({})), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::store::node
