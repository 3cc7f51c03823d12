// ScopedTmpfs: a small tmpfs mounted on a fresh temporary directory, for tests of a full
// disk (the SSD tier's ENOSPC, a node whose data disk fills). Test-only (strata::testing).
//
// Mount(size_bytes) makes a directory (MakeTempDir) and mounts a tmpfs of that size on it.
// The caller owns the ScopedTmpfs; its destructor unmounts it (lazily, MNT_DETACH, so files
// still open do not block it) and removes the directory.
//
// Errors: Mount returns PERMISSION_DENIED when this process is not root (mount(2) needs
// it), and the errno of mkdtemp or mount otherwise (base::ErrnoToStatus); a test skips with
// the status (GTEST_SKIP() << status), since a container may not allow mounts at all.
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::testing {

class ScopedTmpfs {
 public:
  static absl::StatusOr<std::unique_ptr<ScopedTmpfs>> Mount(
      uint64_t size_bytes, std::string_view prefix = "strata-tmpfs");

  ~ScopedTmpfs();
  ScopedTmpfs(const ScopedTmpfs&) = delete;
  ScopedTmpfs& operator=(const ScopedTmpfs&) = delete;

  // The mount point.
  const std::string& path() const { return path_; }

 private:
  explicit ScopedTmpfs(std::string path) : path_(std::move(path)) {}

  std::string path_;
};

}  // namespace strata::testing
