#include "client/cli/argument_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/exit_codes.h"
#include "strata/base/status_test_macros.h"

namespace strata::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CommandSpec Spec() {
  return {.name = "get",
          .summary = "Read a blob.",
          .details = "More words.",
          .flags = {{.name = "output",
                     .short_name = 'o',
                     .value_name = "FILE",
                     .help = "where to write",
                     .required = true},
                    {.name = "limit", .value_name = "N", .help = "at most N"},
                    {.name = "all", .takes_value = false, .help = "everything"}},
          .positionals = {{.name = "KEY", .help = "blob key"},
                          {.name = "EXTRA", .help = "optional", .required = false}}};
}

absl::StatusOr<ParsedArgs> Parse(std::vector<std::string> args) {
  return ParseArguments(Spec(), args);
}

// The error of a parse that must fail: a usage error, with `text` in its message.
void ExpectUsage(std::vector<std::string> args, const std::string& text) {
  absl::StatusOr<ParsedArgs> parsed = Parse(args);
  ASSERT_FALSE(parsed.ok()) << "parsed: " << testing::PrintToString(args);
  EXPECT_CODE(parsed, absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsUsageError(parsed.status()));
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(text));
}

TEST(ArgumentParserTest, ValueSyntaxes) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--output=f.bin", "KEY1"},
                                                                {"--output", "f.bin", "KEY1"},
                                                                {"-o", "f.bin", "KEY1"},
                                                                {"KEY1", "-o", "f.bin"}}) {
    ASSERT_OK_AND_ASSIGN(ParsedArgs parsed, Parse(args));
    EXPECT_EQ(parsed.Value("output"), "f.bin");
    EXPECT_THAT(parsed.positionals(), ElementsAre("KEY1"));
    EXPECT_FALSE(parsed.Has("limit"));
    EXPECT_EQ(parsed.ValueOr("limit", "7"), "7");
    EXPECT_FALSE(parsed.Bool("all"));
    EXPECT_FALSE(parsed.help());
  }
}

TEST(ArgumentParserTest, ValuesMayLookLikeFlagsOrBeEmpty) {
  ASSERT_OK_AND_ASSIGN(ParsedArgs parsed, Parse({"-o", "--all", "K", "--limit="}));
  EXPECT_EQ(parsed.Value("output"), "--all");
  EXPECT_EQ(parsed.Value("limit"), "");
  EXPECT_FALSE(parsed.Has("all"));
}

TEST(ArgumentParserTest, BooleanFlags) {
  ASSERT_OK_AND_ASSIGN(ParsedArgs bare, Parse({"-o", "f", "K", "--all"}));
  EXPECT_TRUE(bare.Bool("all"));
  ASSERT_OK_AND_ASSIGN(ParsedArgs yes, Parse({"-o", "f", "K", "--all=true"}));
  EXPECT_TRUE(yes.Bool("all"));
  ASSERT_OK_AND_ASSIGN(ParsedArgs no, Parse({"-o", "f", "K", "--all=false"}));
  EXPECT_FALSE(no.Bool("all"));
  EXPECT_TRUE(no.Has("all"));
  // A boolean flag never takes the next argument as its value.
  ASSERT_OK_AND_ASSIGN(ParsedArgs next, Parse({"-o", "f", "--all", "K"}));
  EXPECT_TRUE(next.Bool("all"));
  EXPECT_THAT(next.positionals(), ElementsAre("K"));
}

TEST(ArgumentParserTest, DashAndDoubleDash) {
  ASSERT_OK_AND_ASSIGN(ParsedArgs dash, Parse({"-o", "-", "-"}));
  EXPECT_EQ(dash.Value("output"), "-");
  EXPECT_THAT(dash.positionals(), ElementsAre("-"));
  ASSERT_OK_AND_ASSIGN(ParsedArgs ended, Parse({"-o", "f", "--", "--all", "-x"}));
  EXPECT_THAT(ended.positionals(), ElementsAre("--all", "-x"));
  EXPECT_FALSE(ended.Has("all"));
  EXPECT_EQ(ended.Positional(1), "-x");
  EXPECT_EQ(ended.Positional(2), "");
}

TEST(ArgumentParserTest, HelpStopsParsing) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"--bogus=1", "--help"}, {"K", "-h", "--bogus"}}) {
    absl::StatusOr<ParsedArgs> parsed = Parse(args);
    if (args[0] == "--bogus=1") {
      // An error before --help is still an error.
      EXPECT_FALSE(parsed.ok());
      continue;
    }
    ASSERT_OK(parsed);
    EXPECT_TRUE(parsed->help());
  }
}

TEST(ArgumentParserTest, Errors) {
  ExpectUsage({"-o", "f", "K", "--lmit", "3"}, "unknown flag --lmit");
  ExpectUsage({"-o", "f", "K", "-x"}, "unknown flag -x");
  ExpectUsage({"-o", "f", "K", "-of"}, "short flags take one letter");
  ExpectUsage({"-o", "f", "K", "--output=g"}, "--output given twice");
  ExpectUsage({"-o", "f", "K", "--all", "--all=false"}, "--all given twice");
  ExpectUsage({"K", "--output"}, "--output needs a value (FILE)");
  ExpectUsage({"-o", "f", "K", "--all=yes"}, "--all takes no value");
  ExpectUsage({"K"}, "missing required flag --output");
  ExpectUsage({"-o", "f"}, "missing argument KEY");
  ExpectUsage({"-o", "f", "K", "E", "F"}, "unexpected argument \"F\"");
}

TEST(ArgumentParserTest, HelpText) {
  const std::string help = FormatHelp(Spec(), "strata");
  EXPECT_THAT(help, HasSubstr("usage: strata get --output FILE [flags] KEY [EXTRA]\n"));
  EXPECT_THAT(help, HasSubstr("\nRead a blob.\n\nMore words.\n"));
  EXPECT_THAT(help, HasSubstr("  -o, --output FILE  where to write (required)\n"));
  EXPECT_THAT(help, HasSubstr("      --limit N      at most N\n"));
  EXPECT_THAT(help, HasSubstr("      --all          everything\n"));
  EXPECT_THAT(help, HasSubstr("  KEY                blob key\n"));
  EXPECT_THAT(help, HasSubstr("  -h, --help         show this help and exit\n"));
}

TEST(ArgumentParserTest, UintValues) {
  EXPECT_EQ(*ParseUintValue("--n", "0"), 0u);
  EXPECT_EQ(*ParseUintValue("--n", "18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseUintValue("--n", "1000", 1000), 1000u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "18446744073709551616"}) {
    EXPECT_TRUE(IsUsageError(ParseUintValue("--n", bad).status())) << bad;
  }
  absl::Status over = ParseUintValue("--n", "1001", 1000).status();
  EXPECT_EQ(over.message(), "--n: \"1001\" is not an integer in 0..1000");
}

TEST(ArgumentParserTest, Durations) {
  EXPECT_EQ(*ParsePositiveDuration("--t", "500ms"), absl::Milliseconds(500));
  EXPECT_EQ(*ParsePositiveDuration("--t", "1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParsePositiveDuration("--t", "2.5"), absl::Milliseconds(2500));
  EXPECT_EQ(*ParsePositiveDuration("--t", "3"), absl::Seconds(3));
  for (const char* bad : {"", "0", "0s", "-1s", "-2", "soon", "inf", "nan", "5 s"}) {
    EXPECT_TRUE(IsUsageError(ParsePositiveDuration("--t", bad).status())) << bad;
  }
}

TEST(ArgumentParserTest, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("--b", "0"), 0u);
  EXPECT_EQ(*ParseByteSize("--b", "4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("--b", "12B"), 12u);
  EXPECT_EQ(*ParseByteSize("--b", "64MiB"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("--b", "2gib"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("--b", "3KB"), 3000u);
  EXPECT_EQ(*ParseByteSize("--b", "1TB"), 1000000000000ull);
  EXPECT_EQ(*ParseByteSize("--b", "16777215TiB"), 16777215ull << 40);  // 2^64 - 2^40
  EXPECT_EQ(*ParseByteSize("--b", "1 MiB"), 1u << 20);                 // as in the node's config
  for (const char* bad : {"", "MiB", "1.5GiB", "-1", "1XB", "1PiB", "16777216TiB" /* 2^64 */,
                          "99999999999999999999"}) {
    EXPECT_TRUE(IsUsageError(ParseByteSize("--b", bad).status())) << bad;
  }
}

}  // namespace
}  // namespace strata::cli
