#include "strata/store/http/tiers_json.h"

#include <string>

#include "gtest/gtest.h"

#include "store/http/test_snapshot.h"
#include "strata/base/status_test_macros.h"
#include "strata/testing/json.h"

namespace strata::store::http {
namespace {

TEST(TiersJsonTest, EscapesStrings) {
  NodeSnapshot snapshot = testing::KnownSnapshot();
  ASSERT_FALSE(snapshot.tiers.curves.empty());
  snapshot.tiers.curves[0].advice = std::string("a\"b\\c\nd\te \x01\x1f \u2192 8 GiB");
  const std::string text = FormatTiersJson(snapshot);
  // Quotes, backslashes and controls escaped; UTF-8 passes through.
  EXPECT_NE(text.find(R"("advice":"a\"b\\c\nd\te \u0001\u001f → 8 GiB")"), std::string::npos)
      << text;
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, strata::testing::ParseJson(text));
  EXPECT_EQ(doc["tiers"][0]["plan"]["advice"], snapshot.tiers.curves[0].advice);
}

TEST(TiersJsonTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  NodeSnapshot snapshot = testing::KnownSnapshot();
  ASSERT_FALSE(snapshot.tiers.curves.empty());
  snapshot.tiers.curves[0].advice = "bad \xff byte";
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, strata::testing::ParseJson(FormatTiersJson(snapshot)));
  EXPECT_EQ(doc["tiers"][0]["plan"]["advice"], "bad \xef\xbf\xbd byte");
}

TEST(TiersJsonTest, DocumentCarriesTiersPlansLookupsAndTheCurve) {
  const std::string text = FormatTiersJson(testing::KnownSnapshot());
  ASSERT_EQ(text.back(), '\n');
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, strata::testing::ParseJson(text));
  ASSERT_TRUE(doc.is_object());
  for (const char* key : {"tiers", "lookups", "mrc", "rebuild", "node", "tenants"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  nlohmann::json& tiers = doc["tiers"];
  ASSERT_EQ(tiers.size(), 3u);
  EXPECT_EQ(tiers[0]["tier"], "dram");
  EXPECT_EQ(tiers[1]["tier"], "ssd");
  EXPECT_EQ(tiers[2]["tier"], "text");

  nlohmann::json& dram = tiers[0];
  EXPECT_EQ(dram["capacity_bytes"], 1000);
  EXPECT_TRUE(dram["capacity_bytes"].is_number_unsigned());  // integers stay integers
  EXPECT_EQ(dram["used_bytes"], 400);
  EXPECT_EQ(dram["free_bytes"], 600);
  EXPECT_EQ(dram["pages"], 12);
  EXPECT_EQ(dram["demotions"], 5);
  EXPECT_EQ(dram["present"], true);
  nlohmann::json& plan = dram["plan"];
  ASSERT_TRUE(plan.is_object());
  EXPECT_EQ(plan["expected_hit_ratio"], 0.5);
  ASSERT_EQ(plan["points"].size(), 3u);
  EXPECT_EQ(plan["points"][2]["capacity_bytes"], 2000);
  EXPECT_TRUE(plan["points"][2]["capacity_bytes"].is_number_unsigned());
  EXPECT_EQ(plan["points"][2]["hit_ratio"], 0.75);
  EXPECT_EQ(plan["recommended"]["capacity_bytes"], 2000);
  // The advice's quotes and newline survive the round trip.
  EXPECT_EQ(plan["advice"],
            "DRAM 1000 B -> 2000 B raises the \"expected\" hit rate\nfrom 50.0% to 75.0%");
  // The text tier has no view in this snapshot: its plan is null.
  EXPECT_TRUE(tiers[2]["plan"].is_null());
  EXPECT_EQ(tiers[2]["drops"], 2);
  EXPECT_EQ(tiers[2]["free_bytes"], 90);

  EXPECT_EQ(doc["lookups"]["prefill"]["miss_pages"], 8);
  EXPECT_EQ(doc["lookups"]["midfill"]["dram_hit_pages"], 3);
  EXPECT_EQ(doc["lookups"]["decode"]["text_hit_pages"], 2);
  EXPECT_EQ(doc["mrc"]["sample_rate"], 0.1);
  EXPECT_EQ(doc["mrc"]["accesses"], 100);
  EXPECT_EQ(doc["mrc"]["points"].size(), 3u);
  EXPECT_EQ(doc["rebuild"]["dropped"], 6);
  EXPECT_EQ(doc["node"]["leases"], 2);
  EXPECT_EQ(doc["node"]["draining"], false);
  ASSERT_EQ(doc["tenants"].size(), 2u);
  EXPECT_EQ(doc["tenants"][0]["tenant"], "acme");
  EXPECT_EQ(doc["tenants"][0]["ssd_bytes"], 6000);
  EXPECT_EQ(doc["tenants"][1]["blobs"], 1);
}

// Keys come out in the order docs/api.md lists them.
TEST(TiersJsonTest, KeysKeepTheirDocumentedOrder) {
  const std::string text = FormatTiersJson(testing::KnownSnapshot());
  EXPECT_EQ(text.rfind(R"({"tiers":[{"tier":"dram","present":true,"capacity_bytes":1000,)", 0), 0u)
      << text;
  EXPECT_LT(text.find(R"("lookups":{"prefill":)"), text.find(R"("mrc":{"accesses":)"));
  EXPECT_LT(text.find(R"("rebuild":{"queued":)"), text.find(R"("node":{"blobs":)"));
}

TEST(TiersJsonTest, AnEmptySnapshotIsValidJson) {
  NodeSnapshot empty;
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, strata::testing::ParseJson(FormatTiersJson(empty)));
  EXPECT_EQ(doc["tiers"][1]["present"], false);  // no SSD tier
  EXPECT_TRUE(doc["tiers"][0]["plan"].is_null());
  EXPECT_TRUE(doc["mrc"]["points"].is_array());
  EXPECT_TRUE(doc["mrc"]["points"].empty());
}

}  // namespace
}  // namespace strata::store::http
