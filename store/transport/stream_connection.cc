#include "store/transport/stream_connection.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "strata/base/errno_status.h"

namespace strata::store::transport {
namespace {

// Read buffer: a frame header, the largest message header and an eager payload fit.
constexpr size_t kInBufferBytes = 64 * 1024;
static_assert(kFrameHeaderBytes + 65535 + kMaxEagerPayload <= 2 * kInBufferBytes);
// Messages gathered into one sendmsg.
constexpr int kMaxIov = 64;

}  // namespace

StreamConnection::StreamConnection(int fd, FrameLimits limits, size_t max_parked_bytes)
    : fd_(fd), limits_(limits), max_parked_bytes_(max_parked_bytes) {
  const int flags = fcntl(fd_, F_GETFL, 0);
  if (flags >= 0) fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const size_t need = kFrameHeaderBytes + limits_.max_header_size + kMaxEagerPayload;
  in_.resize(std::max(kInBufferBytes, need));
}

StreamConnection::~StreamConnection() {
  if (!failed_) Fail(absl::CancelledError("connection closed"));
  close(fd_);
}

bool StreamConnection::idle() const {
  return sendq_.empty() && unacked_.empty() &&
         (rx_state_ == RxState::kFrame || rx_state_ == RxState::kDecision);
}

absl::Time StreamConnection::busy_since() const {
  absl::Time since = absl::InfiniteFuture();
  if (!sendq_.empty()) since = std::min(since, sendq_.front().queued);
  for (const auto& [sequence, unacked] : unacked_) since = std::min(since, unacked.since);
  if (rx_state_ != RxState::kFrame && rx_state_ != RxState::kDecision) {
    since = std::min(since, rx_since_);
  }
  return since;
}

// ---------------------------------------------------------------------------------------
// Sending.

void StreamConnection::Send(uint16_t id, absl::Span<const uint8_t> header,
                            absl::Span<const uint8_t> payload, bool streamed, Done done) {
  if (failed_) {
    if (done) std::move(done)(failure_);
    return;
  }
  CHECK_LE(header.size(), limits_.max_header_size);
  FrameHeader frame;
  frame.id = id;
  frame.acked = streamed || payload.size() > kMaxEagerPayload;
  frame.header_size = static_cast<uint16_t>(header.size());
  frame.payload_size = payload.size();
  uint8_t bytes[kFrameHeaderBytes];
  EncodeFrameHeader(frame, bytes);
  OutFrame out;
  out.head.reserve(kFrameHeaderBytes + header.size());
  out.head.append(reinterpret_cast<const char*>(bytes), kFrameHeaderBytes);
  out.head.append(reinterpret_cast<const char*>(header.data()), header.size());
  out.payload = payload;
  out.acked = frame.acked;
  out.done = std::move(done);
  out.queued = absl::Now();
  sendq_.push_back(std::move(out));
}

absl::Status StreamConnection::WriteSome() {
  if (writing_) {
    write_again_ = true;
    return absl::OkStatus();
  }
  writing_ = true;
  absl::Status status;
  do {
    write_again_ = false;
    std::vector<Done> completed;
    status = WriteLoop(completed);
    for (Done& done : completed) {
      if (done) std::move(done)(absl::OkStatus());
    }
  } while (status.ok() && write_again_ && !failed_);
  writing_ = false;
  return status;
}

absl::Status StreamConnection::WriteLoop(std::vector<Done>& completed) {
  while (!failed_ && !sendq_.empty()) {
    iovec iov[kMaxIov];
    int count = 0;
    for (auto it = sendq_.begin(); it != sendq_.end() && count + 2 <= kMaxIov; ++it) {
      size_t skip = it->written;
      if (skip < it->head.size()) {
        iov[count++] = {it->head.data() + skip, it->head.size() - skip};
        skip = 0;
      } else {
        skip -= it->head.size();
      }
      if (skip < it->payload.size()) {
        iov[count++] = {const_cast<uint8_t*>(it->payload.data()) + skip, it->payload.size() - skip};
      }
    }
    msghdr message;
    std::memset(&message, 0, sizeof(message));
    message.msg_iov = iov;
    message.msg_iovlen = count;
    const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
      return base::ErrnoToStatus(errno, "send on the data-plane connection");
    }
    size_t left = static_cast<size_t>(sent);
    while (!sendq_.empty()) {
      OutFrame& front = sendq_.front();
      const size_t total = front.head.size() + front.payload.size();
      const size_t take = std::min(left, total - front.written);
      front.written += take;
      left -= take;
      if (front.written < total) break;
      if (front.acked) {
        unacked_.emplace(next_send_sequence_++, Unacked{std::move(front.done), absl::Now()});
      } else {
        completed.push_back(std::move(front.done));
      }
      sendq_.pop_front();
    }
  }
  return absl::OkStatus();
}

absl::Status StreamConnection::HandleAck(absl::Span<const uint8_t> header) {
  absl::StatusOr<AckHeader> ack = DecodeAckHeader(header);
  if (!ack.ok()) return ack.status();
  auto it = unacked_.find(ack->sequence);
  if (it == unacked_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ACK of frame ", ack->sequence, ", which awaits none"));
  }
  Done done = std::move(it->second.done);
  unacked_.erase(it);
  if (done) {
    std::move(done)(ack->outcome == kAckReceived
                        ? absl::OkStatus()
                        : absl::AbortedError("the receiver dropped the payload"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Receiving.

absl::StatusOr<size_t> StreamConnection::Receive(uint8_t* data, size_t size) {
  while (true) {
    const ssize_t got = recv(fd_, data, size, MSG_DONTWAIT);
    if (got > 0) return static_cast<size_t>(got);
    if (got == 0) {
      eof_ = true;
      return absl::UnavailableError("the peer closed the data-plane connection");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return base::ErrnoToStatus(errno, "recv on the data-plane connection");
  }
}

absl::Status StreamConnection::ReadSome(absl::FunctionRef<void(const Frame&)> on_frame) {
  if (reading_ || failed_) return absl::OkStatus();
  reading_ = true;
  absl::Status status = ReadLoop(on_frame);
  reading_ = false;
  RunCompleted();
  return status;
}

void StreamConnection::RunCompleted() {
  while (!completed_.empty()) {
    std::vector<std::pair<Done, absl::Status>> completed;
    completed.swap(completed_);
    for (auto& [done, status] : completed) {
      if (done) std::move(done)(std::move(status));
    }
  }
}

absl::Status StreamConnection::ReadLoop(absl::FunctionRef<void(const Frame&)> on_frame) {
  while (!failed_) {
    if (rx_state_ == RxState::kDecision) return absl::OkStatus();
    if (rx_state_ != RxState::kFrame) {
      bool finished = false;
      if (absl::Status status = ReadPayload(&finished); !status.ok()) return status;
      if (!finished) return absl::OkStatus();  // the socket is empty for now
      continue;
    }
    const size_t available = in_end_ - in_begin_;
    if (available >= kFrameHeaderBytes) {
      const absl::Span<const uint8_t> bytes(in_.data() + in_begin_, available);
      absl::StatusOr<FrameHeader> frame = DecodeFrameHeader(bytes, limits_);
      if (!frame.ok()) return frame.status();
      const size_t need = kFrameHeaderBytes + frame->header_size +
                          (frame->acked ? 0 : static_cast<size_t>(frame->payload_size));
      if (available >= need) {
        Frame out;
        out.id = frame->id;
        out.header = bytes.subspan(kFrameHeaderBytes, frame->header_size);
        out.payload_size = frame->payload_size;
        out.streamed = frame->acked;
        if (!frame->acked) {
          out.eager = bytes.subspan(kFrameHeaderBytes + frame->header_size, frame->payload_size);
        }
        // The header and eager bytes stay in in_ until the next read (on_frame cannot read:
        // ReadSome is guarded against re-entry).
        in_begin_ += need;
        if (frame->id == kAckId) {
          if (frame->acked || frame->payload_size != 0) {
            return absl::InvalidArgumentError("an ACK frame with a payload");
          }
          if (absl::Status acked = HandleAck(out.header); !acked.ok()) return acked;
          continue;
        }
        if (!frame->acked) {
          on_frame(out);
          continue;
        }
        out.sequence = rx_next_sequence_++;
        rx_current_ = out.sequence;
        rx_remaining_ = frame->payload_size;
        rx_offset_ = 0;
        rx_state_ = RxState::kDecision;
        on_frame(out);
        if (rx_state_ == RxState::kDecision &&
            parked_bytes_ + frame->payload_size <= max_parked_bytes_) {
          // Undecided: park it and go on with the next messages.
          Parked& parked = parked_[rx_current_];
          parked.bytes.resize(frame->payload_size);
          parked_bytes_ += frame->payload_size;
          rx_dest_ = absl::MakeSpan(parked.bytes);
          rx_state_ = RxState::kPark;
          rx_since_ = absl::Now();
        }
        continue;
      }
      if (in_begin_ + need > in_.size()) {
        std::memmove(in_.data(), in_.data() + in_begin_, available);
        in_begin_ = 0;
        in_end_ = available;
      }
    } else if (in_begin_ == in_end_) {
      in_begin_ = in_end_ = 0;
    } else if (in_begin_ + kFrameHeaderBytes > in_.size()) {
      std::memmove(in_.data(), in_.data() + in_begin_, available);
      in_begin_ = 0;
      in_end_ = available;
    }
    absl::StatusOr<size_t> got = Receive(in_.data() + in_end_, in_.size() - in_end_);
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::OkStatus();
    in_end_ += *got;
  }
  return absl::OkStatus();
}

absl::Status StreamConnection::ReadPayload(bool* finished) {
  const bool keep = rx_state_ != RxState::kDiscard;
  if (rx_remaining_ > 0 && in_begin_ < in_end_) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(rx_remaining_, in_end_ - in_begin_));
    if (keep) std::memcpy(rx_dest_.data() + rx_offset_, in_.data() + in_begin_, take);
    in_begin_ += take;
    rx_offset_ += take;
    rx_remaining_ -= take;
  }
  while (rx_remaining_ > 0) {
    if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
    uint8_t* target = keep ? rx_dest_.data() + rx_offset_ : in_.data();
    const size_t room =
        keep ? static_cast<size_t>(rx_remaining_) : std::min<uint64_t>(rx_remaining_, in_.size());
    absl::StatusOr<size_t> got = Receive(target, room);
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::OkStatus();
    rx_offset_ += *got;
    rx_remaining_ -= *got;
  }
  *finished = true;
  const uint64_t sequence = rx_current_;
  const RxState state = rx_state_;
  rx_state_ = RxState::kFrame;
  rx_since_ = absl::InfiniteFuture();
  rx_dest_ = {};
  rx_offset_ = 0;
  if (state == RxState::kPark) {
    auto it = parked_.find(sequence);
    it->second.filled = it->second.bytes.size();
    if (it->second.decision != Decision::kNone) SettleParked(sequence);
    return absl::OkStatus();
  }
  Acknowledge(sequence, state == RxState::kIntoDest ? kAckReceived : kAckDropped);
  if (state == RxState::kIntoDest) {
    completed_.emplace_back(std::move(rx_done_), absl::OkStatus());
    rx_done_ = nullptr;
  }
  return absl::OkStatus();
}

void StreamConnection::Acknowledge(uint64_t sequence, uint8_t outcome) {
  uint8_t header[kAckHeaderBytes];
  EncodeAckHeader({sequence, outcome}, header);
  Send(kAckId, header, {}, /*streamed=*/false, nullptr);
}

void StreamConnection::SettleParked(uint64_t sequence) {
  auto it = parked_.find(sequence);
  Parked& parked = it->second;
  const bool receive = parked.decision == Decision::kReceive;
  // An empty payload has no bytes to copy (and memcpy's pointers may then be null).
  if (receive && !parked.bytes.empty()) {
    std::memcpy(parked.dest.data(), parked.bytes.data(), parked.bytes.size());
  }
  Acknowledge(sequence, receive ? kAckReceived : kAckDropped);
  if (receive) completed_.emplace_back(std::move(parked.done), absl::OkStatus());
  parked_bytes_ -= parked.bytes.size();
  parked_.erase(it);
}

bool StreamConnection::ReceivePayload(uint64_t sequence, absl::Span<uint8_t> dest, Done done) {
  if (failed_) return false;
  if (rx_state_ == RxState::kDecision && sequence == rx_current_) {
    CHECK_EQ(dest.size(), rx_remaining_);
    rx_state_ = RxState::kIntoDest;
    rx_dest_ = dest;
    rx_offset_ = 0;
    rx_done_ = std::move(done);
    rx_since_ = absl::Now();
    return true;
  }
  auto it = parked_.find(sequence);
  if (it == parked_.end() || it->second.decision != Decision::kNone) return false;
  CHECK_EQ(dest.size(), it->second.bytes.size());
  it->second.decision = Decision::kReceive;
  it->second.dest = dest;
  it->second.done = std::move(done);
  if (it->second.filled == it->second.bytes.size()) SettleParked(sequence);
  return true;
}

bool StreamConnection::DiscardPayload(uint64_t sequence) {
  if (failed_) return false;
  if (rx_state_ == RxState::kDecision && sequence == rx_current_) {
    rx_state_ = RxState::kDiscard;
    rx_since_ = absl::Now();
    return true;
  }
  auto it = parked_.find(sequence);
  if (it == parked_.end() || it->second.decision != Decision::kNone) return false;
  it->second.decision = Decision::kDiscard;
  if (it->second.filled == it->second.bytes.size()) SettleParked(sequence);
  return true;
}

void StreamConnection::Fail(const absl::Status& why) {
  if (failed_) return;
  failed_ = true;
  failure_ = why;
  // Payloads that landed before the failure still report OK.
  std::vector<std::pair<Done, absl::Status>> landed;
  landed.swap(completed_);
  for (auto& [done, status] : landed) {
    if (done) std::move(done)(std::move(status));
  }
  std::vector<Done> callbacks;
  if (rx_done_) callbacks.push_back(std::move(rx_done_));
  rx_done_ = nullptr;
  for (auto& [sequence, parked] : parked_) callbacks.push_back(std::move(parked.done));
  parked_.clear();
  parked_bytes_ = 0;
  for (OutFrame& frame : sendq_) callbacks.push_back(std::move(frame.done));
  sendq_.clear();
  for (auto& [sequence, unacked] : unacked_) callbacks.push_back(std::move(unacked.done));
  unacked_.clear();
  for (Done& done : callbacks) {
    if (done) std::move(done)(why);
  }
}

}  // namespace strata::store::transport
