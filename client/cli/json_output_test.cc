#include "client/cli/json_output.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/testing/json.h"

namespace strata::cli {
namespace {

using strata::testing::ParseJson;

// A string value as --json writes it, quotes included.
std::string Quote(const std::string& value) { return DumpJson(Json(value)); }

constexpr char kReplacement[] = "\xef\xbf\xbd";  // U+FFFD in UTF-8

TEST(JsonOutputTest, NestingAndCommas) {
  Json json;
  json["a"] = 1u;
  json["b"] = Json::array({"x", true, nullptr, Json::object()});
  json["c"] = {{"d", -5}};
  json["e"] = Json::array();
  EXPECT_EQ(DumpJson(json), R"({"a":1,"b":["x",true,null,{}],"c":{"d":-5},"e":[]})");
}

TEST(JsonOutputTest, MembersKeepTheOrderTheyWereAdded) {
  Json json;
  json["zeta"] = 1;
  json["alpha"] = 2;
  json["mid"] = 3;
  EXPECT_EQ(DumpJson(json), R"({"zeta":1,"alpha":2,"mid":3})");
}

TEST(JsonOutputTest, TopLevelScalarsAndArrays) {
  EXPECT_EQ(DumpJson(Json("only")), R"("only")");
  EXPECT_EQ(DumpJson(Json::array({1u, 2u})), "[1,2]");
}

TEST(JsonOutputTest, NumbersAreExact) {
  const Json json = Json::array({UINT64_MAX, INT64_MIN, 0.1, -2.5e-300, std::nan(""), INFINITY});
  EXPECT_EQ(DumpJson(json), "[18446744073709551615,-9223372036854775808,0.1,-2.5e-300,null,null]");
  // Integers stay integers; a double is written as one.
  EXPECT_EQ(DumpJson(Json::array({uint64_t{4096}, uint32_t{7}, 0.5})), "[4096,7,0.5]");
}

TEST(JsonOutputTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(Quote("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(Quote("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(Quote(std::string("\0\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
  EXPECT_EQ(Quote(""), R"("")");
}

TEST(JsonOutputTest, KeysAreEscapedToo) {
  Json json;
  json["we\"ird\n"] = 1;
  EXPECT_EQ(DumpJson(json), R"({"we\"ird\n":1})");
}

TEST(JsonOutputTest, ValidUtf8PassesThrough) {
  const std::string text = "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf \xf4\x8f\xbf\xbf";
  EXPECT_EQ(Quote(text), "\"" + text + "\"");
}

// Each byte that cannot start or continue a well-formed sequence becomes one U+FFFD; a
// sequence cut short becomes one U+FFFD for the bytes it had (Unicode's "maximal subpart").
TEST(JsonOutputTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = kReplacement;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\x80", r},                          // stray continuation byte
      {"a\xc0\x80z", "a" + r + r + "z"},    // overlong NUL
      {"\xe0\x80\xaf", r + r + r},          // overlong 3-byte
      {"\xed\xa0\x80", r + r + r},          // UTF-16 surrogate D800
      {"\xf4\x90\x80\x80", r + r + r + r},  // past U+10FFFF
      {"\xf5", r},                          // never a lead byte
      {"\xe2\x82", r},                      // truncated at the end
      {"\xe2\x82z", r + "z"},               // truncated in the middle
      {"\xff\xfe", r + r},
  };
  for (const auto& [input, expected] : cases) {
    EXPECT_EQ(Quote(input), "\"" + expected + "\"");
  }
}

// Whatever bytes go in, a strict parser accepts the output, and well-formed text comes back
// unchanged.
TEST(JsonOutputTest, RandomStringsAlwaysParse) {
  std::mt19937 rng(20261129);
  for (int round = 0; round < 2000; ++round) {
    std::string input(rng() % 24, '\0');
    for (char& c : input) {
      // Bias towards the interesting bytes: controls, quotes, backslashes, high bytes.
      const uint32_t pick = rng() % 8;
      c = static_cast<char>(pick == 0 ? '"' : pick == 1 ? '\\' : pick == 2 ? rng() % 0x20 : rng());
    }
    Json json;
    json[input] = input;
    const std::string text = DumpJson(json);
    absl::StatusOr<nlohmann::json> parsed = ParseJson(text);
    ASSERT_OK(parsed) << text;
    ASSERT_EQ(parsed->size(), 1u);
    const std::string& decoded = parsed->begin().key();
    EXPECT_EQ(parsed->begin().value().get<std::string>(), decoded);
    if (decoded.find(kReplacement) == std::string::npos) {
      EXPECT_EQ(decoded, input) << text;  // no replacement: nothing was lost
    }
  }
}

}  // namespace
}  // namespace strata::cli
