#include "strata/tiering/internal/prefault.h"

#include <cerrno>
#include <cstdint>

#include <sys/mman.h>

#include "strata/base/errno_status.h"

namespace strata::tiering::internal {
namespace {

constexpr size_t kSmallPageBytes = size_t{4} << 10;

}  // namespace

absl::Status PrefaultForWrite(std::byte* data, size_t size) {
  if (size == 0) return absl::OkStatus();
#ifdef MADV_POPULATE_WRITE
  if (::madvise(data, size, MADV_POPULATE_WRITE) == 0) return absl::OkStatus();
  const int error = errno;
  // EINVAL means an unknown advice only if a zero-length call fails too: madvise checks
  // the advice before it looks at the range, and an empty range is then a no-op.
  if (error != EINVAL || ::madvise(data, 0, MADV_POPULATE_WRITE) == 0) {
    return base::ErrnoToStatus(error, "madvise(MADV_POPULATE_WRITE)");
  }
#endif
  // A kernel without MADV_POPULATE_WRITE: touch one byte per page (the file is fresh, so
  // its bytes are zero).
  for (size_t offset = 0; offset < size; offset += kSmallPageBytes) {
    reinterpret_cast<volatile std::byte*>(data)[offset] = std::byte{0};
  }
  return absl::OkStatus();
}

}  // namespace strata::tiering::internal
