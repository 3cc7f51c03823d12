#include "client/cli/token_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/exit_codes.h"
#include "strata/base/status_test_macros.h"

namespace strata::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(TokenFileTest, SeparatorsMixFreely) {
  ASSERT_OK_AND_ASSIGN(auto tokens, ParseTokens("1 2,3\n4\t5 ,, 6\r\n7,\n"));
  EXPECT_THAT(tokens, ElementsAre(1, 2, 3, 4, 5, 6, 7));
}

TEST(TokenFileTest, JsonArray) {
  ASSERT_OK_AND_ASSIGN(auto tokens, ParseTokens("  [101, 2023, 2003]\n"));
  EXPECT_THAT(tokens, ElementsAre(101, 2023, 2003));
  ASSERT_OK_AND_ASSIGN(auto empty, ParseTokens("[]"));
  EXPECT_THAT(empty, IsEmpty());
  ASSERT_OK_AND_ASSIGN(auto spaced, ParseTokens("[ 5 ]"));
  EXPECT_THAT(spaced, ElementsAre(5));
}

TEST(TokenFileTest, EmptyAndLimits) {
  ASSERT_OK_AND_ASSIGN(auto none, ParseTokens(""));
  EXPECT_THAT(none, IsEmpty());
  ASSERT_OK_AND_ASSIGN(auto blanks, ParseTokens(" \n,\n "));
  EXPECT_THAT(blanks, IsEmpty());
  ASSERT_OK_AND_ASSIGN(auto extremes, ParseTokens("0 4294967295 0000000001"));
  EXPECT_THAT(extremes, ElementsAre(0u, 4294967295u, 1u));
}

TEST(TokenFileTest, ErrorsNameTheLineAndText) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1 2\n3 4294967296", "line 2: \"4294967296\" is not a token id"},
      {"1\n\n-3", "line 3: \"-3\""},
      {"0x10", "line 1: \"0x10\""},
      {"1.5", "\"1.5\""},
      {"12a", "\"12a\""},
      {"99999999999999999999", "\"99999999999999999999\""},
      {"1;2", "\"1;2\""},
      {"[1, 2", "\"[\" without a closing \"]\""},
      {"1, 2]", "\"]\" without an opening \"[\""},
      {"[1, [2]]", "\"[2]\""},
      {"\x01\x02", "\"??\""},
      {std::string(60, '7'), "\"" + std::string(40, '7') + "...\""},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<std::vector<radix::TokenId>> tokens = ParseTokens(text);
    EXPECT_CODE(tokens, absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(tokens.status().message()), HasSubstr(message)) << text;
  }
}

TEST(TokenFileTest, ReadsStdinAndFiles) {
  std::istringstream in("7 8 9");
  ASSERT_OK_AND_ASSIGN(auto from_stdin, ReadTokenFile("-", in));
  EXPECT_THAT(from_stdin, ElementsAre(7, 8, 9));

  const std::string path = ::testing::TempDir() + "/tokens_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "[1,\n2]\n";
  std::istringstream unused;
  ASSERT_OK_AND_ASSIGN(auto from_file, ReadTokenFile(path, unused));
  EXPECT_THAT(from_file, ElementsAre(1, 2));

  std::ofstream(path) << "1\nx\n";
  absl::Status bad = ReadTokenFile(path, unused).status();
  EXPECT_TRUE(IsUsageError(bad));
  EXPECT_THAT(std::string(bad.message()), HasSubstr(path + ": line 2: \"x\""));
  std::remove(path.c_str());

  // A missing file is an I/O failure (exit 1), not a usage error.
  absl::Status missing = ReadTokenFile(path, unused).status();
  EXPECT_CODE(missing, absl::StatusCode::kNotFound);
  EXPECT_FALSE(IsUsageError(missing));
  EXPECT_THAT(std::string(missing.message()), HasSubstr("cannot open " + path));
}

}  // namespace
}  // namespace strata::cli
