#include "strata/base/read_file.h"

#include <cerrno>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"

namespace strata::base {

absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoToStatus(errno, path);
  std::string text;
  char buffer[64 << 10];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    if (text.size() + static_cast<size_t>(in.gcount()) > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
    }
    text.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": read failed"));
  return text;
}

}  // namespace strata::base
