#include "strata/store/http/tiers_json.h"

#include <string>

#include "gtest/gtest.h"

#include "store/http/json_test_value.h"
#include "store/http/test_snapshot.h"
#include "strata/base/status_test_macros.h"

namespace strata::store::http {
namespace {

using testing::JsonValue;
using testing::ParseJson;

TEST(TiersJsonTest, EscapesStrings) {
  EXPECT_EQ(JsonEscape("plain"), "\"plain\"");
  EXPECT_EQ(JsonEscape("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(JsonEscape(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonEscape("→ 8 GiB"), "\"→ 8 GiB\"");  // UTF-8 passes through
  ASSERT_OK_AND_ASSIGN(const JsonValue v, ParseJson(JsonEscape("q\"\\\n\x02 x")));
  EXPECT_EQ(v.text, "q\"\\\n\x02 x");
}

TEST(TiersJsonTest, TheParserIsStrict) {
  for (const char* bad : {"{", "{\"a\":1,}", "[1,]", "01", "\"\n\"", "{\"a\":1} x", "nul",
                          "{\"a\":1,\"a\":2}", "\"\\x\""}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseJson(" {\"a\": [1, -2.5e3, true, null, \"s\"]} ").ok());
}

TEST(TiersJsonTest, DocumentCarriesTiersPlansLookupsAndTheCurve) {
  const std::string text = FormatTiersJson(testing::KnownSnapshot());
  ASSERT_OK_AND_ASSIGN(const JsonValue doc, ParseJson(text));
  ASSERT_EQ(doc.kind, JsonValue::Kind::kObject);
  for (const char* key : {"tiers", "lookups", "mrc", "rebuild", "node"}) {
    EXPECT_TRUE(doc.Has(key)) << key;
  }
  const JsonValue& tiers = doc["tiers"];
  ASSERT_EQ(tiers.items.size(), 3u);
  EXPECT_EQ(tiers.items[0]["tier"].text, "dram");
  EXPECT_EQ(tiers.items[1]["tier"].text, "ssd");
  EXPECT_EQ(tiers.items[2]["tier"].text, "text");

  const JsonValue& dram = tiers.items[0];
  EXPECT_EQ(dram["capacity_bytes"].number, 1000);
  EXPECT_EQ(dram["used_bytes"].number, 400);
  EXPECT_EQ(dram["free_bytes"].number, 600);
  EXPECT_EQ(dram["pages"].number, 12);
  EXPECT_EQ(dram["demotions"].number, 5);
  EXPECT_TRUE(dram["present"].boolean);
  const JsonValue& plan = dram["plan"];
  ASSERT_EQ(plan.kind, JsonValue::Kind::kObject);
  EXPECT_EQ(plan["expected_hit_ratio"].number, 0.5);
  ASSERT_EQ(plan["points"].items.size(), 3u);
  EXPECT_EQ(plan["points"].items[2]["capacity_bytes"].number, 2000);
  EXPECT_EQ(plan["points"].items[2]["hit_ratio"].number, 0.75);
  EXPECT_EQ(plan["recommended"]["capacity_bytes"].number, 2000);
  // The advice's quotes and newline survive the round trip.
  EXPECT_EQ(plan["advice"].text,
            "DRAM 1000 B -> 2000 B raises the \"expected\" hit rate\nfrom 50.0% to 75.0%");
  // The text tier has no view in this snapshot: its plan is null.
  EXPECT_EQ(tiers.items[2]["plan"].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(tiers.items[2]["drops"].number, 2);
  EXPECT_EQ(tiers.items[2]["free_bytes"].number, 90);

  EXPECT_EQ(doc["lookups"]["prefill"]["miss_pages"].number, 8);
  EXPECT_EQ(doc["lookups"]["midfill"]["dram_hit_pages"].number, 3);
  EXPECT_EQ(doc["lookups"]["decode"]["text_hit_pages"].number, 2);
  EXPECT_EQ(doc["mrc"]["sample_rate"].number, 0.1);
  EXPECT_EQ(doc["mrc"]["accesses"].number, 100);
  EXPECT_EQ(doc["mrc"]["points"].items.size(), 3u);
  EXPECT_EQ(doc["rebuild"]["dropped"].number, 6);
  EXPECT_EQ(doc["node"]["leases"].number, 2);
  EXPECT_FALSE(doc["node"]["draining"].boolean);
}

TEST(TiersJsonTest, AnEmptySnapshotIsValidJson) {
  NodeSnapshot empty;
  ASSERT_OK_AND_ASSIGN(const JsonValue doc, ParseJson(FormatTiersJson(empty)));
  EXPECT_FALSE(doc["tiers"].items[1]["present"].boolean);  // no SSD tier
  EXPECT_EQ(doc["tiers"].items[0]["plan"].kind, JsonValue::Kind::kNull);
  EXPECT_TRUE(doc["mrc"]["points"].items.empty());
}

}  // namespace
}  // namespace strata::store::http
