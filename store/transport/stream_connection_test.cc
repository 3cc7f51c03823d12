// StreamConnection between two ends of a socketpair: what the messenger drives, without it.
#include "store/transport/stream_connection.h"

#include <cstdint>
#include <string>
#include <vector>

#include <sys/socket.h>

#include "absl/status/status.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::transport {
namespace {

// Streamed payloads that arrive undecided are parked, decided afterwards, and land — an
// empty one too (the fuzzer found that parking then receiving 0 bytes passed null pointers
// to memcpy: store/transport/fuzz/corpus/stream/regressions/empty-parked-payload); the
// sender's sends complete OK once the receiver's ACKs are read.
TEST(StreamConnectionTest, ParkedPayloadsOfAnySizeIncludingEmptyLandWhenDecided) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  StreamConnection sender(fds[0], FrameLimits{}, 0);
  StreamConnection receiver(fds[1], FrameLimits{}, /*max_parked_bytes=*/1 << 20);
  const std::vector<uint8_t> header = {1, 2, 3};
  const std::vector<uint8_t> three = {7, 8, 9};
  std::vector<absl::Status> sent(3, absl::UnknownError("not completed"));
  sender.Send(10, header, {}, /*streamed=*/true, [&](absl::Status s) { sent[0] = s; });
  sender.Send(11, header, three, /*streamed=*/true, [&](absl::Status s) { sent[1] = s; });
  sender.Send(12, header, three, /*streamed=*/false, [&](absl::Status s) { sent[2] = s; });
  ASSERT_OK(sender.WriteSome());

  std::vector<std::pair<uint64_t, uint64_t>> streamed;  // sequence, size
  std::vector<uint8_t> eager;
  ASSERT_OK(receiver.ReadSome([&](const StreamConnection::Frame& frame) {
    EXPECT_EQ(std::vector<uint8_t>(frame.header.begin(), frame.header.end()), header);
    if (frame.streamed) {
      streamed.emplace_back(frame.sequence, frame.payload_size);
    } else {
      eager.assign(frame.eager.begin(), frame.eager.end());
    }
  }));
  ASSERT_EQ(streamed.size(), 2u);
  EXPECT_EQ(streamed[0].second, 0u);
  EXPECT_EQ(streamed[1].second, 3u);
  EXPECT_EQ(eager, three);  // parking let the eager message behind them through

  std::vector<uint8_t> empty;
  std::vector<uint8_t> landed(3);
  std::vector<absl::Status> received(2, absl::UnknownError("not completed"));
  ASSERT_TRUE(receiver.ReceivePayload(streamed[0].first, absl::MakeSpan(empty),
                                      [&](absl::Status s) { received[0] = s; }));
  ASSERT_TRUE(receiver.ReceivePayload(streamed[1].first, absl::MakeSpan(landed),
                                      [&](absl::Status s) { received[1] = s; }));
  ASSERT_OK(receiver.ReadSome([](const StreamConnection::Frame&) { ADD_FAILURE(); }));
  EXPECT_OK(received[0]);
  EXPECT_OK(received[1]);
  EXPECT_EQ(landed, three);

  ASSERT_OK(receiver.WriteSome());  // the ACKs
  ASSERT_OK(sender.ReadSome([](const StreamConnection::Frame&) { ADD_FAILURE(); }));
  EXPECT_OK(sent[0]);
  EXPECT_OK(sent[1]);
  EXPECT_OK(sent[2]);
}

}  // namespace
}  // namespace strata::store::transport
