#include "strata/store/cluster/node_record.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

#include "nlohmann/json.hpp"
#include "strata/base/status_test_macros.h"
#include "strata/testing/temp_dir.h"

namespace strata::store::cluster {
namespace {

NodeRecord Sample() {
  return NodeRecord{.id = "0123456789abcdef",
                    .grpc_address = "127.0.0.1:7400",
                    .dataplane_address = "127.0.0.1:7401",
                    .http_address = "[::1]:7402",
                    .state = NodeState::kServing,
                    .version = "0.1.0",
                    .hbm_bytes = 0,
                    .dram_bytes = uint64_t{8} << 30,
                    .ssd_bytes = uint64_t{1} << 40,
                    .started_ms = 1764900000123};
}

TEST(NodeRecordTest, RoundTripsThroughJson) {
  for (NodeState state : {NodeState::kJoining, NodeState::kServing, NodeState::kDraining}) {
    NodeRecord record = Sample();
    record.state = state;
    ASSERT_OK_AND_ASSIGN(NodeRecord back, DecodeNodeRecord(EncodeNodeRecord(record)));
    EXPECT_EQ(back, record);
  }
  const nlohmann::json object = nlohmann::json::parse(EncodeNodeRecord(Sample()));
  EXPECT_EQ(object["state"], "serving");
  EXPECT_EQ(object["capacity"]["ssd"], uint64_t{1} << 40);
}

TEST(NodeRecordTest, UnknownFieldsAreIgnored) {
  nlohmann::json object = nlohmann::json::parse(EncodeNodeRecord(Sample()));
  object["zone"] = "rack-7";
  object["capacity"]["cxl"] = 5;
  ASSERT_OK_AND_ASSIGN(NodeRecord back, DecodeNodeRecord(object.dump()));
  EXPECT_EQ(back, Sample());
}

TEST(NodeRecordTest, BadRecordsAreInvalidArgumentNamingWhy) {
  auto expect_invalid = [](const std::string& text, const std::string& why) {
    const absl::StatusOr<NodeRecord> decoded = DecodeNodeRecord(text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(decoded.status().message().find(why), std::string::npos) << decoded.status();
  };
  expect_invalid("", "not a JSON object");
  expect_invalid("[1,2]", "not a JSON object");
  expect_invalid("{\"id\": ", "not a JSON object");
  nlohmann::json object = nlohmann::json::parse(EncodeNodeRecord(Sample()));
  nlohmann::json no_grpc = object;
  no_grpc.erase("grpc");
  expect_invalid(no_grpc.dump(), "no \"grpc\"");
  nlohmann::json bad_state = object;
  bad_state["state"] = "sleeping";
  expect_invalid(bad_state.dump(), "unknown state \"sleeping\"");
  nlohmann::json bad_type = object;
  bad_type["capacity"]["dram"] = "lots";
  expect_invalid(bad_type.dump(), "\"dram\" has the wrong type");
  nlohmann::json negative = object;
  negative["capacity"]["ssd"] = -1;
  expect_invalid(negative.dump(), "\"ssd\" has the wrong type");
  nlohmann::json bad_id = object;
  bad_id["id"] = "node-1";
  expect_invalid(bad_id.dump(), "not 16 lowercase hex digits");
}

TEST(NodeRecordTest, KeysLiveUnderTheClusterPrefix) {
  EXPECT_EQ(MembershipPrefix("prod"), "/strata/prod/nodes/");
  EXPECT_EQ(MembershipKey("prod", "0123456789abcdef"), "/strata/prod/nodes/0123456789abcdef");
}

TEST(NodeRecordTest, TheNodeIdIsMadeOnceAndKept) {
  testing::ScopedTempDir dir;
  ASSERT_OK_AND_ASSIGN(const std::string id, LoadOrCreateNodeId(dir.path()));
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  ASSERT_OK_AND_ASSIGN(const std::string again, LoadOrCreateNodeId(dir.path()));
  EXPECT_EQ(again, id);
  // Another data dir, another id.
  testing::ScopedTempDir other;
  ASSERT_OK_AND_ASSIGN(const std::string second, LoadOrCreateNodeId(other.path()));
  EXPECT_NE(second, id);
}

TEST(NodeRecordTest, AGarbledNodeIdFileIsDataLoss) {
  testing::ScopedTempDir dir;
  std::ofstream(dir.path() + "/node_id") << "not an id\n";
  const absl::StatusOr<std::string> id = LoadOrCreateNodeId(dir.path());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kDataLoss) << id.status();
  EXPECT_EQ(LoadOrCreateNodeId(dir.path() + "/missing").status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace strata::store::cluster
