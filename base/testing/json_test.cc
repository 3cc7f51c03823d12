#include "strata/testing/json.h"

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::testing {
namespace {

TEST(TestingJsonTest, ParsesValuesAndKeepsIntegersExact) {
  ASSERT_OK_AND_ASSIGN(
      const nlohmann::json v,
      ParseJson(R"( {"a":[1,-2.5e3,"\u00e9\ud83d\ude00",18446744073709551615,-5],"b":null} )"));
  ASSERT_TRUE(v.is_object());
  EXPECT_TRUE(v["a"][0].is_number_unsigned());
  EXPECT_EQ(v["a"][0].get<uint64_t>(), 1u);
  EXPECT_TRUE(v["a"][1].is_number_float());
  EXPECT_FALSE(v["a"][1].is_number_unsigned());
  EXPECT_EQ(v["a"][1].get<double>(), -2500.0);
  EXPECT_EQ(v["a"][2].get<std::string>(), "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v["a"][3].get<uint64_t>(), UINT64_MAX);
  EXPECT_TRUE(v["a"][4].is_number_integer());
  EXPECT_EQ(v["a"][4].get<int64_t>(), -5);
  EXPECT_TRUE(v["b"].is_null());
  EXPECT_FALSE(v.contains("missing"));
}

TEST(TestingJsonTest, TheParserIsStrict) {
  for (const char* bad : {"",
                          "{",
                          "[1,]",
                          "{\"a\":1,}",
                          "'a'",
                          "01",
                          "[1] 2",
                          "{\"a\":1} x",
                          "\"\x01\"",
                          "\"\n\"",
                          "\"\\x\"",
                          "\"\\ud800\"",
                          "\"\xc0\x80\"",
                          "{\"a\":1,\"a\":2}",
                          "{\"o\":{\"k\":1,\"k\":2}}",
                          "tru",
                          "nul",
                          "-",
                          "1.",
                          "{a:1}"}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseJson(" {\"a\": [1, -2.5e3, true, null, \"s\"]} ").ok());
  // The same key in two different objects is fine.
  EXPECT_TRUE(ParseJson(R"({"a":{"k":1},"b":{"k":2},"k":3})").ok());
}

TEST(TestingJsonTest, LenientReadsForAssertions) {
  ASSERT_OK_AND_ASSIGN(nlohmann::json v,
                       ParseJson(R"({"u":7,"neg":-1,"f":1.5,"s":"x","b":true,"n":null})"));
  EXPECT_EQ(AsUint(v["u"]), 7u);
  EXPECT_FALSE(AsUint(v["neg"]).has_value());
  EXPECT_FALSE(AsUint(v["f"]).has_value());
  EXPECT_FALSE(AsUint(v["s"]).has_value());
  EXPECT_EQ(AsString(v["s"]), "x");
  EXPECT_EQ(AsString(v["u"]), "");
  EXPECT_TRUE(AsBool(v["b"]));
  EXPECT_FALSE(AsBool(v["n"]));
  EXPECT_FALSE(AsBool(v["missing"]));  // non-const operator[]: a missing member reads as null
  EXPECT_TRUE(v["missing"].is_null());
}

TEST(TestingJsonTest, ErrorsAreInvalidArgument) {
  EXPECT_EQ(ParseJson("[1,]").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJson(R"({"a":1,"a":2})").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::testing
