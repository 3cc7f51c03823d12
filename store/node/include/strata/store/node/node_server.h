// NodeServer: one running strata node — wiring only. Owns, in start order:
//
//   1. the data-dir lock (data_dir_lock.h): one node per data directory;
//   2. the metadata store (store/meta's RocksMetaStore at config.MetaDir(); none when
//      config.meta is false);
//   3. the SSD tier (tiering/io's SsdTier: io_uring, O_DIRECT, at config.SsdPath(); none
//      when config.ssd_bytes is 0);
//   4. the NodeEngine (store/core) with its DRAM tier, given 2 and 3: Create rebuilds the
//      index from the metadata (a restart: SSD blobs are served again, the blobs that were
//      only in DRAM come back as TEXT), and the node logs what came back;
//   5. the data plane (store/dataplane: UCX on config.dataplane_listen, the engine's
//      arena registered; its bound address is what clients are told);
//   6. the gRPC server with the Store and Admin services (store/rpc), every call timed and
//      counted by store/rpc's RpcMetrics interceptor;
//   7. the HTTP endpoint (store/http: /metrics, /v1/tiers, /healthz, /readyz) on
//      config.http_listen; none when it is empty;
//   8. with config.etcd_endpoints, the cluster registration (store/cluster): the node's
//      record (its id from data_dir/node_id, the bound addresses — with advertise_host in
//      place of the listen host where set —, capacities, state serving) under an etcd
//      lease. Start does not wait for etcd: an unreachable etcd is retried in the
//      background while the node serves.
//
// and stops them in reverse order: the registration first (its lease revoked: the node
// leaves every view at once; Drain has already marked it draining), then HTTP, then gRPC (no new
// calls reach the engine), then the data plane (no HeldSpan survives it), then the engine, the SSD
// tier, the metadata store (closed: its memtables flushed), then the lock. /readyz answers 503
// while the node drains or shuts down.
//
// A node with meta = false refuses to start when its metadata directory holds a store: it
// would reuse the SSD space that store's records name, and a later node with metadata
// would find those records pointing at other bytes (checksums would catch it, but every
// such blob would be lost). Remove the directory, or keep meta on.
//
// Life cycle: Start -> serving -> Drain (puts refused, wait for pending puts, held
// leases and data-plane transfers) -> Shutdown (gRPC stops; in-flight calls get a grace
// period, then are cancelled; then the data plane stops) -> destruction. The destructor
// shuts down what is still running.
//
// Errors: Start returns INVALID_ARGUMENT for a bad config (NodeConfig::Validate, an
// unparsable listen address); FAILED_PRECONDITION when the data dir is in use by another
// node, or meta = false over an existing metadata store; UNAVAILABLE when gRPC cannot
// listen on grpc_listen or the data plane on dataplane_listen (address in use, or not
// local); the metadata store's errors, prefixed "metadata store: " (RocksMetaStore::Open:
// FAILED_PRECONDITION in use or not a strata store, DATA_LOSS corrupt, UNAVAILABLE I/O);
// UNAVAILABLE when the HTTP endpoint cannot listen on http_listen; the SSD tier's, prefixed
// "SSD tier: " (SsdTier::Open: FAILED_PRECONDITION no O_DIRECT on
// that filesystem, RESOURCE_EXHAUSTED no space to preallocate ssd_bytes, INVALID_ARGUMENT
// a block device smaller than ssd_bytes, ...); the engine's and the DRAM arena's errors
// (e.g. RESOURCE_EXHAUSTED when the memory cannot be mapped; the metadata's load errors). Drain
// returns DEADLINE_EXCEEDED when puts, leases or data-plane transfers are still in flight after
// `timeout` (the node stays draining).
// Thread safety: Drain, Shutdown and the accessors may be called from any thread; Drain
// and Shutdown are idempotent. REQUIRES: the NodeServer is not destroyed while another
// thread calls into it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/store/core/node_engine.h"
#include "strata/store/node/data_dir_lock.h"
#include "strata/store/node/node_config.h"

namespace strata::store::http {
class HttpServer;
struct NodeSnapshot;
}  // namespace strata::store::http

namespace strata::store::dataplane {
class DataPlaneServer;
class SameHostServer;
}  // namespace strata::store::dataplane

namespace strata::store::meta {
class RocksMetaStore;
}  // namespace strata::store::meta

namespace strata::tiering::io {
class SsdTier;
}  // namespace strata::tiering::io

namespace strata::store::rpc {
class RpcServer;
struct LeaveReport;
}  // namespace strata::store::rpc

namespace strata::store::peer {
struct HandOverReport;
class HotReplicator;
class TextRepairer;
}  // namespace strata::store::peer

namespace strata::store::cluster {
class EtcdClient;
class MembershipView;
class Registration;
}  // namespace strata::store::cluster

namespace strata::store::node {

class NodeServer {
 public:
  // Starts every part, or none (whatever started is stopped again on error).
  // config.dram_bytes 0 is sized from free memory (dram_sizing.h).
  static absl::StatusOr<std::unique_ptr<NodeServer>> Start(const NodeConfig& config);

  ~NodeServer();
  NodeServer(const NodeServer&) = delete;
  NodeServer& operator=(const NodeServer&) = delete;

  // "host:port" the gRPC server is bound to (the port the kernel chose for port 0).
  const std::string& grpc_address() const { return grpc_address_; }
  int grpc_port() const { return grpc_port_; }
  // "host:port" the data plane is bound to (the port the kernel chose for port 0), as
  // reported to clients.
  const std::string& data_plane_address() const { return data_plane_address_; }
  // The same-host channel's socket; empty when the node offers none.
  std::string same_host_socket() const;
  // "host:port" the HTTP endpoint is bound to (the chosen port for port 0); "" when
  // http_listen is empty.
  const std::string& http_address() const { return http_address_; }
  // The data directory (absolute) and the DRAM tier size in effect.
  const std::string& data_dir() const { return lock_.dir(); }
  uint64_t dram_bytes() const { return dram_bytes_; }
  // The SSD tier's size (0: none) and what the engine restored from the metadata store
  // at start (all zero without one, or on a first start).
  uint64_t ssd_bytes() const;
  core::RestoreReport restored() const { return engine_->restored(); }

  // The node's cluster id (data_dir/node_id) and whether etcd holds its record now; ""
  // and false without etcd_endpoints.
  const std::string& node_id() const { return node_id_; }
  bool registered() const;

  // The engine, e.g. for the data plane, or for tests acting as one.
  core::NodeEngine& engine() { return *engine_; }

  // What the HTTP endpoint reports: the engine's tiers, the data plane's and gRPC's stats.
  // Thread-safe.
  http::NodeSnapshot Snapshot() const;
  // OK once Start returned and until Drain or Shutdown; else UNAVAILABLE saying why
  // ("starting", "draining", "shutting down"). Thread-safe. What /readyz answers.
  absl::Status Readiness() const;
  // /v1/cluster: the cluster's members as etcd holds them now (one read), as JSON
  // {cluster, self, registered, etcd_revision, undecodable, nodes: [records]}. NOT_FOUND
  // outside a cluster; UNAVAILABLE etcd did not answer (its call timeout, 2 s).
  absl::StatusOr<std::string> ClusterJson() const;

  // Stops accepting puts and waits up to `timeout` for pending puts, held leases and
  // transfers (core::NodeEngine::Drain), then for the data plane's last replies
  // (DataPlaneServer::WaitIdle). Reads, Health and Admin keep being served.
  absl::Status Drain(absl::Duration timeout);

  // Leaves the cluster (Admin.Leave): Drain(wait) — registered as draining first —, then
  // hands up to `hand_over_bytes` of hot segments to their new owners (hand_over.h, with
  // `token` for them), then revokes the registration. The node keeps serving reads.
  // FAILED_PRECONDITION outside a cluster; Drain's DEADLINE_EXCEEDED (nothing handed over);
  // UNAVAILABLE etcd did not answer the members' read.
  absl::StatusOr<peer::HandOverReport> Leave(absl::Duration wait, uint64_t hand_over_bytes,
                                             const std::string& token);

  // Stops the gRPC server: waits up to `grace` for the handlers running now (and any that
  // start meanwhile) to return, then shuts gRPC down at once, cancelling calls still in
  // flight and closing idle client connections; then stops the data plane (transfers
  // still in flight end CANCELLED, their HeldSpans released). Returns when every handler
  // has returned. Idempotent.
  void Shutdown(absl::Duration grace) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Step 8 of Start.
  absl::Status StartRegistration(const NodeConfig& config);
  // What Admin.Leave calls: Leave, answered into the response; null outside a cluster.
  static std::function<absl::StatusOr<rpc::LeaveReport>(absl::Duration, uint64_t)> LeaveHook(
      NodeServer* server, const NodeConfig& config);
  NodeServer(DataDirLock lock, std::shared_ptr<meta::RocksMetaStore> meta,
             std::shared_ptr<tiering::io::SsdTier> ssd, std::unique_ptr<core::NodeEngine> engine,
             uint64_t dram_bytes);

  DataDirLock lock_;
  // Shared with the engine; declared before it so they are closed after it stopped.
  std::shared_ptr<meta::RocksMetaStore> meta_;
  std::shared_ptr<tiering::io::SsdTier> ssd_;
  // Destroyed after everything below, which borrows it.
  std::unique_ptr<core::NodeEngine> engine_;
  const uint64_t dram_bytes_;
  // Between the engine and the services: destroyed before the engine, after gRPC.
  std::unique_ptr<dataplane::DataPlaneServer> data_plane_;
  std::string data_plane_address_;
  std::unique_ptr<dataplane::SameHostServer> same_host_;  // null: not offered
  std::unique_ptr<rpc::RpcServer> rpc_server_;
  std::string grpc_address_;
  int grpc_port_ = 0;
  // Declared after everything it reads: destroyed (stopped) first.
  std::unique_ptr<http::HttpServer> http_server_;
  std::string http_address_;
  // Declared last: stopped (deregistered) before anything else.
  std::string node_id_;
  std::string cluster_name_;  // config.cluster, with etcd_
  std::unique_ptr<cluster::EtcdClient> etcd_;
  std::unique_ptr<cluster::Registration> registration_;
  // With hot replicas or text repair: the node's own view of the members, and the parts
  // using it (declared after it: stopped first).
  std::unique_ptr<cluster::MembershipView> membership_;
  std::unique_ptr<peer::HotReplicator> hot_replicator_;
  std::unique_ptr<peer::TextRepairer> text_repairer_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};

  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace strata::store::node
