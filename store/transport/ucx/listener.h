// Listener: owns one ucp_listener_h (ucp_listener_create ... ucp_listener_destroy).
//
// Private to store/transport. Listens on a socket address; port 0 picks an ephemeral port,
// which address() reports. Each incoming connection request is handed to `on_request`
// (on the worker's thread, inside ucp_worker_progress); the receiver must either create an
// endpoint from it (Endpoint::Accept) or call Reject(). Not thread-safe: used only on the
// worker's thread, and destroyed before the worker.
//
// Errors: Create returns UcsToStatus(...) of ucp_listener_create (UNAVAILABLE when the
// address is in use: UCS_ERR_BUSY) or ucp_listener_query.
#pragma once

#include <memory>

#include <ucp/api/ucp.h>

#include "absl/status/statusor.h"

#include "store/transport/socket_address.h"
#include "store/transport/ucx/ucp_worker.h"

namespace strata::store::transport::ucx {

class Listener {
 public:
  using RequestCallback = void (*)(ucp_conn_request_h request, void* arg);

  static absl::StatusOr<std::unique_ptr<Listener>> Create(UcpWorker& worker,
                                                          const SocketAddress& address,
                                                          RequestCallback on_request, void* arg);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // The bound address (the real port when 0 was asked for).
  const SocketAddress& address() const { return bound_; }
  // Refuses a connection request this listener delivered.
  void Reject(ucp_conn_request_h request);

 private:
  Listener(ucp_listener_h listener, SocketAddress bound)
      : listener_(listener), bound_(std::move(bound)) {}
  ucp_listener_h listener_;
  SocketAddress bound_;
};

}  // namespace strata::store::transport::ucx
