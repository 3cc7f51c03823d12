#include "store/transport/ucx/ucs_status.h"

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::transport::ucx {
namespace {

using absl::StatusCode;

TEST(UcsToStatusTest, OkIsOk) { EXPECT_OK(UcsToStatus(UCS_OK, "x")); }

TEST(UcsToStatusTest, MapsEachFamily) {
  EXPECT_CODE(UcsToStatus(UCS_ERR_NO_MEMORY, "x"), StatusCode::kResourceExhausted);
  EXPECT_CODE(UcsToStatus(UCS_ERR_CONNECTION_RESET, "x"), StatusCode::kUnavailable);
  EXPECT_CODE(UcsToStatus(UCS_ERR_UNREACHABLE, "x"), StatusCode::kUnavailable);
  EXPECT_CODE(UcsToStatus(UCS_ERR_ENDPOINT_TIMEOUT, "x"), StatusCode::kUnavailable);
  EXPECT_CODE(UcsToStatus(UCS_ERR_NOT_CONNECTED, "x"), StatusCode::kUnavailable);
  // Every code in the link- and endpoint-failure ranges means "peer down".
  EXPECT_CODE(UcsToStatus(static_cast<ucs_status_t>(UCS_ERR_FIRST_LINK_FAILURE - 3), "x"),
              StatusCode::kUnavailable);
  EXPECT_CODE(UcsToStatus(static_cast<ucs_status_t>(UCS_ERR_FIRST_ENDPOINT_FAILURE - 1), "x"),
              StatusCode::kUnavailable);
  EXPECT_CODE(UcsToStatus(UCS_ERR_CANCELED, "x"), StatusCode::kCancelled);
  EXPECT_CODE(UcsToStatus(UCS_ERR_TIMED_OUT, "x"), StatusCode::kDeadlineExceeded);
  EXPECT_CODE(UcsToStatus(UCS_ERR_INVALID_PARAM, "x"), StatusCode::kInvalidArgument);
  EXPECT_CODE(UcsToStatus(UCS_ERR_MESSAGE_TRUNCATED, "x"), StatusCode::kOutOfRange);
  EXPECT_CODE(UcsToStatus(UCS_ERR_REJECTED, "x"), StatusCode::kAborted);
  EXPECT_CODE(UcsToStatus(UCS_ERR_UNSUPPORTED, "x"), StatusCode::kUnimplemented);
  EXPECT_CODE(UcsToStatus(UCS_INPROGRESS, "x"), StatusCode::kInternal);
  EXPECT_CODE(UcsToStatus(static_cast<ucs_status_t>(-99), "x"), StatusCode::kUnknown);
}

TEST(UcsToStatusTest, MessageNamesTheCallAndUcxText) {
  const absl::Status s = UcsToStatus(UCS_ERR_CONNECTION_RESET, "ucp_am_send_nbx");
  EXPECT_NE(s.message().find("ucp_am_send_nbx"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("-25"), absl::string_view::npos) << s;
}

}  // namespace
}  // namespace strata::store::transport::ucx
