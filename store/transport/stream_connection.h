// StreamConnection: one data-plane TCP connection that strata owns — framing, sending,
// receiving and acknowledgements (stream_frame.h) over a non-blocking socket.
//
// Private to store/transport. Used only by the Messenger's progress thread (not
// thread-safe); the Messenger polls the socket (fd(), wants_read(), wants_write()) and calls
// ReadSome / WriteSome when it is ready.
//
// Why it exists: UCX 1.13's TCP transport and its sockaddr connection manager abort the
// whole process on malformed bytes from any client that can reach their ports (e.g.
// `tcp_sockcm_ep.c:825 Assertion 'cep->comm_ctx.offset <= cep->comm_ctx.length'`, or
// `tcp_ep.c:1404 Assertion 'hdr->length <= rx_seg_size'`). Every byte from the network is
// therefore parsed here, by code that answers a malformed stream with an error for that
// connection alone.
//
// Sending: Send queues a message (the header is copied, the payload borrowed until `done`).
// A payload of at most kMaxEagerPayload bytes travels eagerly and `done` runs once the
// message is written to the socket; a larger one is streamed and `done` runs when the
// receiver acknowledges it: OK when it landed in the receiver's buffer, ABORTED when the
// receiver dropped it.
//
// Receiving: ReadSome hands each complete message to `on_frame`. An eager payload comes
// with it; a streamed one (Frame::streamed, named by Frame::sequence) is decided by the owner
// with ReceivePayload or DiscardPayload. Decided inside on_frame, the bytes go straight from
// the socket into `dest`. Left undecided, the payload is parked: read into a buffer of its
// own while later messages go on (so one kept payload does not stall the connection), as
// long as the parked bytes stay within `max_parked_bytes`; past that budget the connection
// stops reading until the decision (awaiting_decision()). The sender learns of the outcome
// only when the decision is carried out (its send stays outstanding meanwhile).
//
// Failure: a socket error, an end of stream or a protocol error is returned by ReadSome /
// WriteSome; the owner then calls Fail(why), which completes every pending callback with
// `why`. The destructor closes the socket and fails what is left with CANCELLED.
//
// Callbacks (`done`, `on_frame`) may call Send, ReceivePayload and DiscardPayload on this
// connection, and ReadSome / WriteSome, which then only note that more work is due (no
// recursion): the outer call does it before returning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "store/transport/stream_frame.h"

namespace strata::store::transport {

class StreamConnection {
 public:
  using Done = absl::AnyInvocable<void(absl::Status) &&>;
  struct Frame {
    uint16_t id = 0;
    absl::Span<const uint8_t> header;  // valid during on_frame
    uint64_t payload_size = 0;
    bool streamed = false;            // decide with ReceivePayload / DiscardPayload
    uint64_t sequence = 0;            // streamed: names the payload in those calls
    absl::Span<const uint8_t> eager;  // !streamed: the payload, valid during on_frame
  };

  // Takes ownership of `fd`, a connected stream socket (made non-blocking here).
  StreamConnection(int fd, FrameLimits limits, size_t max_parked_bytes);
  ~StreamConnection();
  StreamConnection(const StreamConnection&) = delete;
  StreamConnection& operator=(const StreamConnection&) = delete;

  int fd() const { return fd_; }
  const FrameLimits& limits() const { return limits_; }

  // Queues a message; nothing is written until WriteSome. `done` may be null. `streamed`:
  // the receiver decides where the payload lands and acknowledges it (always so above
  // kMaxEagerPayload). REQUIRES: header.size() <= limits().max_header_size.
  void Send(uint16_t id, absl::Span<const uint8_t> header, absl::Span<const uint8_t> payload,
            bool streamed, Done done);
  // Writes what the socket takes. Errors: UNAVAILABLE the connection broke.
  absl::Status WriteSome();
  // Reads what the socket has, handing complete messages to `on_frame`, until it would
  // block, a streamed payload awaits a decision, or an error. Errors: UNAVAILABLE end of
  // stream or a broken connection; INVALID_ARGUMENT a protocol error (a malformed frame or
  // ACK).
  absl::Status ReadSome(absl::FunctionRef<void(const Frame&)> on_frame);

  // The decision about streamed payload `sequence`, once (later calls for it are ignored).
  // ReceivePayload: `done(OK)` once `dest` holds it (dest.size() must equal its size); the
  // sender is told it landed. DiscardPayload: the bytes are thrown away; the sender's send
  // completes ABORTED. `done` never runs inside this call: it runs from ReadSome (or Fail).
  // Returns false when there is no such undecided payload.
  bool ReceivePayload(uint64_t sequence, absl::Span<uint8_t> dest, Done done);
  bool DiscardPayload(uint64_t sequence);
  // Reading stopped: a streamed payload waits for its decision and the parking budget is
  // spent.
  bool awaiting_decision() const { return rx_state_ == RxState::kDecision; }
  size_t parked_bytes() const { return parked_bytes_; }

  bool wants_read() const { return !failed_ && rx_state_ != RxState::kDecision; }
  bool wants_write() const { return !failed_ && !sendq_.empty(); }
  // Nothing queued, nothing waiting for an acknowledgement, nothing being received.
  bool idle() const;
  // Since when the oldest unfinished transfer (a queued or unacknowledged send, a payload
  // being received) has waited; InfiniteFuture() when there is none.
  absl::Time busy_since() const;
  // The peer closed its side while a payload awaited a decision (the decision may still
  // find its bytes in the socket).
  void NotePeerClosed() { peer_closed_ = true; }
  bool peer_closed() const { return peer_closed_; }

  // The peer ended the stream at a message boundary with nothing outstanding in either
  // direction: an ordinary disconnect, not a failure worth a warning.
  bool closed_cleanly() const { return eof_ && idle() && in_begin_ == in_end_ && parked_.empty(); }

  // Completes everything pending with `why`; later sends complete with it at once.
  void Fail(const absl::Status& why);
  bool failed() const { return failed_; }

 private:
  // kFrame: reading message headers. kDecision: the current streamed payload is undecided and
  // cannot be parked. kIntoDest / kDiscard / kPark: reading the current streamed payload into
  // the decided buffer / nowhere / its parking buffer.
  enum class RxState { kFrame, kDecision, kIntoDest, kDiscard, kPark };
  enum class Decision { kNone, kReceive, kDiscard };
  struct Parked {
    std::vector<uint8_t> bytes;
    size_t filled = 0;
    Decision decision = Decision::kNone;
    absl::Span<uint8_t> dest;
    Done done;
  };
  struct OutFrame {
    std::string head;  // frame header + message header
    absl::Span<const uint8_t> payload;
    size_t written = 0;
    bool acked = false;
    Done done;
    absl::Time queued;
  };
  struct Unacked {
    Done done;
    absl::Time since;
  };

  absl::Status ReadLoop(absl::FunctionRef<void(const Frame&)> on_frame);
  absl::Status WriteLoop(std::vector<Done>& completed);
  absl::Status HandleAck(absl::Span<const uint8_t> header);
  // recv into [data, data + size): bytes read, 0 when it would block, an error otherwise.
  absl::StatusOr<size_t> Receive(uint8_t* data, size_t size);
  // Reads the current streamed payload into rx_dest_ (kIntoDest, kPark) or nowhere.
  absl::Status ReadPayload(bool* finished);
  void Acknowledge(uint64_t sequence, uint8_t outcome);
  // Carries out the decision on a parked payload whose bytes are all here.
  void SettleParked(uint64_t sequence);
  void RunCompleted();

  int fd_;
  FrameLimits limits_;
  bool failed_ = false;
  absl::Status failure_;
  bool peer_closed_ = false;
  bool eof_ = false;  // recv returned 0

  // Sending.
  std::deque<OutFrame> sendq_;
  std::map<uint64_t, Unacked> unacked_;  // by sequence
  uint64_t next_send_sequence_ = 0;
  bool writing_ = false;
  bool write_again_ = false;

  // Receiving. in_[in_begin_, in_end_) holds bytes read but not consumed.
  std::vector<uint8_t> in_;
  size_t in_begin_ = 0;
  size_t in_end_ = 0;
  RxState rx_state_ = RxState::kFrame;
  uint64_t rx_current_ = 0;    // sequence of the streamed payload being read
  uint64_t rx_remaining_ = 0;  // of it
  absl::Span<uint8_t> rx_dest_;
  size_t rx_offset_ = 0;
  Done rx_done_;
  absl::Time rx_since_ = absl::InfiniteFuture();
  uint64_t rx_next_sequence_ = 0;  // of the next streamed payload
  bool reading_ = false;
  size_t max_parked_bytes_;
  size_t parked_bytes_ = 0;
  std::map<uint64_t, Parked> parked_;
  std::vector<std::pair<Done, absl::Status>> completed_;  // run by RunCompleted
};

}  // namespace strata::store::transport
