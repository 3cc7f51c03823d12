// The one place where UCX's ucs_status_t becomes an absl::Status.
//
// Private to store/transport (includes UCX headers). Every UCX call in this module reports
// failure through UcsToStatus(); no other function maps UCX codes.
//
//   UCX status                                  absl code            meaning here
//   UCS_OK                                      OK
//   UCS_ERR_NO_MEMORY, UCS_ERR_EXCEEDS_LIMIT    RESOURCE_EXHAUSTED   out of memory / a limit
//   UCS_ERR_INVALID_PARAM, UCS_ERR_INVALID_ADDR INVALID_ARGUMENT     a bad call or address
//   UCS_ERR_MESSAGE_TRUNCATED,
//   UCS_ERR_BUFFER_TOO_SMALL, UCS_ERR_OUT_OF_RANGE OUT_OF_RANGE      bytes past a buffer's end
//   UCS_ERR_UNREACHABLE, UCS_ERR_CONNECTION_RESET,
//   UCS_ERR_NOT_CONNECTED, UCS_ERR_IO_ERROR,
//   UCS_ERR_NO_RESOURCE, UCS_ERR_BUSY,
//   UCS_ERR_NO_DEVICE, UCS_ERR_SHMEM_SEGMENT,
//   UCS_ERR_SOME_CONNECTS_FAILED,
//   link failures, endpoint failures
//   (incl. UCS_ERR_ENDPOINT_TIMEOUT)            UNAVAILABLE          peer down; a retry may help
//   UCS_ERR_TIMED_OUT                           DEADLINE_EXCEEDED
//   UCS_ERR_CANCELED                            CANCELLED            cancelled locally
//   UCS_ERR_REJECTED                            ABORTED              the peer refused it
//   UCS_ERR_ALREADY_EXISTS                      ALREADY_EXISTS
//   UCS_ERR_NO_ELEM                             NOT_FOUND
//   UCS_ERR_NOT_IMPLEMENTED, UCS_ERR_UNSUPPORTED UNIMPLEMENTED
//   UCS_INPROGRESS, UCS_ERR_NO_PROGRESS,
//   UCS_ERR_NO_MESSAGE                          INTERNAL             we misused UCX
//   anything else                               UNKNOWN
//
// The message reads "<what>: <UCX's status string> (ucs_status_t <n>)".
#pragma once

#include <string_view>

#include <ucs/type/status.h>

#include "absl/status/status.h"

namespace strata::store::transport::ucx {

// Converts `status` (the outcome of `what`, e.g. "ucp_ep_create") to an absl::Status.
absl::Status UcsToStatus(ucs_status_t status, std::string_view what);

}  // namespace strata::store::transport::ucx
