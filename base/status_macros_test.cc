#include "strata/base/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace strata {
namespace {

absl::Status FailIf(bool fail) {
  return fail ? absl::InvalidArgumentError("bad") : absl::OkStatus();
}

absl::Status Chain(bool fail, int* reached) {
  STRATA_RETURN_IF_ERROR(FailIf(fail));
  ++*reached;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<std::string>> Make(bool fail) {
  if (fail) return absl::NotFoundError("none");
  return std::make_unique<std::string>("value");
}

absl::StatusOr<size_t> Length(bool fail) {
  STRATA_ASSIGN_OR_RETURN(auto s, Make(fail));  // move-only value
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<std::string> t, Make(false));
  return s->size() + t->size();
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtFirstError) {
  int reached = 0;
  EXPECT_TRUE(Chain(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  absl::Status s = Chain(true, &reached);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad");
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, AssignOrReturnMovesValueOrPropagates) {
  auto ok = Length(false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 10u);
  auto err = Length(true);
  EXPECT_EQ(err.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata
