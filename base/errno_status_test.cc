#include "strata/base/errno_status.h"

#include <cerrno>
#include <cstring>

#include "gtest/gtest.h"

namespace strata::base {
namespace {

TEST(ErrnoStatusTest, CodesFollowStrataMeanings) {
  using absl::StatusCode;
  const std::pair<int, StatusCode> cases[] = {
      {ENOMEM, StatusCode::kResourceExhausted},
      {ENOSPC, StatusCode::kResourceExhausted},
      {EMFILE, StatusCode::kResourceExhausted},
      {EFBIG, StatusCode::kResourceExhausted},
      {EDQUOT, StatusCode::kResourceExhausted},
      {EINVAL, StatusCode::kInvalidArgument},
      {EBADF, StatusCode::kInvalidArgument},
      {EACCES, StatusCode::kPermissionDenied},
      {EPERM, StatusCode::kPermissionDenied},
      {EROFS, StatusCode::kPermissionDenied},
      {ENOSYS, StatusCode::kUnimplemented},
      {EOPNOTSUPP, StatusCode::kUnimplemented},
      {EAGAIN, StatusCode::kUnavailable},
      {EINTR, StatusCode::kUnavailable},
      {ETIMEDOUT, StatusCode::kUnavailable},
      {ENOENT, StatusCode::kNotFound},
      {ENOTDIR, StatusCode::kNotFound},
      {EEXIST, StatusCode::kAlreadyExists},
      {EISDIR, StatusCode::kFailedPrecondition},
      {EIO, StatusCode::kDataLoss},
      {EPIPE, StatusCode::kUnavailable},
      {ECONNRESET, StatusCode::kUnavailable},
      {EADDRINUSE, StatusCode::kUnavailable},
      {EXDEV, StatusCode::kInternal},
      {0, StatusCode::kInternal},
  };
  for (const auto& [error, code] : cases) {
    EXPECT_EQ(ErrnoToStatusCode(error), code) << error;
    EXPECT_EQ(ErrnoToStatus(error, "x").code(), code) << error;
  }
}

TEST(ErrnoStatusTest, MessageNamesTheCallTheErrorAndTheNumber) {
  const absl::Status s = ErrnoToStatus(ENOENT, "open(/no/such)");
  EXPECT_EQ(s.message(), std::string("open(/no/such): ") + std::strerror(ENOENT) + " (errno " +
                             std::to_string(ENOENT) + ")");
}

}  // namespace
}  // namespace strata::base
