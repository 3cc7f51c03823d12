// Status assertions for tests (Debian's Abseil has no status matchers). Linked into every
// test by strata_add_test (target strata::base_testing).
//
//   ASSERT_OK(expr);                     expr: absl::Status or absl::StatusOr<T>
//   EXPECT_OK(expr);
//   ASSERT_OK_AND_ASSIGN(auto x, expr);  expr: absl::StatusOr<T>
//   EXPECT_CODE(expr, absl::StatusCode::kInvalidArgument);
//
// Guarded with #ifndef so that a later Abseil's own macros win where present.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace strata::testing_internal {

inline const absl::Status& ToStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& ToStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

inline ::testing::AssertionResult HasCode(const absl::Status& s, absl::StatusCode code) {
  if (s.code() == code) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected " << absl::StatusCodeToString(code) << ", got " << s;
}

}  // namespace strata::testing_internal

#ifndef ASSERT_OK
#define ASSERT_OK(expr) ASSERT_EQ(::strata::testing_internal::ToStatus(expr), absl::OkStatus())
#endif
#ifndef EXPECT_OK
#define EXPECT_OK(expr) EXPECT_EQ(::strata::testing_internal::ToStatus(expr), absl::OkStatus())
#endif
#ifndef EXPECT_CODE
#define EXPECT_CODE(expr, code) \
  EXPECT_TRUE(::strata::testing_internal::HasCode(::strata::testing_internal::ToStatus(expr), code))
#endif
#ifndef ASSERT_OK_AND_ASSIGN
#define STRATA_TEST_CONCAT_INNER_(a, b) a##b
#define STRATA_TEST_CONCAT_(a, b) STRATA_TEST_CONCAT_INNER_(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(STRATA_TEST_CONCAT_(statusor_, __LINE__), lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  ASSERT_TRUE(statusor.ok()) << statusor.status();       \
  lhs = std::move(statusor).value()
#endif
