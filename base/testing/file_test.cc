#include "strata/testing/file.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

#include "strata/testing/temp_dir.h"

namespace strata::testing {
namespace {

TEST(TestingFileTest, ReadsEveryByte) {
  ScopedTempDir dir("strata-file-test");
  const std::string bytes("line\n\0binary\xff", 13);
  std::ofstream(dir.path() + "/f", std::ios::binary) << bytes;
  EXPECT_EQ(ReadFileToString(dir.path() + "/f"), bytes);
}

TEST(TestingFileTest, AMissingFileReadsEmpty) {
  ScopedTempDir dir("strata-file-test");
  EXPECT_EQ(ReadFileToString(dir.path() + "/absent"), "");
}

}  // namespace
}  // namespace strata::testing
