#include "client/lib/transfer_group.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::client_internal {
namespace {

TEST(TransferGroupTest, FinishedWhenRequestsEndedAndTransfersDone) {
  TransferGroup group;
  group.RequestStarted();
  ASSERT_TRUE(group.TryBeginTransfer());
  group.ItemLanded(3, 100);
  group.EndTransfer(absl::OkStatus());
  std::vector<uint32_t> landed;
  bool finished = true;
  ASSERT_OK(group.WaitForProgress(absl::Now() + absl::Seconds(5), &landed, &finished));
  EXPECT_EQ(landed, std::vector<uint32_t>{3});
  EXPECT_FALSE(finished);  // the request has not ended
  group.RequestEnded(absl::OkStatus());
  landed.clear();
  ASSERT_OK(group.WaitForProgress(absl::Now() + absl::Seconds(5), &landed, &finished));
  EXPECT_TRUE(landed.empty());
  EXPECT_TRUE(finished);
  EXPECT_EQ(group.landed_bytes(), 100u);
}

TEST(TransferGroupTest, DeadlineWithNothingToReport) {
  TransferGroup group;
  group.RequestStarted();
  std::vector<uint32_t> landed;
  bool finished = true;
  EXPECT_CODE(group.WaitForProgress(absl::Now() + absl::Milliseconds(20), &landed, &finished),
              absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(finished);
}

TEST(TransferGroupTest, FirstFailureIsKeptAndRefusesNewTransfers) {
  TransferGroup group;
  group.RequestStarted();
  group.RequestStarted();
  group.RequestEnded(absl::NotFoundError("lease expired"));
  group.RequestEnded(absl::UnavailableError("later"));
  EXPECT_FALSE(group.accepting());
  EXPECT_FALSE(group.TryBeginTransfer());
  std::vector<uint32_t> landed;
  bool finished = false;
  const absl::Status status =
      group.WaitForProgress(absl::Now() + absl::Seconds(5), &landed, &finished);
  EXPECT_CODE(status, absl::StatusCode::kNotFound);
  EXPECT_TRUE(finished);
}

TEST(TransferGroupTest, CancelRefusesNewTransfersAndWaitIdleWaitsForRunningOnes) {
  TransferGroup group;
  ASSERT_TRUE(group.TryBeginTransfer());
  group.Cancel();
  EXPECT_FALSE(group.TryBeginTransfer());
  EXPECT_FALSE(group.WaitIdle(absl::Now() + absl::Milliseconds(10)));
  std::thread completion([&] {
    absl::SleepFor(absl::Milliseconds(30));
    group.EndTransfer(absl::CancelledError("dropped"));
  });
  EXPECT_TRUE(group.WaitIdle(absl::Now() + absl::Seconds(10)));
  completion.join();
}

TEST(TransferGroupTest, AWaiterWakesWhenARequestEnds) {
  TransferGroup group;
  group.RequestStarted();
  group.RequestStarted();
  std::thread ender([&] {
    absl::SleepFor(absl::Milliseconds(20));
    group.RequestEnded(absl::OkStatus());
  });
  std::vector<uint32_t> landed;
  bool finished = true;
  ASSERT_OK(group.WaitForProgress(absl::Now() + absl::Seconds(10), &landed, &finished));
  EXPECT_FALSE(finished);
  EXPECT_EQ(group.pending_requests(), 1);
  ender.join();
}

}  // namespace
}  // namespace strata::client_internal
