// Exit codes of the `strata` CLI, and how a command's absl::Status maps onto them.
//
//   code  name              when
//   ----  ----------------  ----------------------------------------------------------
//   0     kExitOk           the command did what was asked
//   1     kExitFailed       the operation failed: the node answered an error (NOT_FOUND,
//                           FAILED_PRECONDITION, ...), or a local file could not be read
//                           or written
//   2     kExitUsage        bad flags or arguments (unknown flag, bad layout spec, token
//                           file that does not parse, input of the wrong size, ...),
//                           found before anything was sent
//   3     kExitUnreachable  the node could not be reached in time: UNAVAILABLE or
//                           DEADLINE_EXCEEDED (also a node refusing writes while
//                           draining, which answers UNAVAILABLE)
//
// A usage error is an absl::Status marked with a payload (UsageError / AsUsageError), so
// it can travel through STRATA_RETURN_IF_ERROR like any other status and still be told
// apart from an INVALID_ARGUMENT the node answered. Pure functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

// INVALID_ARGUMENT with `message`, marked as a usage error.
absl::Status UsageError(const std::string& message);
// `status` (code and message kept) marked as a usage error; OK stays OK.
absl::Status AsUsageError(absl::Status status);
template <typename T>
absl::StatusOr<T> AsUsageError(absl::StatusOr<T> result) {
  if (result.ok()) return result;
  return AsUsageError(std::move(result).status());
}
bool IsUsageError(const absl::Status& status);

// The table above: OK 0; usage 2; UNAVAILABLE / DEADLINE_EXCEEDED 3; anything else 1.
int ExitCodeFor(const absl::Status& status);

}  // namespace strata::cli
