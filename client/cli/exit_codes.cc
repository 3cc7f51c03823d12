#include "client/cli/exit_codes.h"

#include <utility>

#include "absl/strings/cord.h"

namespace strata::cli {
namespace {

constexpr char kUsagePayload[] = "type.strata.dev/strata.cli.UsageError";

}  // namespace

absl::Status UsageError(const std::string& message) {
  return AsUsageError(absl::InvalidArgumentError(message));
}

absl::Status AsUsageError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kUsagePayload, absl::Cord("usage"));
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kUsagePayload).has_value();
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (IsUsageError(status)) return kExitUsage;
  if (status.code() == absl::StatusCode::kUnavailable ||
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    return kExitUnreachable;
  }
  return kExitFailed;
}

}  // namespace strata::cli
