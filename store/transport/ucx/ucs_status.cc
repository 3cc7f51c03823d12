#include "store/transport/ucx/ucs_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace strata::store::transport::ucx {
namespace {

absl::StatusCode CodeOf(ucs_status_t status) {
  if (UCS_IS_LINK_ERROR(status) || UCS_IS_ENDPOINT_ERROR(status)) {
    return absl::StatusCode::kUnavailable;
  }
  switch (status) {
    case UCS_OK:
      return absl::StatusCode::kOk;
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_EXCEEDS_LIMIT:
      return absl::StatusCode::kResourceExhausted;
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
      return absl::StatusCode::kInvalidArgument;
    case UCS_ERR_MESSAGE_TRUNCATED:
    case UCS_ERR_BUFFER_TOO_SMALL:
    case UCS_ERR_OUT_OF_RANGE:
      return absl::StatusCode::kOutOfRange;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_IO_ERROR:
    case UCS_ERR_NO_RESOURCE:
    case UCS_ERR_BUSY:
    case UCS_ERR_NO_DEVICE:
    case UCS_ERR_SHMEM_SEGMENT:
    case UCS_ERR_SOME_CONNECTS_FAILED:
      return absl::StatusCode::kUnavailable;
    case UCS_ERR_TIMED_OUT:
      return absl::StatusCode::kDeadlineExceeded;
    case UCS_ERR_CANCELED:
      return absl::StatusCode::kCancelled;
    case UCS_ERR_REJECTED:
      return absl::StatusCode::kAborted;
    case UCS_ERR_ALREADY_EXISTS:
      return absl::StatusCode::kAlreadyExists;
    case UCS_ERR_NO_ELEM:
      return absl::StatusCode::kNotFound;
    case UCS_ERR_NOT_IMPLEMENTED:
    case UCS_ERR_UNSUPPORTED:
      return absl::StatusCode::kUnimplemented;
    case UCS_INPROGRESS:
    case UCS_ERR_NO_PROGRESS:
    case UCS_ERR_NO_MESSAGE:
      return absl::StatusCode::kInternal;
    default:
      return absl::StatusCode::kUnknown;
  }
}

}  // namespace

absl::Status UcsToStatus(ucs_status_t status, std::string_view what) {
  const absl::StatusCode code = CodeOf(status);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  return absl::Status(code, absl::StrCat(std::string(what), ": ", ucs_status_string(status),
                                         " (ucs_status_t ", static_cast<int>(status), ")"));
}

}  // namespace strata::store::transport::ucx
