#include "strata/store/node/data_dir_lock.h"

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"

namespace strata::store::node {
namespace {

// The pid written in the lock file, or "?" if it cannot be read.
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "?";
  std::string pid(buf, static_cast<size_t>(n));
  absl::StripAsciiWhitespace(&pid);
  return pid.empty() ? "?" : pid;
}

}  // namespace

absl::StatusOr<DataDirLock> DataDirLock::Acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return base::ErrnoToStatus(ec.value(), absl::StrCat("cannot create data dir ", dir));
  std::string absolute = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (ec) absolute = dir;
  if (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
  const std::string path = absl::StrCat(absolute, "/", kFileName);

  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return base::ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string holder = HolderPid(fd);
      close(fd);
      return absl::FailedPreconditionError(absl::StrCat(
          "data dir ", absolute, " is in use by another strata-node (pid ", holder, ")"));
    }
    close(fd);
    return base::ErrnoToStatus(err, absl::StrCat("cannot lock ", path));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    close(fd);
    return base::ErrnoToStatus(err, absl::StrCat("cannot write ", path));
  }
  return DataDirLock(absolute, path, fd);
}

DataDirLock::DataDirLock(DataDirLock&& other) noexcept
    : dir_(std::move(other.dir_)),
      path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)) {}

DataDirLock& DataDirLock::operator=(DataDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    dir_ = std::move(other.dir_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace strata::store::node
