#include "client/lib/retry_policy.h"

#include <algorithm>
#include <cmath>

namespace strata::client_internal {

absl::Duration RetryPolicy::Backoff(int retry, double u) const {
  if (retry < 1) retry = 1;
  const double initial = absl::ToDoubleSeconds(options_.initial_backoff);
  const double cap = absl::ToDoubleSeconds(options_.max_backoff);
  // Stop multiplying once past the cap (no overflow to inf for large `retry`).
  double base = initial;
  for (int k = 1; k < retry && base < cap; ++k) base *= options_.multiplier;
  base = std::min(base, cap);
  const double factor = 1.0 - options_.jitter * std::clamp(u, 0.0, 1.0);
  return absl::Seconds(base * factor);
}

bool RetryPolicy::ShouldRetry(Retry retry, const absl::Status& status, int attempts_made,
                              absl::Duration backoff, absl::Time now, absl::Time deadline) const {
  if (retry != Retry::kUnavailable) return false;
  if (status.code() != absl::StatusCode::kUnavailable) return false;
  if (attempts_made > options_.max_retries) return false;
  return now + backoff < deadline;
}

}  // namespace strata::client_internal
