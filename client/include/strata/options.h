// ClientOptions (one per Client) and CallOptions (one per call) of libstrata (client.h).
//
// ClientOptions::FromEnvironment() starts from the defaults below and reads:
//
//   variable          field             example
//   ----------------  ----------------  ------------------
//   STRATA_NODE       node              10.0.0.7:7400
//   STRATA_UCX_TLS    ucx_transports    tcp   (else UCX reads UCX_TLS itself)
//   STRATA_TOKEN      token             the tenant's bearer token
//   STRATA_TLS_CA     tls_ca_file       /etc/strata/ca.pem   (and tls = true)
//   STRATA_SAME_HOST  same_host         0   (off; anything else leaves it on)
//
// Deadlines: every call has one. CallOptions::deadline, when set, is used as given; else the
// call's deadline is now + ClientOptions::default_timeout. Retries (of UNAVAILABLE only, on
// calls that are safe to repeat; see client.h) happen within that deadline.
//
// Plain values; Validate() and FromEnvironment() are thread-safe (FromEnvironment reads the
// environment, which the caller must not modify concurrently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/gpu/device.h"

namespace strata {

struct RetryOptions {
  // Attempts after the first, for UNAVAILABLE answers of retryable calls.
  int max_retries = 3;
  // Sleep before retry k (k = 1, 2, ...): min(max_backoff, initial_backoff *
  // multiplier^(k-1)), scaled by a random factor in [1 - jitter, 1], and never past the
  // call's deadline.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(1);
  double multiplier = 2.0;
  double jitter = 0.2;
};

struct ClientOptions {
  // The node's gRPC address, "host:port" (IPv6 as "[::1]:7400").
  std::string node = "127.0.0.1:7400";
  // A cluster instead of one node: its etcd, "etcd://HOST:PORT[,HOST:PORT...][/NAME]"
  // (strata/cluster.h), or its nodes' gRPC addresses (a static cluster). Set: `node` is not
  // used; Match, Read, ReadLayers, Write, the batches and the async forms go to the nodes
  // that own each segment (strata/cluster_client.h; client.h says which calls are a node's
  // own). Programs read $STRATA_CLUSTER themselves (FromEnvironment does not).
  std::string cluster;
  std::vector<std::string> cluster_nodes;
  // With a cluster: pages per segment (every reader and writer of a cluster must use the same
  // value), nodes holding each segment's token text, and how long a lookup waits for one
  // node (ClusterClientOptions).
  uint32_t segment_pages = 256;
  uint32_t text_replicas = 2;
  absl::Duration node_timeout = absl::Milliseconds(300);
  // The tenant's bearer token, sent with every call ("authorization: Bearer <token>") to a
  // node with a tenants file; empty: none (an open node). A secret: keep it out of logs and
  // command lines ($STRATA_TOKEN). Printable ASCII without spaces.
  std::string token;
  // TLS to the node's gRPC port (its tls_cert_file): trust the CA certificates in
  // tls_ca_file (PEM; empty: the system's roots). tls_cert_file and tls_key_file (PEM, both
  // or neither) are this client's certificate for a node that requires one (mutual TLS).
  // The files are read by Client::Connect (NOT_FOUND / PERMISSION_DENIED from opening them).
  bool tls = false;
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // Deadline of a call whose CallOptions set none.
  absl::Duration default_timeout = absl::Seconds(10);
  RetryOptions retry;
  // UCX transports of the data plane, UCX_TLS syntax ("tcp", "tcp,shm,cma"); empty: UCX_TLS
  // from the environment, else UCX's own choice (shared memory and CMA on one host). Must
  // contain "tcp" when set: connections are set up through UCX's TCP connection manager.
  std::string ucx_transports;
  // Lease lifetime asked for by Read; zero: the node's default (30 s), or the time left to
  // the call's deadline plus 5 s when that is longer (the node clamps to its maximum).
  absl::Duration lease_ttl = absl::ZeroDuration();
  // How long a data-plane connection may take to come up (bounded by the call deadline).
  absl::Duration connect_timeout = absl::Seconds(5);
  // Write sends a blob as PUT_DATA messages of at most this many bytes, all in flight at
  // once; each is a rendezvous straight from the caller's buffer. >= 4096.
  size_t put_message_bytes = size_t{16} << 20;
  // A write is one data-plane round trip: its first put_window_bytes go with the PUT,
  // before the node has said whether it wants them; the rest follow the node's grant,
  // which arrives long before a window of this size has drained. A key that exists
  // costs at most this much transfer (the node drops it); 0: nothing before the grant.
  size_t put_window_bytes = size_t{4} << 20;
  // A read larger than one READ may carry (4096 ranges or 2^20 chunks; docs/api.md) goes
  // as several READs, up to this many in flight at once: the node grants and sends the
  // next while the client verifies the one before. >= 1.
  int reads_in_flight = 4;
  // Threads that run ReadAsync / WriteAsync (and WriteBatch's independent items). >= 1.
  int async_threads = 2;
  // Same host: when the node offers its same-host channel (Health / OpenDataPlane name a
  // socket) and this process can reach it, reads copy blob bytes straight out of the
  // node's DRAM arena (mapped read-only) and writes of blobs up to the node's staging size
  // go through a staging file — no network stack (docs/design/same-host.md). Reads into
  // host memory and writes from it take this path; where the socket cannot be reached the
  // client uses the UCX data plane, retrying the channel at most every 30 s. Off: always
  // UCX. $STRATA_SAME_HOST=0 turns it off in FromEnvironment.
  bool same_host = true;
  // Connections to the same-host channel at most (each serves one call at a time and has
  // its own staging file); calls beyond wait for one. >= 1.
  int same_host_connections = 4;
  // Device memory (MemoryDescriptor kDevice): the gpu::Device that serves descriptors of
  // device ordinal n, opened on first use and kept while the client lives; null:
  // gpu::OpenCudaDevice(n). Tests and machines without a GPU pass a gpu::CreateHostDevice
  // (shared: the caller allocates its "device" buffers from the same one).
  std::function<absl::StatusOr<std::shared_ptr<gpu::Device>>(int device)> open_device;
  // Pinned host memory per device for staging device reads and writes: a read goes
  // through it in halves (the receive of one half overlaps the device copies of the
  // other); a write from device memory stages the whole blob (larger blobs:
  // RESOURCE_EXHAUSTED). >= 2 * the largest layer run of one page (a few MiB at most).
  size_t device_staging_bytes = size_t{256} << 20;
  // Reads into device memory from a node on another host: received by the transport
  // straight into the device memory and verified there (chunk checksums computed by the
  // device: gpu::Device::ChecksumChunks) — where the transport can write that memory: UCX
  // built with CUDA support (GPUDirect RDMA on RDMA NICs) for a GPU, any transport for the
  // host device (its memory is host memory). Elsewhere, or off: the pinned staging pool.
  bool device_direct = true;
  // Connect calls Health (retrying UNAVAILABLE within default_timeout) and fails if the
  // node does not answer. Off: Connect never talks to the node; the first call does.
  bool wait_for_node = false;

  // The defaults, then the variables of the table above where set
  // and non-empty.
  static ClientOptions FromEnvironment();

  // OK, or INVALID_ARGUMENT naming the first bad field: node not "host:port" with a port in
  // 1..65535, a non-positive default_timeout or connect_timeout, negative lease_ttl,
  // negative max_retries, a bad backoff (initial <= 0, max < initial, multiplier < 1,
  // jitter outside [0, 1]), ucx_transports set without "tcp", put_message_bytes < 4096,
  // async_threads < 1, reads_in_flight < 1, a token with a character outside printable ASCII or a
  // space, tls_cert_file without tls_key_file or the other way round, a TLS file without tls,
  // both cluster and cluster_nodes, segment_pages or text_replicas 0, node_timeout <= 0.
  absl::Status Validate() const;
  // Whether the options name a cluster (cluster or cluster_nodes set).
  bool on_cluster() const { return !cluster.empty() || !cluster_nodes.empty(); }
};

struct CallOptions {
  // Absolute deadline; InfiniteFuture (the default): now + ClientOptions::default_timeout.
  absl::Time deadline = absl::InfiniteFuture();

  static CallOptions WithTimeout(absl::Duration timeout) {
    return CallOptions{absl::Now() + timeout};
  }
};

}  // namespace strata
