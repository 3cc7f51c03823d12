#include "strata/base/read_file.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/testing/temp_dir.h"

namespace strata::base {
namespace {

TEST(ReadFileToStringTest, ReadsAllOfAFileAndNamesItsErrors) {
  const strata::testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/f";
  std::string big(200000, 'x');
  big[150000] = '\0';  // binary-safe
  std::ofstream(path, std::ios::binary) << big;
  ASSERT_OK_AND_ASSIGN(const std::string read, ReadFileToString(path));
  EXPECT_EQ(read, big);
  EXPECT_CODE(ReadFileToString(path, big.size() - 1), absl::StatusCode::kResourceExhausted);
  EXPECT_OK(ReadFileToString(path, big.size()));
  const absl::Status missing = ReadFileToString(dir.path() + "/absent").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("/absent"), absl::string_view::npos) << missing;
}

}  // namespace
}  // namespace strata::base
