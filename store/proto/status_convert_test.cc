#include "strata/proto/status_convert.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace strata::proto {
namespace {

constexpr int kFirstErrorCode = 1;  // CANCELLED
constexpr int kLastCode = 16;       // UNAUTHENTICATED

TEST(StatusConvertTest, EveryCodeMapsToTheSameCodeBothWays) {
  for (int code = kFirstErrorCode; code <= kLastCode; ++code) {
    const std::string message = "message for code " + std::to_string(code);
    const absl::Status in(static_cast<absl::StatusCode>(code), message);
    const grpc::Status wire = ToGrpcStatus(in);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(wire.error_message(), message);
    const absl::Status out = FromGrpcStatus(wire);
    EXPECT_EQ(out, in) << "code " << code;
  }
}

TEST(StatusConvertTest, GrpcCodesMapToTheSameAbslCodes) {
  for (int code = kFirstErrorCode; code <= kLastCode; ++code) {
    const absl::Status out =
        FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(code), "from grpc"));
    EXPECT_EQ(static_cast<int>(out.code()), code);
    EXPECT_EQ(out.message(), "from grpc");
  }
}

TEST(StatusConvertTest, NamedCodesOfStrataMatch) {
  // The codes docs/api.md promises, spelled out once by name.
  EXPECT_EQ(ToGrpcStatus(absl::DataLossError("x")).error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_EQ(ToGrpcStatus(absl::ResourceExhaustedError("x")).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ToGrpcStatus(absl::FailedPreconditionError("x")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(
      FromGrpcStatus(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded")).code(),
      absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect")).code(),
            absl::StatusCode::kUnavailable);
}

TEST(StatusConvertTest, OkIsOk) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToGrpcStatus(absl::OkStatus()).error_message(), "");
  EXPECT_EQ(FromGrpcStatus(grpc::Status::OK), absl::OkStatus());
}

TEST(StatusConvertTest, MessagesAreKeptVerbatim) {
  const char kOdd[] = "bytes \0 \xff\xfe and UTF-8 \xc3\xa9";
  const std::string odd(kOdd, sizeof(kOdd) - 1);
  EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(absl::NotFoundError(odd))).message(), odd);
  EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(absl::InternalError(""))),
            absl::Status(absl::StatusCode::kInternal, ""));
}

TEST(StatusConvertTest, UnknownGrpcCodeBecomesUnknownWithItsNumber) {
  // grpc::StatusCode has no fixed underlying type: its values are -32..31
  // (anything else is undefined behaviour before our code runs).
  const absl::Status out =
      FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(20), "from the future"));
  EXPECT_EQ(out.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(out.message(), "[code 20] from the future");
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::DO_NOT_USE, "x")).message(),
            "[code -1] x");
}

TEST(StatusConvertTest, UnknownAbslCodeBecomesUnknownWithItsNumber) {
  const grpc::Status wire = ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(42), "odd"));
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(wire.error_message(), "[code 42] odd");
}

}  // namespace
}  // namespace strata::proto
