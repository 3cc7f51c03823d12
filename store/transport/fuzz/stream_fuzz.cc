// libFuzzer: arbitrary bytes from a peer, through a real StreamConnection (a socketpair):
// the frame parser, ACK handling, eager and streamed payloads — received, discarded, parked
// within a small budget, or left undecided — as the node's progress loop would drive it. The
// connection may fail the stream with INVALID_ARGUMENT or UNAVAILABLE; it must never crash,
// overrun a buffer or hand a frame whose sizes disagree with the bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include "absl/status/status.h"

#include "store/transport/stream_connection.h"

namespace transport = strata::store::transport;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // stays within a socket buffer: one write, no blocking
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) std::abort();
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fds[1], data + written, size - written);
    if (n <= 0) std::abort();
    written += static_cast<size_t>(n);
  }
  shutdown(fds[1], SHUT_WR);
  {
    transport::StreamConnection stream(
        fds[0], transport::FrameLimits{.max_header_size = 256, .max_payload_size = 1 << 20},
        /*max_parked_bytes=*/4096);
    std::map<uint64_t, std::vector<uint8_t>> buffers;  // streamed payloads being received
    uint64_t decisions = 0;
    for (int round = 0; round < 64 && !stream.failed(); ++round) {
      std::vector<std::pair<uint64_t, uint64_t>> undecided;  // sequence, size
      const absl::Status status = stream.ReadSome([&](const transport::StreamConnection::Frame& f) {
        if (!f.streamed && f.eager.size() != f.payload_size) std::abort();
        if (f.streamed) undecided.emplace_back(f.sequence, f.payload_size);
      });
      // Decide in an order the input chooses: receive, discard, or leave it for later.
      for (const auto& [sequence, payload_size] : undecided) {
        switch ((decisions++ + sequence) % 3) {
          case 0: {
            std::vector<uint8_t>& buffer = buffers[sequence];
            buffer.resize(payload_size);
            stream.ReceivePayload(sequence, absl::MakeSpan(buffer), [](absl::Status) {});
            break;
          }
          case 1:
            stream.DiscardPayload(sequence);
            break;
          default:
            break;
        }
      }
      if (!status.ok()) {
        if (status.code() != absl::StatusCode::kInvalidArgument &&
            status.code() != absl::StatusCode::kUnavailable) {
          std::abort();
        }
        stream.Fail(status);
        break;
      }
      if (stream.awaiting_decision() && undecided.empty()) break;  // nothing more will come
    }
  }  // the destructor closes fds[0] and completes what is left
  close(fds[1]);
  return 0;
}
