#include "store/meta/rocks_status.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace strata::store::meta {
namespace {

// RocksDB 7.x reports a held LOCK file as IOError "lock hold by current process" (same
// process) or "While lock file: <dir>/LOCK: Resource temporarily unavailable" (another one).
bool IsLockHeld(const rocksdb::Status& status, const std::string& message) {
  return status.IsIOError() && (absl::StrContains(message, "lock hold by current process") ||
                                absl::StrContains(message, "While lock file"));
}

}  // namespace

absl::Status FromRocksStatus(const rocksdb::Status& status, std::string_view context) {
  if (status.ok()) return absl::OkStatus();
  const std::string message = status.ToString();
  const std::string text = absl::StrCat(std::string(context), ": ", message);
  if (IsLockHeld(status, message)) {
    return absl::FailedPreconditionError(
        absl::StrCat(std::string(context),
                     ": another strata-node (or process) uses this data dir (", message, ")"));
  }
  if (status.IsNotFound()) return absl::NotFoundError(text);
  if (status.IsCorruption()) return absl::DataLossError(text);
  if (status.IsIOError() || status.IsBusy() || status.IsTimedOut() || status.IsTryAgain() ||
      status.IsIncomplete() || status.IsShutdownInProgress()) {
    return absl::UnavailableError(text);
  }
  if (status.IsInvalidArgument()) return absl::InvalidArgumentError(text);
  if (status.IsNotSupported()) return absl::FailedPreconditionError(text);
  if (status.IsAborted()) return absl::AbortedError(text);
  return absl::InternalError(text);
}

}  // namespace strata::store::meta
