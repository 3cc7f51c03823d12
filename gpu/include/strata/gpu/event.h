// Event: the RAII owner of a marker in a Stream. Record(stream) captures all work
// enqueued on the stream so far; the event becomes ready when that work has
// completed. Another stream can wait for it (Device::WaitForEvent) and the host
// can poll it (Query) or block on it (Synchronize). Recording again moves the
// marker; waiters and queries see the latest Record. An event never recorded is
// ready (as in CUDA).
//
// Made by Device::CreateEvent and usable only with streams of the same Device.
//
// Errors:
//   Record:      INVALID_ARGUMENT if the stream is empty or belongs to another
//                Device; FAILED_PRECONDITION if this event is empty; device
//                failures as Device documents (INTERNAL, UNAVAILABLE).
//   Synchronize: FAILED_PRECONDITION if empty; device failures (INTERNAL) — an
//                asynchronous error of the captured work surfaces here.
//   Query:       true when ready, false while captured work is still running;
//                FAILED_PRECONDITION if empty; device failures (INTERNAL).
//
// Ownership: move-only; destruction releases the event through its Device (a
// pending record completes normally). A moved-from or default-constructed Event
// is empty.
//
// REQUIRES: the Device that made an event outlives it.
//
// Thread safety: Record, Synchronize and Query may be called concurrently on one
// Event (they go through the thread-safe Device); a Query racing a Record may
// observe either marker. Moving or destroying an Event needs exclusive access.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::gpu {

class Device;
class Stream;

class Event {
 public:
  Event() = default;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  bool empty() const { return handle_ == nullptr; }
  // The Device that made this event; nullptr when empty.
  Device* device() const { return owner_; }

  // Captures all work enqueued on `stream` so far. Returns without waiting.
  absl::Status Record(Stream& stream);
  // Blocks the calling thread until the captured work has completed.
  absl::Status Synchronize();
  // Returns whether the captured work has completed, without blocking.
  absl::StatusOr<bool> Query();

  // Releases the event now; it becomes empty. No-op when already empty.
  void Reset();

 private:
  friend class Device;
  Event(Device* owner, void* handle) : owner_(owner), handle_(handle) {}

  Device* owner_ = nullptr;
  void* handle_ = nullptr;  // opaque to everyone but the owning Device
};

}  // namespace strata::gpu
