#include "client/lib/retry_policy.h"

#include "gtest/gtest.h"

namespace strata::client_internal {
namespace {

RetryOptions Options() {
  RetryOptions o;
  o.max_retries = 3;
  o.initial_backoff = absl::Milliseconds(100);
  o.max_backoff = absl::Milliseconds(350);
  o.multiplier = 2.0;
  o.jitter = 0.5;
  return o;
}

TEST(RetryPolicyTest, BackoffGrowsThenCaps) {
  const RetryPolicy policy(Options());
  EXPECT_EQ(policy.Backoff(1, 0.0), absl::Milliseconds(100));
  EXPECT_EQ(policy.Backoff(2, 0.0), absl::Milliseconds(200));
  EXPECT_EQ(policy.Backoff(3, 0.0), absl::Milliseconds(350));
  EXPECT_EQ(policy.Backoff(1000000, 0.0), absl::Milliseconds(350));  // no overflow
}

TEST(RetryPolicyTest, JitterShortensUpToItsFraction) {
  const RetryPolicy policy(Options());
  EXPECT_EQ(policy.Backoff(2, 0.5), absl::Milliseconds(150));
  EXPECT_GT(policy.Backoff(2, 0.999), absl::Milliseconds(100));
  EXPECT_LT(policy.Backoff(2, 0.999), absl::Milliseconds(101));
}

TEST(RetryPolicyTest, OnlyUnavailableOfRetryableCallsWithinLimitsAndDeadline) {
  const RetryPolicy policy(Options());
  const absl::Time now = absl::FromUnixSeconds(1000);
  const absl::Time far = now + absl::Seconds(10);
  const absl::Status unavailable = absl::UnavailableError("down");
  const absl::Duration b = absl::Milliseconds(100);
  EXPECT_TRUE(policy.ShouldRetry(Retry::kUnavailable, unavailable, 1, b, now, far));
  EXPECT_TRUE(policy.ShouldRetry(Retry::kUnavailable, unavailable, 3, b, now, far));
  EXPECT_FALSE(policy.ShouldRetry(Retry::kUnavailable, unavailable, 4, b, now, far));
  EXPECT_FALSE(policy.ShouldRetry(Retry::kNever, unavailable, 1, b, now, far));
  for (absl::StatusCode code : {absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kNotFound,
                                absl::StatusCode::kResourceExhausted, absl::StatusCode::kInternal,
                                absl::StatusCode::kDataLoss}) {
    EXPECT_FALSE(policy.ShouldRetry(Retry::kUnavailable, absl::Status(code, "x"), 1, b, now, far));
  }
  // A retry that could not start before the deadline is not made.
  EXPECT_FALSE(policy.ShouldRetry(Retry::kUnavailable, unavailable, 1, b, now,
                                  now + absl::Milliseconds(99)));
}

}  // namespace
}  // namespace strata::client_internal
