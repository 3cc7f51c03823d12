// Endpoint: owns one ucp_ep_h (ucp_ep_create ... ucp_ep_close_nbx).
//
// Private to store/transport. Endpoints are made by worker address only (the messenger's own
// TCP stream carries the addresses): UCX's sockaddr connection manager is never used, because
// UCX 1.13 aborts on malformed bytes arriving at its listener. In UCP_ERR_HANDLING_MODE_PEER,
// when the peer dies or the connection breaks, UCX calls `on_error` (on the worker's thread)
// and fails the endpoint's outstanding requests instead of hanging them; the owner must then
// close the endpoint (StartClose(/*force=*/true)).
//
// Not thread-safe: used only on the worker's thread, and closed before the worker is
// destroyed. Closing is asynchronous: StartClose returns the close request (or nullptr when
// it finished at once); the owner polls it with ucp_request_check_status while progressing
// the worker, then frees it with ucp_request_free. The destructor of an endpoint that was
// never closed force-closes it and progresses the worker until the close completes — a
// fallback for error paths, since progress may run other callbacks re-entrantly.
//
// Errors: ConnectToWorker returns UcsToStatus(...) of ucp_ep_create (INVALID_ARGUMENT for a
// bad address; UNAVAILABLE when no transport reaches the peer).
#pragma once

#include <memory>
#include <string_view>

#include <ucp/api/ucp.h>

#include "absl/status/statusor.h"

#include "store/transport/ucx/ucp_worker.h"

namespace strata::store::transport::ucx {

class Endpoint {
 public:
  using ErrorCallback = void (*)(void* arg, ucp_ep_h ep, ucs_status_t status);

  // Connects to a worker by its UCX address (UcpWorker::address() of the peer). When both
  // workers create an endpoint to each other this way, UCX pairs the two into one connection
  // (endpoint matching by creation order). With `peer_error_mode` false the endpoint uses
  // UCP_ERR_HANDLING_MODE_NONE: UCX 1.13 then may pick shared memory (sysv/posix) and CMA,
  // which it never does in PEER mode, but it reports no peer failure — the owner must learn
  // of it elsewhere and force-close this endpoint.
  static absl::StatusOr<std::unique_ptr<Endpoint>> ConnectToWorker(UcpWorker& worker,
                                                                   std::string_view address,
                                                                   bool peer_error_mode,
                                                                   ErrorCallback on_error,
                                                                   void* arg);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ucp_ep_h get() const { return ep_; }
  // Starts closing: `force` drops outstanding operations at once (they fail); otherwise
  // they are flushed first. Returns nullptr when already closed, else the close request.
  // REQUIRES: not closed yet. get() is null afterwards.
  void* StartClose(bool force);

 private:
  Endpoint(UcpWorker* worker, ucp_ep_h ep) : worker_(worker), ep_(ep) {}
  UcpWorker* worker_;
  ucp_ep_h ep_;
};

}  // namespace strata::store::transport::ucx
