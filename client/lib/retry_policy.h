// RetryPolicy: when libstrata repeats a call and how long it waits first
// (strata/options.h RetryOptions, strata/client.h "Deadlines and retries").
//
// Only UNAVAILABLE is retried (node down, connection refused or lost: the request did not
// take effect, or repeating it is harmless), and only for calls marked retryable.
// The wait before retry k (k >= 1) is
//
//   base(k)  = min(max_backoff, initial_backoff * multiplier^(k-1))
//   delay(k) = base(k) * (1 - jitter * u),   u uniform in [0, 1) from the caller
//
// A retry happens only when it can start before the deadline.
//
// A value type; pure functions; thread-safe.
#pragma once

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "strata/options.h"

namespace strata::client_internal {

enum class Retry {
  kNever,        // not safe to repeat (Delete, Evict, Release, AbortPut)
  kUnavailable,  // repeat on UNAVAILABLE
};

class RetryPolicy {
 public:
  explicit RetryPolicy(const RetryOptions& options) : options_(options) {}

  // The wait before retry `retry` (1 for the first retry). `u` in [0, 1).
  absl::Duration Backoff(int retry, double u) const;

  // True when attempt `attempts_made` (1 = the first call) ended with `status`, a call of
  // kind `retry`, and a retry after `backoff` still starts before `deadline` (at `now`).
  bool ShouldRetry(Retry retry, const absl::Status& status, int attempts_made,
                   absl::Duration backoff, absl::Time now, absl::Time deadline) const;

 private:
  RetryOptions options_;
};

}  // namespace strata::client_internal
