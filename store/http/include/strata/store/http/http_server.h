// HttpServer: the node's HTTP endpoint (libmicrohttpd; microhttpd.h is included nowhere
// else).
//
// Serves, for GET (and HEAD):
//   /metrics   Prometheus text format 0.0.4: FormatMetrics(handlers.snapshot())
//   /v1/tiers  JSON for capacity planning: FormatTiersJson(handlers.snapshot())
//   /v1/cluster  the cluster's members as etcd holds them (handlers.cluster)
//   /healthz   200 "ok" while the server runs
//   /readyz    200 "ready" when handlers.readiness() is OK; else 503 and its message
//              (e.g. "draining", "starting")
// Any other path is 404; any other method 405 with "Allow: GET, HEAD", answered as soon as
// the request's headers are in: a request body is never read (the connection closes).
//
// Threads and connections: options.worker_threads threads, each an epoll loop over its share
// of the connections; no thread waits on one client, so clients that send their headers a
// byte at a time, never read their responses or sit idle cost a connection slot each, not
// a worker (issue 12: eight slow-header connections used to stop /healthz). Bounds:
// options.max_connections in all and options.max_connections_per_client from one address
// (further connections are accepted and closed at once); a connection on which nothing
// moves for options.timeout is closed; a request's headers may take at most
// kHttpConnectionMemory bytes (431 past it). The handlers are called on the workers,
// concurrently. REQUIRES: handlers.snapshot and handlers.readiness are thread-safe and stay
// callable until Stop returns.
//
// Life cycle: Start binds and listens before it returns (port 0: the kernel picks one;
// address() and port() tell), so a caller may publish the address at once. Stop closes the
// listening socket and every connection and joins the workers (waiting for handler calls in
// progress; they never wait on the network), so it returns promptly whatever the clients
// do. Stop is idempotent and thread-safe (the destructor calls it). After Stop no handler
// runs.
//
// Errors of Start: INVALID_ARGUMENT an address that is not host:port / [v6]:port or a port
// outside 0..65535, worker_threads, max_connections or max_connections_per_client not > 0,
// timeout under 1 s, or no snapshot/readiness handler; UNAVAILABLE the address cannot be
// bound (in use, not an address of this host) or the server cannot start.
#pragma once

#include <cstddef>
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
  // Threads serving connections (each an event loop). REQUIRES: > 0.
  int worker_threads = 2;
  // Open connections at once, in all and from one client address. REQUIRES: > 0.
  int max_connections = 256;
  int max_connections_per_client = 64;
  // A connection on which no byte moves for this long is closed (whole seconds, >= 1).
  absl::Duration timeout = absl::Seconds(5);
};

// Memory one connection may use for a request's headers (and its buffers).
inline constexpr size_t kHttpConnectionMemory = 32 << 10;

struct HttpHandlers {
  // The node's figures now. Called once per /metrics or /v1/tiers request.
  std::function<NodeSnapshot()> snapshot;
  // OK when the node should receive traffic; otherwise the reason /readyz gives with 503.
  std::function<absl::Status()> readiness;
  // /v1/cluster's JSON body; none (or NOT_FOUND): 404, the node is in no cluster; another
  // error: 503 with its message (etcd unreachable).
  std::function<absl::StatusOr<std::string>()> cluster;
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
