// UcpWorker: owns one ucp_worker_h (ucp_worker_create ... ucp_worker_destroy).
//
// Private to store/transport. Thread mode UCS_THREAD_MODE_SINGLE: the worker, and every
// endpoint, listener and request on it, is used by exactly one thread — the Messenger's
// progress thread. Nothing in this class is thread-safe. (UCS_THREAD_MODE_MULTI would let
// any thread call UCX but puts a lock on every progress call and still needs someone to
// progress; one owner thread with a command queue is simpler to reason about.)
//
// The worker keeps its context alive (shared_ptr). Wakeup: event_fd() becomes readable when
// the worker has events, after Arm() returned true (see ucp_worker_arm).
//
// Errors: Create returns UcsToStatus(...) of ucp_worker_create / ucp_worker_get_efd /
// ucp_worker_query / ucp_worker_get_address.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <ucp/api/ucp.h>

#include "absl/status/statusor.h"

#include "store/transport/ucx/ucp_context.h"

namespace strata::store::transport::ucx {

class UcpWorker {
 public:
  static absl::StatusOr<std::unique_ptr<UcpWorker>> Create(std::shared_ptr<UcpContext> context);
  ~UcpWorker();
  UcpWorker(const UcpWorker&) = delete;
  UcpWorker& operator=(const UcpWorker&) = delete;

  ucp_worker_h get() const { return worker_; }
  const std::shared_ptr<UcpContext>& context() const { return context_; }
  // Largest AM header ucp_am_send_nbx accepts on this worker (about 8 KiB in UCX 1.13).
  size_t max_am_header() const { return max_am_header_; }
  // The worker's wakeup file descriptor (owned by UCX).
  int event_fd() const { return event_fd_; }
  // The worker's UCX address (opaque bytes a peer passes to Endpoint::ConnectToWorker).
  const std::string& address() const { return address_; }

  // Calls ucp_worker_progress once; returns the number of events it processed.
  unsigned Progress() { return ucp_worker_progress(worker_); }
  // Arms event_fd(). Returns true when armed (safe to sleep on event_fd()), false when
  // events are pending (progress again first). Other failures are invariant breaks (CHECK).
  bool Arm();

 private:
  UcpWorker(std::shared_ptr<UcpContext> context, ucp_worker_h worker)
      : context_(std::move(context)), worker_(worker) {}

  std::shared_ptr<UcpContext> context_;
  ucp_worker_h worker_;
  size_t max_am_header_ = 0;
  int event_fd_ = -1;
  std::string address_;
};

}  // namespace strata::store::transport::ucx
