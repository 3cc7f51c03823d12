#include "strata/base/errno_status.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace strata::base {

absl::StatusCode ErrnoToStatusCode(int error_number) {
  switch (error_number) {
    case ENOMEM:
    case ENOSPC:
    case EMFILE:
    case ENFILE:
    case EDQUOT:
    case EFBIG:
      return absl::StatusCode::kResourceExhausted;
    case EINVAL:
    case ENAMETOOLONG:
    case EBADF:
    case EFAULT:
      return absl::StatusCode::kInvalidArgument;
    case EPERM:
    case EACCES:
    case EROFS:
      return absl::StatusCode::kPermissionDenied;
    case ENOSYS:
    case EOPNOTSUPP:
    case ENODEV:
      return absl::StatusCode::kUnimplemented;
    case EAGAIN:
    case EINTR:
    case EBUSY:
    case ETIMEDOUT:
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ENOTCONN:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case EADDRINUSE:
    case EADDRNOTAVAIL:
      return absl::StatusCode::kUnavailable;
    case ENOENT:
    case ENOTDIR:
      return absl::StatusCode::kNotFound;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case EISDIR:
      return absl::StatusCode::kFailedPrecondition;
    case EIO:
      return absl::StatusCode::kDataLoss;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status ErrnoToStatus(int error_number, std::string_view what) {
  char buffer[128];
  // GNU strerror_r returns the message (possibly not in `buffer`).
  const char* message = strerror_r(error_number, buffer, sizeof(buffer));
  return absl::Status(ErrnoToStatusCode(error_number),
                      absl::StrCat(absl::string_view(what.data(), what.size()), ": ", message,
                                   " (errno ", error_number, ")"));
}

}  // namespace strata::base
