#include "strata/testing/tmpfs.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/vfs.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace strata::testing {
namespace {

constexpr long kTmpfsMagic = 0x01021994;  // TMPFS_MAGIC (linux/magic.h)

TEST(TestingTmpfsTest, AFullTmpfsRefusesWritesAndGoesAwayWithItsOwner) {
  absl::StatusOr<std::unique_ptr<ScopedTmpfs>> disk = ScopedTmpfs::Mount(1 << 20);
  if (geteuid() != 0) {
    EXPECT_EQ(disk.status().code(), absl::StatusCode::kPermissionDenied) << disk.status();
    GTEST_SKIP() << "not root: " << disk.status();
  }
  if (!disk.ok()) GTEST_SKIP() << disk.status();  // a container that allows no mounts
  const std::string path = (*disk)->path();
  struct statfs fs;
  ASSERT_EQ(statfs(path.c_str(), &fs), 0);
  EXPECT_EQ(static_cast<long>(fs.f_type), kTmpfsMagic);

  // 2 MiB do not fit in 1 MiB.
  FILE* file = std::fopen((path + "/big").c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::vector<char> block(64 << 10, 'x');
  size_t written = 0;
  for (int i = 0; i < 32; ++i) written += std::fwrite(block.data(), 1, block.size(), file);
  const bool flushed = std::fflush(file) == 0;
  std::fclose(file);
  EXPECT_FALSE(flushed && written == 32 * block.size());
  EXPECT_LE(std::filesystem::file_size(path + "/big"), size_t{1} << 20);

  disk->reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace strata::testing
