#include "strata/store/node/data_dir_lock.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::node {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/data_dir_lock_test_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(DataDirLockTest, CreatesDirAndWritesPid) {
  const std::string dir = FreshDir("create") + "/nested/var";
  ASSERT_OK_AND_ASSIGN(DataDirLock lock, DataDirLock::Acquire(dir));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_EQ(lock.path(), lock.dir() + "/strata-node.pid");
  EXPECT_EQ(lock.dir().front(), '/');
  std::ifstream in(lock.path());
  pid_t pid = 0;
  in >> pid;
  EXPECT_EQ(pid, getpid());
}

TEST(DataDirLockTest, SecondAcquireFailsUntilReleased) {
  const std::string dir = FreshDir("twice");
  {
    ASSERT_OK_AND_ASSIGN(DataDirLock first, DataDirLock::Acquire(dir));
    const absl::StatusOr<DataDirLock> second = DataDirLock::Acquire(dir);
    EXPECT_CODE(second, absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find("in use by another strata-node (pid " +
                                             std::to_string(getpid()) + ")"),
              std::string::npos)
        << second.status();
    DataDirLock moved = std::move(first);  // the lock moves with its owner
    EXPECT_CODE(DataDirLock::Acquire(dir), absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_OK(DataDirLock::Acquire(dir));
}

TEST(DataDirLockTest, DirThatIsAFileFails) {
  const std::string file = FreshDir("file");
  std::ofstream(file) << "x";
  EXPECT_FALSE(DataDirLock::Acquire(file).ok());
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace strata::store::node
