// The SSD tier on a full disk: a 4 MiB tmpfs mounted for the test. Needs root (mount(2));
// skipped with the reason otherwise, or where this kernel's tmpfs refuses O_DIRECT.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/io/ssd_tier.h"
#include "strata/tiering/io/uring_block_file.h"

namespace strata::tiering::io {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : ".") +
                          "/strata_full_disk_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      GTEST_SKIP() << "mkdtemp(" << pattern << "): " << std::strerror(errno);
    }
    dir_ = pattern;
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      const int error = errno;
      ::rmdir(dir_.c_str());
      dir_.clear();
      GTEST_SKIP() << "mount -t tmpfs -o size=4m failed: " << std::strerror(error);
    }
    mounted_ = true;
    path_ = dir_ + "/ssd";
    UringBlockFileOptions probe;
    probe.path = path_;
    probe.size_bytes = kMiB;
    absl::StatusOr<std::unique_ptr<UringBlockFile>> file = UringBlockFile::Open(probe);
    if (!file.ok()) GTEST_SKIP() << "no io_uring O_DIRECT file on tmpfs: " << file.status();
    file->reset();
    ASSERT_EQ(::unlink(path_.c_str()), 0);
  }
  void TearDown() override {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }

  SsdTierOptions Options(uint64_t capacity, bool preallocate) const {
    SsdTierOptions options;
    options.path = path_;
    options.capacity_bytes = capacity;
    options.preallocate = preallocate;
    return options;
  }

  std::string dir_;
  std::string path_;
  bool mounted_ = false;
};

TEST_F(FullDiskTest, SparseFileWritesRunOutOfSpace) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier,
                       SsdTier::Open(Options(16 * kMiB, /*preallocate=*/false)));
  std::vector<std::byte> data(kMiB, std::byte{0x6b});
  absl::Status status;
  int written = 0;
  for (; written < 16; ++written) {
    ASSERT_OK_AND_ASSIGN(Extent extent, tier->Allocate(kMiB));
    status = tier->Write(extent, 0, data);
    if (!status.ok()) break;
  }
  EXPECT_CODE(status, absl::StatusCode::kResourceExhausted);
  EXPECT_GE(written, 2);  // some space was there
  EXPECT_LE(written, 4);  // ... but no more than the 4 MiB
}

TEST_F(FullDiskTest, PreallocatingMoreThanTheDiskFailsOpen) {
  EXPECT_CODE(SsdTier::Open(Options(16 * kMiB, /*preallocate=*/true)),
              absl::StatusCode::kResourceExhausted);
  struct stat st;
  EXPECT_NE(::stat(path_.c_str(), &st), 0) << "the failed Open left its new file behind";
}

TEST_F(FullDiskTest, GrowingAnExistingFilePastTheDiskKeepsItsSize) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier,
                         SsdTier::Open(Options(2 * kMiB, /*preallocate=*/true)));
  }
  EXPECT_CODE(SsdTier::Open(Options(8 * kMiB, /*preallocate=*/true)),
              absl::StatusCode::kResourceExhausted);
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 2 * kMiB);
  EXPECT_OK(SsdTier::Open(Options(2 * kMiB, /*preallocate=*/true)));
}

}  // namespace
}  // namespace strata::tiering::io
