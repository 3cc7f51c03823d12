// Temporary directories for tests.
//
// MakeTempDir(prefix): a fresh directory "<$TMPDIR or /tmp>/<prefix>-<pid>-<n>-XXXXXX"
// (mkdtemp; no "//" in the path); the caller owns it. ScopedTempDir owns one and removes it, with
// everything in it, on destruction.
//
// Errors: MakeTempDir returns the errno of mkdtemp (base::ErrnoToStatus); ScopedTempDir's
// constructor CHECK-fails instead (a test cannot go on without its directory).
// Thread-safe (the counter is atomic; each directory is distinct).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::testing {

absl::StatusOr<std::string> MakeTempDir(std::string_view prefix);

class ScopedTempDir {
 public:
  explicit ScopedTempDir(std::string_view prefix = "strata-test");
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace strata::testing
