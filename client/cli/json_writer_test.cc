#include "client/cli/json_writer.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/testing/json_value.h"
#include "strata/base/status_test_macros.h"

namespace strata::cli {
namespace {

using testing::JsonValue;
using testing::ParseJson;

TEST(JsonWriterTest, NestingAndCommas) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a").Uint(1);
  json.Key("b").BeginArray().String("x").Bool(true).Null().BeginObject().EndObject().EndArray();
  json.Key("c").BeginObject().Key("d").Int(-5).EndObject();
  json.Key("e").BeginArray().EndArray();
  json.EndObject();
  EXPECT_EQ(json.Take(), R"({"a":1,"b":["x",true,null,{}],"c":{"d":-5},"e":[]})");
}

TEST(JsonWriterTest, TopLevelScalarsAndArrays) {
  JsonWriter scalar;
  scalar.String("only");
  EXPECT_EQ(scalar.Take(), R"("only")");
  JsonWriter array;
  array.BeginArray().Uint(1).Uint(2).EndArray();
  EXPECT_EQ(array.Take(), "[1,2]");
}

TEST(JsonWriterTest, NumbersAreExact) {
  JsonWriter json;
  json.BeginArray()
      .Uint(UINT64_MAX)
      .Int(INT64_MIN)
      .Double(0.1)
      .Double(-2.5e-300)
      .Double(std::nan(""))
      .Double(INFINITY)
      .EndArray();
  EXPECT_EQ(json.Take(), "[18446744073709551615,-9223372036854775808,0.1,-2.5e-300,null,null]");
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(JsonWriter::Quote("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(JsonWriter::Quote(std::string("\0\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
  EXPECT_EQ(JsonWriter::Quote(""), R"("")");
}

TEST(JsonWriterTest, KeysAreEscapedToo) {
  JsonWriter json;
  json.BeginObject().Key("we\"ird\n").Uint(1).EndObject();
  EXPECT_EQ(json.Take(), R"({"we\"ird\n":1})");
}

TEST(JsonWriterTest, ValidUtf8PassesThrough) {
  const std::string text = "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf \xf4\x8f\xbf\xbf";
  EXPECT_EQ(JsonWriter::Quote(text), "\"" + text + "\"");
}

TEST(JsonWriterTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\x80", R"("\ufffd")"},                                // stray continuation byte
      {"a\xc0\x80z", R"("a\ufffd\ufffdz")"},                  // overlong NUL
      {"\xe0\x80\xaf", R"("\ufffd\ufffd\ufffd")"},            // overlong 3-byte
      {"\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},            // UTF-16 surrogate D800
      {"\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},  // past U+10FFFF
      {"\xf5", R"("\ufffd")"},                                // never a lead byte
      {"\xe2\x82", R"("\ufffd\ufffd")"},                      // truncated at the end
      {"\xe2\x82z", R"("\ufffd\ufffdz")"},                    // truncated in the middle
      {"\xff\xfe", R"("\ufffd\ufffd")"},
  };
  for (const auto& [input, expected] : cases) {
    EXPECT_EQ(JsonWriter::Quote(input), expected);
  }
}

// Whatever bytes go in, a strict parser accepts the output, and well-formed text comes back
// unchanged.
TEST(JsonWriterTest, RandomStringsAlwaysParse) {
  std::mt19937 rng(20261129);
  for (int round = 0; round < 2000; ++round) {
    std::string input(rng() % 24, '\0');
    for (char& c : input) {
      // Bias towards the interesting bytes: controls, quotes, backslashes, high bytes.
      const uint32_t pick = rng() % 8;
      c = static_cast<char>(pick == 0 ? '"' : pick == 1 ? '\\' : pick == 2 ? rng() % 0x20 : rng());
    }
    JsonWriter json;
    json.BeginObject().Key(input).String(input).EndObject();
    const std::string text = json.Take();
    absl::StatusOr<JsonValue> parsed = ParseJson(text);
    ASSERT_OK(parsed) << text;
    ASSERT_EQ(parsed->size(), 1u);
    const std::string& decoded = parsed->members().begin()->first;
    EXPECT_EQ(parsed->members().begin()->second.AsString(), decoded);
    if (decoded.find("\xef\xbf\xbd") == std::string::npos) {
      EXPECT_EQ(decoded, input) << text;  // no replacement: nothing was lost
    }
  }
}

TEST(JsonValueTest, StrictParser) {
  ASSERT_OK_AND_ASSIGN(JsonValue v,
                       ParseJson(R"( {"a":[1,-2.5e3,"\u00e9\ud83d\ude00"],"b":null} )"));
  EXPECT_TRUE(v.is_object());
  EXPECT_EQ(v["a"][0].AsUint(), 1u);
  EXPECT_FALSE(v["a"][1].AsUint().has_value());
  EXPECT_EQ(v["a"][2].AsString(), "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(v["b"].is_null());
  EXPECT_TRUE(v["missing"].is_null());
  for (const char* bad :
       {"", "[1,]", "{\"a\":1,}", "'a'", "01", "[1] 2", "\"\x01\"", "\"\\x\"", "\"\\ud800\"",
        "\"\xc0\x80\"", "{\"a\":1,\"a\":2}", "tru", "-", "1.", "{a:1}"}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace strata::cli
