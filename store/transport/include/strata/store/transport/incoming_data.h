// IncomingData: the payload descriptor of one received message.
//
// A Messenger hands every message handler (messenger.h) the message's header bytes and an
// IncomingData for its payload. The payload has arrived either eagerly (its bytes are
// already here, is_rendezvous() == false) or as a rendezvous announcement (the bytes are
// still at the sender, is_rendezvous() == true). The handler decides where they go:
//
//   Accept(dest, done)  eager: copies the bytes into `dest`; rendezvous: asks the transport
//                       to move them straight into `dest` (UCX ucp_am_recv_data_nbx: zero
//                       copy where the transport allows — CMA, RDMA — and one copy off the
//                       socket over TCP). `done(status)` reports when `dest` holds them.
//   Drop()              discards the payload. Dropped inside the handler, a rendezvous
//                       sender's request fails with ABORTED; dropped later, the transport
//                       cannot tell the sender and its request completes OK. Either way the
//                       protocol above (e.g. PUT_DONE) must say whether data was used.
//   (destruction)       an IncomingData destroyed without Accept/Drop drops its payload.
//
// The handler may also keep the IncomingData (move it anywhere, to any thread) and decide
// later; eager bytes are then copied once into the descriptor, rendezvous bytes stay at the
// sender until Accept.
//
// Ownership: a move-only handle. `dest` is borrowed: it must stay valid, and untouched by
// the caller, until `done` runs. If the Messenger shuts down first, an unresolved payload is
// dropped and a later Accept reports CANCELLED.
//
// Threading: Accept/Drop may be called on any thread; a call from the messenger's progress
// thread (inside a handler or a completion) runs at once, from other threads it is queued to
// the progress thread. `done` always runs on the progress thread, except when the messenger
// has shut down (then on the caller's thread); for eager data accepted on the progress
// thread it runs before Accept returns. `done` must not block.
//
// Status passed to `done`:
//   OK                 `dest` holds the payload's size() bytes
//   INVALID_ARGUMENT   dest.size() < size(); the payload is dropped
//   UNAVAILABLE        the sender died or the connection broke mid-transfer (bytes partial)
//   CANCELLED          the messenger shut down first
//   RESOURCE_EXHAUSTED UCX ran out of memory
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/types/span.h"

namespace strata::store::transport {

class MemoryRegion;

// Called once with the outcome of an operation (a send, a receive).
using CompletionCallback = absl::AnyInvocable<void(absl::Status) &&>;

class IncomingData {
 public:
  // An empty payload (size() == 0): Accept completes OK at once.
  IncomingData() = default;
  IncomingData(IncomingData&&) noexcept = default;
  IncomingData& operator=(IncomingData&& other) noexcept;
  IncomingData(const IncomingData&) = delete;
  IncomingData& operator=(const IncomingData&) = delete;
  ~IncomingData();

  // Payload bytes; 0 for a header-only message or after Accept/Drop.
  size_t size() const;
  bool empty() const { return size() == 0; }
  // True when the bytes are still at the sender (rendezvous protocol).
  bool is_rendezvous() const;
  // The payload when it came eagerly (empty span for rendezvous). Inside the handler the
  // span points into the transport's buffer and is valid until the handler returns; on a
  // kept descriptor it is valid until Accept/Drop/destruction.
  absl::Span<const uint8_t> eager_bytes() const;

  // Delivers the payload into dest[0, size()) and then calls `done` (see the table above).
  // `region`, when given, is a registration covering `dest` (saves a registration on RDMA
  // transports). REQUIRES: no earlier Accept/Drop on this object.
  void Accept(absl::Span<uint8_t> dest, CompletionCallback done,
              const MemoryRegion* region = nullptr);
  // Discards the payload. No-op on an empty descriptor.
  void Drop();

  struct Rep;  // private; defined in store/transport/incoming_data_rep.h

 private:
  friend class MessengerImpl;
  explicit IncomingData(std::shared_ptr<Rep> rep) : rep_(std::move(rep)) {}
  std::shared_ptr<Rep> rep_;
};

}  // namespace strata::store::transport
