// HttpServer: the node's HTTP endpoint (cpp-httplib; httplib.h is included nowhere else).
//
// Serves, for GET (and HEAD):
//   /metrics   Prometheus text format 0.0.4: FormatMetrics(handlers.snapshot())
//   /v1/tiers  JSON for capacity planning: FormatTiersJson(handlers.snapshot())
//   /healthz   200 "ok" while the server runs
//   /readyz    200 "ready" when handlers.readiness() is OK; else 503 and its message
//              (e.g. "draining", "starting")
// Any other path is 404; any other method 405 (answered before a request body is read,
// and the connection is closed); bodies over 4 KiB are refused.
//
// Threads: one listening thread plus at most options.worker_threads workers, each serving
// one connection at a time (keep-alive connections idle out after options.idle_timeout);
// further accepted connections queue for a worker (cpp-httplib's queue is unbounded: put
// the endpoint on a loopback or private address). The handlers are called on the workers,
// concurrently. REQUIRES: handlers.snapshot and handlers.readiness are thread-safe and stay
// callable until Stop returns.
//
// Life cycle: Start binds and listens before it returns (port 0: the kernel picks one;
// address() and port() tell), so a caller may publish the address at once. Stop stops
// accepting, waits for handler calls in progress (they never wait on the network), then
// up to 5 s for the workers to finish their connections and joins every thread; a worker
// held longer by a client trickling its request is left to finish on its own (the server
// object is leaked, and calls no handler again), so Stop never hangs. Stop is idempotent
// and thread-safe (the destructor calls it). After Stop no handler runs.
//
// Errors of Start: INVALID_ARGUMENT an address that is not host:port / [v6]:port or a port
// outside 0..65535, worker_threads == 0, or no snapshot/readiness handler; UNAVAILABLE the
// address cannot be bound (in use, not an address of this host).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/store/http/node_snapshot.h"

namespace strata::store::http {

struct HttpServerOptions {
  // "host:port" or "[v6-address]:port"; port 0 picks an ephemeral port.
  std::string listen_address = "127.0.0.1:7402";
  // Connections served at once. REQUIRES: > 0.
  int worker_threads = 4;
  // A request must arrive within this, and a response be written within it.
  absl::Duration io_timeout = absl::Seconds(5);
  // A keep-alive connection with no request for this long is closed (whole seconds, at
  // least 1). Stop may wait this long for a worker holding an idle connection.
  absl::Duration idle_timeout = absl::Seconds(2);
};

struct HttpHandlers {
  // The node's figures now. Called once per /metrics or /v1/tiers request.
  std::function<NodeSnapshot()> snapshot;
  // OK when the node should receive traffic; otherwise the reason /readyz gives with 503.
  std::function<absl::Status()> readiness;
};

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                           HttpHandlers handlers);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound "host:port" ("[v6]:port" for IPv6) and port.
  const std::string& address() const { return address_; }
  int port() const { return port_; }

  void Stop() ABSL_LOCKS_EXCLUDED(stop_mu_);

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);

  std::string address_;
  int port_ = 0;
  absl::Mutex stop_mu_;
  std::unique_ptr<Impl> impl_ ABSL_GUARDED_BY(stop_mu_);
};

// Splits "host:port" / "[v6]:port" into host (without brackets) and port. INVALID_ARGUMENT
// when it has no port, an empty host, or a port outside 0..65535.
absl::Status SplitHostPort(const std::string& address, std::string* host, int* port);

}  // namespace strata::store::http
