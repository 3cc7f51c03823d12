#include "strata/testing/tmpfs.h"

#include <cerrno>
#include <filesystem>
#include <utility>

#include <sys/mount.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"
#include "strata/testing/temp_dir.h"

namespace strata::testing {

absl::StatusOr<std::unique_ptr<ScopedTmpfs>> ScopedTmpfs::Mount(uint64_t size_bytes,
                                                                std::string_view prefix) {
  if (geteuid() != 0) return absl::PermissionDeniedError("mounting a tmpfs needs root");
  absl::StatusOr<std::string> dir = MakeTempDir(prefix);
  if (!dir.ok()) return dir.status();
  const std::string options = absl::StrCat("size=", size_bytes);
  if (mount("tmpfs", dir->c_str(), "tmpfs", 0, options.c_str()) != 0) {
    const int error = errno;
    std::error_code ec;
    std::filesystem::remove_all(*dir, ec);
    return base::ErrnoToStatus(error, absl::StrCat("mount -t tmpfs -o ", options, " ", *dir));
  }
  return std::unique_ptr<ScopedTmpfs>(new ScopedTmpfs(*std::move(dir)));
}

ScopedTmpfs::~ScopedTmpfs() {
  umount2(path_.c_str(), MNT_DETACH);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace strata::testing
