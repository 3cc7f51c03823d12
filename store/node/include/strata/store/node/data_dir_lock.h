// DataDirLock: one strata-node per data directory.
//
// Acquire creates the directory (and its parents) if missing, opens
// `<dir>/strata-node.pid` and takes an exclusive flock(2) on it without waiting, then
// writes this process's pid into it. The lock lives as long as the DataDirLock (the open
// file description): a second node, in this or another process, fails to acquire it until
// the first releases it or dies — the kernel drops the lock with the process, so a crashed
// node never leaves a stale lock behind. The file itself is left in place on release (a
// node that unlinked it could race a starting node into holding a lock on an unlinked
// file); the lock, not the file's existence, says whether a node runs. Its content is the
// pid of the last node that held it.
//
// Errors: Acquire returns FAILED_PRECONDITION "data dir <dir> is in use by another
// strata-node (pid N)" when the lock is held, and the errno of a failing
// mkdir/open/lock/write as base::ErrnoToStatus converts it (PERMISSION_DENIED, NOT_FOUND,
// RESOURCE_EXHAUSTED...).
// Ownership: move-only owner of the descriptor. Thread safety: none needed (immutable).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace strata::store::node {

class DataDirLock {
 public:
  inline static constexpr char kFileName[] = "strata-node.pid";

  static absl::StatusOr<DataDirLock> Acquire(const std::string& dir);

  DataDirLock(DataDirLock&& other) noexcept;
  DataDirLock& operator=(DataDirLock&& other) noexcept;
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;
  // Releases the lock.
  ~DataDirLock();

  // The directory as an absolute path, and the lock file in it.
  const std::string& dir() const { return dir_; }
  const std::string& path() const { return path_; }

 private:
  DataDirLock(std::string dir, std::string path, int fd)
      : dir_(std::move(dir)), path_(std::move(path)), fd_(fd) {}

  std::string dir_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace strata::store::node
