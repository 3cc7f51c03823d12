// ErrnoToStatus: the one place where strata turns an errno into an absl::Status.
//
// Codes follow strata's meanings (status_macros.h):
//   ENOMEM, ENOSPC, EMFILE, ENFILE, EDQUOT, EFBIG  RESOURCE_EXHAUSTED  (out of memory/space)
//   EINVAL, ENAMETOOLONG, EBADF, EFAULT           INVALID_ARGUMENT
//   EPERM, EACCES, EROFS                          PERMISSION_DENIED
//   ENOSYS, EOPNOTSUPP, ENODEV                     UNIMPLEMENTED      (kernel lacks it)
//   EAGAIN, EINTR, EBUSY, ETIMEDOUT                UNAVAILABLE        (a retry may help)
//   ENOENT, ENOTDIR                               NOT_FOUND          (no such path)
//   EEXIST                                        ALREADY_EXISTS
//   EISDIR                                        FAILED_PRECONDITION (a directory)
//   EIO                                           DATA_LOSS          (bytes may be gone)
//   anything else                                 INTERNAL
// The message reads "<what>: <strerror> (errno N)". Pure functions; thread-safe (strerror_r).
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace strata::base {

// The code of the table above.
absl::StatusCode ErrnoToStatusCode(int error_number);

// A status with ErrnoToStatusCode(error_number) and "<what>: <strerror> (errno N)".
absl::Status ErrnoToStatus(int error_number, std::string_view what);

}  // namespace strata::base
