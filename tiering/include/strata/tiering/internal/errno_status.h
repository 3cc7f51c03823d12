// ErrnoToStatus: the one place where tiering turns an errno into an absl::Status.
//
// Codes follow strata's meanings (strata/base/status_macros.h):
//   ENOMEM, ENOSPC, EMFILE, ENFILE, EDQUOT, EFBIG  RESOURCE_EXHAUSTED  (out of memory/space)
//   EINVAL, ENAMETOOLONG, EBADF, EFAULT           INVALID_ARGUMENT
//   EPERM, EACCES                                 PERMISSION_DENIED
//   ENOSYS, EOPNOTSUPP, ENODEV                     UNIMPLEMENTED      (kernel lacks it)
//   EAGAIN, EINTR, EBUSY, ETIMEDOUT                UNAVAILABLE        (a retry may help)
//   ENOENT                                        NOT_FOUND
//   EEXIST                                        ALREADY_EXISTS
//   EIO                                           DATA_LOSS          (bytes may be gone)
//   anything else                                 INTERNAL
// The message reads "<what>: <strerror> (errno N)". Thread-safe.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace strata::tiering::internal {

absl::Status ErrnoToStatus(int error_number, std::string_view what);

}  // namespace strata::tiering::internal
