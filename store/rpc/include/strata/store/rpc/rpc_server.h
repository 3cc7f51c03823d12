// RpcServer: the node's gRPC server — strata.v1.Store and strata.v1.Admin over a
// core::NodeEngine, every call timed and counted by RpcMetrics.
//
// Built here so that gRPC appears only in store/proto, store/rpc and the client: the node
// (store/node) starts and stops an RpcServer and never sees a gRPC type
// (docs/architecture.md, "Dependency rules").
//
// Listening: one port, no TLS and no authentication yet (callers bind loopback or warn);
// SO_REUSEPORT off, so a second node cannot bind the same port; message limits from
// strata/proto/grpc_limits.h.
//
// Ownership: borrows the engine (REQUIRES: it outlives the RpcServer). Thread safety:
// port() and Metrics() from any thread; Shutdown once from one thread (later calls return
// at once). Errors: Start answers UNAVAILABLE when it cannot listen on the address
// (in use, or not an address of this host).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/store/auth/data_plane_credential.h"
#include "strata/store/auth/tenant_table.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/core/rpc_stats.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace strata::store::rpc {

class AdminService;
class RpcMetrics;

// What Admin.Leave answers (strata.v1 LeaveResponse): a leaving node's hand-over.
struct LeaveReport {
  uint64_t segments = 0, blobs = 0, bytes = 0, blobs_existing = 0, cold_segments = 0,
           over_budget_segments = 0, text_blobs = 0, failures = 0, held_bytes = 0;
};
class StoreService;

struct RpcServerOptions {
  // "host:port" to listen on (gRPC's syntax; port 0 picks an ephemeral port).
  std::string listen_address = "127.0.0.1:7400";
  // The data plane's "host:port", reported in BeginPut, Read and Health answers.
  std::string data_plane_address;
  // The same-host channel's socket (same_host_server.h), reported in Health and
  // OpenDataPlane answers; empty: none.
  std::string same_host_socket;
  // Reported by Health; empty: this build's version.
  std::string version;
  // Null: an open node. Else every call needs a tenant's bearer token (authorizer.h) and
  // Store.OpenDataPlane issues data-plane credentials from `credentials` (REQUIRED then).
  std::shared_ptr<const auth::TenantTable> tenants;
  std::shared_ptr<const auth::DataPlaneCredentials> credentials;
  // TLS (PEM text): with a certificate chain and its key, gRPC serves TLS only; with a
  // client CA too, every client must present a certificate that CA signed (mutual TLS).
  // Empty: plain text.
  std::string tls_cert_chain_pem;
  std::string tls_private_key_pem;
  std::string tls_client_ca_pem;
  // Admin.Leave: the node's leaving of its cluster, given the wait and the hand-over budget;
  // unset outside a cluster (Leave answers FAILED_PRECONDITION).
  std::function<absl::StatusOr<LeaveReport>(absl::Duration wait, uint64_t hand_over_bytes)> leave;
};

class RpcServer {
 public:
  static absl::StatusOr<std::unique_ptr<RpcServer>> Start(core::NodeEngine* engine,
                                                          const RpcServerOptions& options);
  // Shutdown(absl::ZeroDuration()).
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // The bound port (the one the kernel chose for port 0).
  int port() const { return port_; }
  // Calls by method and status code, with latencies, since Start.
  core::RpcMetricsSnapshot Metrics() const;

  // Waits up to `grace` for the handlers running now (and any that start meanwhile) to
  // return, then shuts gRPC down at once: calls still in flight are cancelled and idle
  // client connections closed (gRPC's own Shutdown(deadline) would also wait out the
  // deadline for idle connections). Returns when every handler has returned.
  void Shutdown(absl::Duration grace);

 private:
  RpcServer() = default;

  std::unique_ptr<StoreService> store_service_;
  std::unique_ptr<AdminService> admin_service_;
  // Before the gRPC server: its interceptors borrow it.
  std::unique_ptr<RpcMetrics> metrics_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace strata::store::rpc
