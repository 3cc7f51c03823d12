#include "strata/tiering/io/internal/direct_file.h"

#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"

namespace strata::tiering::io::internal {
namespace {

using base::ErrnoToStatus;
using tiering::internal::UniqueFd;

// Growing a file past RLIMIT_FSIZE raises SIGXFSZ, which kills the process: check first.
absl::Status CheckFileSizeLimit(const std::string& path, uint64_t bytes) {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0) return ErrnoToStatus(errno, "getrlimit");
  if (limit.rlim_cur != RLIM_INFINITY && bytes > limit.rlim_cur) {
    return ErrnoToStatus(EFBIG, absl::StrCat("growing ", path, " to ", bytes,
                                             " bytes (RLIMIT_FSIZE is ", limit.rlim_cur, ")"));
  }
  return absl::OkStatus();
}

// Grows the regular file `fd` from `old_size` to `size` bytes (allocating every block if
// `preallocate`), or on failure restores `old_size` and returns why.
absl::Status GrowFile(const DirectFileOptions& options, int fd, uint64_t old_size, uint64_t size) {
  STRATA_RETURN_IF_ERROR(CheckFileSizeLimit(options.path, size));
  if (options.preallocate) {
    // Also fills the holes of an existing sparse file.
    int ret;
    do {
      ret = ::fallocate(fd, 0, 0, static_cast<off_t>(size));
    } while (ret != 0 && errno == EINTR);
    if (ret != 0) {
      const int error = errno;
      // A failed fallocate may leave part of the range allocated (and the size grown).
      if (::ftruncate(fd, static_cast<off_t>(old_size)) != 0) {
        // Nothing more to do: the first error is the one to report.
      }
      return ErrnoToStatus(
          error, absl::StrCat("fallocate(", options.path, ", ", size, " bytes) (preallocate)"));
    }
    return absl::OkStatus();
  }
  if (size > old_size && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("ftruncate(", options.path, ", ", size, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<DirectFile> OpenRegularFile(const DirectFileOptions& options, UniqueFd fd,
                                           uint64_t existing_size) {
  const uint64_t size = options.size_bytes != 0 ? options.size_bytes : existing_size;
  if (size == 0 || size % options.block_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.path, ": size ", size, " (file ", existing_size, ", asked for ", options.size_bytes,
        ") must be a positive multiple of ", options.block_size, " bytes"));
  }
  if (size > existing_size || options.preallocate) {
    STRATA_RETURN_IF_ERROR(GrowFile(options, fd.get(), existing_size, size));
  }
  return DirectFile{std::move(fd), size, /*block_device=*/false};
}

absl::StatusOr<DirectFile> OpenBlockDevice(const DirectFileOptions& options, UniqueFd fd) {
  uint64_t device_size = 0;
  if (::ioctl(fd.get(), BLKGETSIZE64, &device_size) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("ioctl(", options.path, ", BLKGETSIZE64)"));
  }
  const uint64_t size = options.size_bytes != 0
                            ? options.size_bytes
                            : device_size / options.block_size * options.block_size;
  if (size == 0 || size % options.block_size != 0 || size > device_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.path, ": size ", size, " must be a positive multiple of ",
                     options.block_size, " and fit the device's ", device_size, " bytes"));
  }
  return DirectFile{std::move(fd), size, /*block_device=*/true};
}

}  // namespace

absl::StatusOr<DirectFile> OpenDirectFile(const DirectFileOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("empty path");
  if (options.size_bytes % options.block_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("size_bytes (", options.size_bytes,
                                                   ") must be a multiple of ", options.block_size));
  }
  struct stat before;
  const bool existed = ::stat(options.path.c_str(), &before) == 0;
  int flags = O_RDWR | O_DIRECT | O_CLOEXEC;
  if (options.create_if_missing) flags |= O_CREAT;
  UniqueFd fd(::open(options.path.c_str(), flags, 0644));
  if (!fd.valid()) {
    const int error = errno;
    // Some filesystems create the file before refusing O_DIRECT.
    if (!existed && error != ENOENT) ::unlink(options.path.c_str());
    if (error == EINVAL) {
      return absl::FailedPreconditionError(absl::StrCat(
          options.path,
          ": the filesystem refuses O_DIRECT (open: EINVAL); put the SSD tier on a filesystem "
          "with direct I/O (ext4, xfs, btrfs) or on a block device (strata does not fall back "
          "to buffered I/O)"));
    }
    if (error == EISDIR) {
      return absl::InvalidArgumentError(absl::StrCat(options.path, " is a directory"));
    }
    if (error == ENOENT && !options.create_if_missing) {
      return absl::NotFoundError(
          absl::StrCat(options.path, " does not exist (create_if_missing is false)"));
    }
    return ErrnoToStatus(error, absl::StrCat("open(", options.path, ", O_RDWR | O_DIRECT)"));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("fstat(", options.path, ")"));
  }
  absl::StatusOr<DirectFile> file;
  if (S_ISBLK(st.st_mode)) {
    file = OpenBlockDevice(options, std::move(fd));
  } else if (S_ISREG(st.st_mode)) {
    file = OpenRegularFile(options, std::move(fd), static_cast<uint64_t>(st.st_size));
  } else {
    file = absl::InvalidArgumentError(
        absl::StrCat(options.path, " is neither a regular file nor a block device"));
  }
  if (!file.ok() && !existed) ::unlink(options.path.c_str());
  return file;
}

}  // namespace strata::tiering::io::internal
