#include "strata/base/status_code_name.h"

#include <cstring>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace strata::base {
namespace {

TEST(StatusCodeNameTest, NamesAreAbslsCanonicalOnes) {
  EXPECT_EQ(StatusCodeName(0), "OK");
  EXPECT_EQ(StatusCodeName(5), "NOT_FOUND");
  EXPECT_EQ(StatusCodeName(14), "UNAVAILABLE");
  EXPECT_EQ(StatusCodeName(15), "DATA_LOSS");
  EXPECT_EQ(StatusCodeName(16), "UNAUTHENTICATED");
  for (int c = 0; c <= 16; ++c) {
    EXPECT_EQ(StatusCodeName(c), absl::StatusCodeToString(static_cast<absl::StatusCode>(c)));
    // NUL-terminated, for the C API.
    EXPECT_EQ(std::strlen(StatusCodeName(c).data()), StatusCodeName(c).size());
  }
}

TEST(StatusCodeNameTest, NumbersOutsideTheCodesAreEmpty) {
  EXPECT_EQ(StatusCodeName(-1), "");
  EXPECT_EQ(StatusCodeName(17), "");
  EXPECT_EQ(StatusCodeName(1000), "");
}

}  // namespace
}  // namespace strata::base
