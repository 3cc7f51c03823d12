#include "strata/testing/temp_dir.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/errno_status.h"

namespace strata::testing {

absl::StatusOr<std::string> MakeTempDir(std::string_view prefix) {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TMPDIR");
  std::string base =
      std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp").lexically_normal();
  if (base.size() > 1 && base.back() == '/') base.pop_back();  // no "//" in the path
  std::string pattern = absl::StrCat(base, "/", absl::string_view(prefix.data(), prefix.size()),
                                     "-", getpid(), "-", counter++, "-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return base::ErrnoToStatus(errno, absl::StrCat("mkdtemp(", pattern, ")"));
  }
  return pattern;
}

ScopedTempDir::ScopedTempDir(std::string_view prefix) {
  absl::StatusOr<std::string> dir = MakeTempDir(prefix);
  CHECK(dir.ok()) << dir.status();
  path_ = *std::move(dir);
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace strata::testing
