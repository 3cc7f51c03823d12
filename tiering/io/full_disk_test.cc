// The SSD tier on a full disk: a 4 MiB tmpfs mounted for the test. Needs root (mount(2));
// skipped with the reason otherwise, or where this kernel's tmpfs refuses O_DIRECT.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/testing/tmpfs.h"
#include "strata/tiering/io/ssd_tier.h"
#include "strata/tiering/io/uring_block_file.h"
#include "tiering/io/block_test_util.h"

namespace strata::tiering::io {
namespace {

using namespace ::strata::tiering::io::block_test;  // NOLINT(build/namespaces)

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<strata::testing::ScopedTmpfs>> disk =
        strata::testing::ScopedTmpfs::Mount(4 * kMiB, "strata_full_disk");
    if (!disk.ok()) GTEST_SKIP() << "no 4 MiB tmpfs: " << disk.status();
    disk_ = *std::move(disk);
    path_ = disk_->path() + "/ssd";
    UringBlockFileOptions probe;
    probe.path = path_;
    probe.size_bytes = kMiB;
    absl::StatusOr<std::unique_ptr<UringBlockFile>> file = UringBlockFile::Open(probe);
    if (!file.ok()) GTEST_SKIP() << "no io_uring O_DIRECT file on tmpfs: " << file.status();
    file->reset();
    ASSERT_EQ(::unlink(path_.c_str()), 0);
  }

  SsdTierOptions Options(uint64_t capacity, bool preallocate) const {
    SsdTierOptions options;
    options.path = path_;
    options.capacity_bytes = capacity;
    options.preallocate = preallocate;
    return options;
  }

  std::unique_ptr<strata::testing::ScopedTmpfs> disk_;
  std::string path_;
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
