#include "strata/testing/temp_dir.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::testing {
namespace {

TEST(TestingTempDirTest, ScopedDirIsFreshAndRemovedWithItsContents) {
  std::string path;
  {
    ScopedTempDir a("strata-tempdir-test");
    ScopedTempDir b("strata-tempdir-test");
    path = a.path();
    EXPECT_NE(a.path(), b.path());
    EXPECT_TRUE(std::filesystem::is_directory(a.path()));
    EXPECT_TRUE(std::filesystem::is_empty(a.path()));
    EXPECT_NE(a.path().find("/strata-tempdir-test-"), std::string::npos) << a.path();
    std::filesystem::create_directories(a.path() + "/sub/dir");
    std::ofstream(a.path() + "/sub/dir/file") << "x";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(TestingTempDirTest, MakeTempDirLeavesTheDirectoryToTheCaller) {
  ASSERT_OK_AND_ASSIGN(const std::string dir, MakeTempDir("strata-tempdir-test"));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::filesystem::remove_all(dir);
}

TEST(TestingTempDirTest, AnUnwritableParentIsAnError) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", "/nonexistent/strata", 1);
  const absl::StatusOr<std::string> dir = MakeTempDir("x");
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kNotFound) << dir.status();
}

}  // namespace
}  // namespace strata::testing
