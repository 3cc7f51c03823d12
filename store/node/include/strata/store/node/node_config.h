// NodeConfig: everything a strata-node can be told, with its embedded defaults, and the
// one table of options that the config file, the command-line flags, --help and
// docs/operations.md all follow.
//
// Every option has one key. It is written `key = value` in a config file and
// `--key=value` (or `--key value`) on the command line; SetNodeOption applies one, from
// either source. Precedence (command_line.h: ResolveNodeConfig): flags > config file >
// environment (STRATA_DATA for data_dir) > the defaults below.
//
// Value syntax
//   address   host:port, or [v6-address]:port; port 0..65535 (0: the kernel picks one)
//   bytes     an integer with an optional unit: B; KiB MiB GiB TiB (powers of 1024);
//             KB MB GB TB (powers of 1000). Units are case-insensitive. "8GiB", "512MiB"
//             (base::ParseBytes).
//   duration  absl::ParseDuration syntax: "30s", "500ms", "10m", "1h30m"; >= 0
//   bool      true/false, yes/no, on/off, 1/0
//   fraction  a decimal number in (0, 1], e.g. 0.85
//   policy    an eviction policy name known to tiering::MakeEvictionPolicy ("lru",
//             "branch-lru", "gdsf")
//   admission an admission policy name known to tiering::MakeAdmissionPolicy ("always",
//             "reuse")
//
// Errors: SetNodeOption returns NOT_FOUND for an unknown key and INVALID_ARGUMENT
// "<key>: <why>" for a value that does not parse or is out of range (an unknown policy
// name included). Validate returns INVALID_ARGUMENT "<key>: <why>" for combinations
// (e.g. lease_ttl > max_lease_ttl, dram_low_watermark > dram_high_watermark).
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/tiering/dram_arena.h"

namespace strata::store::node {

struct NodeConfig {
  // Control plane (gRPC, strata.v1.Store + Admin).
  std::string grpc_listen = "127.0.0.1:7400";
  // Data plane (UCX active messages): where it listens; reported to clients in BeginPut,
  // Read and Health answers.
  std::string dataplane_listen = "127.0.0.1:7401";
  // Data-plane limits (store/dataplane): connections kept at once, the handshake's and a
  // transfer's deadlines.
  uint32_t dataplane_max_connections = 1024;
  absl::Duration dataplane_handshake_timeout = absl::Seconds(10);
  absl::Duration dataplane_transfer_timeout = absl::Seconds(30);
  // PUTs (puts in one round trip) one connection may have unfinished, and the PUT metadata
  // (namespace, tokens, checksums) all connections may have arriving at once.
  uint32_t dataplane_max_puts_per_connection = 256;
  uint64_t dataplane_max_put_metadata_bytes = uint64_t{64} << 20;
  // The same-host channel (store/dataplane/same_host_server.h): clients on this host map
  // the DRAM arena read-only and read blobs out of it; `same_host_socket` names its UNIX
  // socket ("@name": abstract; empty: "@strata-node-<pid>-<n>"), each connection gets a
  // staging file of `same_host_staging_bytes` for its puts. It needs a memfd arena, so with
  // the channel on, dram_backing auto takes the memfd.
  bool same_host = true;
  std::string same_host_socket;
  uint64_t same_host_staging_bytes = uint64_t{64} << 20;
  uint32_t same_host_max_clients = 64;
  // Share the HBM tier with same-host GPU readers (CUDA IPC: the pool is mapped writable in
  // every same-host client; SameHostOptions::share_hbm). Off by default.
  bool same_host_share_hbm = false;
  // Authentication (store/auth): the tenants file; empty: an open node (no tokens; allowed
  // only on loopback addresses unless `insecure`).
  std::string tenants_file;
  // Lets a node listen on a non-loopback address without authentication (and its HTTP
  // endpoint, which has none, on a non-loopback address at all).
  bool insecure = false;
  // TLS for gRPC (PEM files): a certificate chain and its private key, both or neither; a
  // client CA makes every client present a certificate it signed (mutual TLS).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // Lifetime of a data-plane credential Store.OpenDataPlane issues.
  absl::Duration dataplane_credential_ttl = absl::Minutes(10);
  // HTTP endpoint (store/http: /metrics, /v1/tiers, /healthz, /readyz); empty: none.
  std::string http_listen = "127.0.0.1:7402";
  // Its connections open at once; one client address may hold a quarter of them.
  uint32_t http_max_connections = 256;
  // Holds the lock/pid file, the metadata store (meta/) and the SSD tier file
  // (ssd.tier), unless meta_dir / ssd_path put them elsewhere. Created if missing.
  std::string data_dir = "./var";
  // DRAM tier size; 0: sized from free memory (dram_sizing.h). Rounded down to 64 KiB.
  uint64_t dram_bytes = 0;
  bool dram_hugetlb = true;
  bool dram_populate = false;
  // What backs the DRAM tier: auto (a shareable memfd, unless only anonymous memory gets
  // transparent hugepages), memfd, anonymous.
  tiering::DramBacking dram_backing = tiering::DramBacking::kAuto;
  // Largest blob a put may carry (<= 1 GiB).
  uint64_t max_blob_bytes = uint64_t{1} << 30;
  // Eviction policy of the DRAM tier (tiering::MakeEvictionPolicy names).
  std::string dram_policy = "branch-lru";
  // Background demotion: when DRAM use passes the high watermark (a fraction of
  // dram_bytes), blobs leave DRAM (to SSD, else to TEXT) until it is at the low one.
  double dram_high_watermark = 0.95;
  double dram_low_watermark = 0.85;

  // SSD tier: an io_uring O_DIRECT file (or block device) of ssd_bytes, rounded down to
  // 64 KiB; 0: no SSD tier (DRAM pressure drops bytes to TEXT). ssd_path empty:
  // <data_dir>/ssd.tier. ssd_preallocate reserves the space at start (fallocate), so a
  // full disk is found then and not by a later demotion.
  uint64_t ssd_bytes = uint64_t{2} << 30;
  std::string ssd_path;
  bool ssd_preallocate = true;
  uint32_t ssd_queue_depth = 32;
  std::string ssd_policy = "branch-lru";
  // Admission (tiering::MakeAdmissionPolicy): which blobs leaving DRAM are written to SSD
  // (the others drop to TEXT), and which SSD hits keep a copy in DRAM.
  std::string admission = "always";

  // HBM tier: device memory of hbm_bytes (a multiple of 64 KiB) on hbm_device ("cuda": GPU
  // 0; "host": host memory standing in for one, for tests and machines without a GPU), an
  // inclusive cache of hot DRAM blobs: a blob read hbm_admit_reads times is copied in.
  // 0: no HBM tier.
  uint64_t hbm_bytes = 0;
  std::string hbm_device = "cuda";
  uint32_t hbm_admit_reads = 2;

  // TEXT tier budget (token bytes of blobs whose KV bytes were dropped); 0: none.
  uint64_t text_bytes = uint64_t{64} << 20;
  // A rebuild task handed to a worker goes back to the queue after this long unfilled;
  // it is dropped after max_rebuild_attempts hand-outs.
  absl::Duration rebuild_task_ttl = absl::Seconds(30);
  uint32_t max_rebuild_attempts = 3;

  // The live miss-ratio curve: page keys its SHARDS estimator tracks (0: no curve) and
  // points per tier curve (store/core's NodeEngineOptions::mrc_*).
  uint32_t mrc_sampled_keys = 8192;
  uint32_t mrc_curve_points = 32;

  // Durable metadata (RocksDB) at meta_dir (empty: <data_dir>/meta): a restarted node
  // serves its SSD blobs again and keeps DRAM-only blobs as TEXT. false: nothing survives
  // a restart (refused while the metadata directory holds a store: see node_server.h).
  bool meta = true;
  std::string meta_dir;

  absl::Duration lease_ttl = absl::Seconds(30);
  absl::Duration max_lease_ttl = absl::Minutes(10);
  absl::Duration put_ttl = absl::Seconds(60);
  // Leases held at once, in all and by one tenant (NodeEngineOptions::max_leases, ...).
  uint32_t max_leases = 65536;
  uint32_t max_tenant_leases = 16384;
  // What pending puts may hold at once (store/core's NodeEngineOptions::max_pending_*).
  uint32_t max_pending_puts = 4096;
  uint64_t max_pending_metadata_bytes = uint64_t{256} << 20;
  double max_pending_share = 0.5;
  double max_pending_tenant_share = 0.25;
  absl::Duration reap_interval = absl::Seconds(1);
  // How long SIGTERM/SIGINT waits for pending puts and held leases before shutting down.
  absl::Duration drain_timeout = absl::Seconds(30);
  // After draining, how long in-flight RPCs get to finish before they are cancelled.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // Cluster membership (store/cluster; docs/operations.md, "Cluster"): etcd's client
  // endpoints, comma-separated host:port; empty: a single node, no etcd. With them the node
  // registers itself under /strata/<cluster>/nodes/<id> (its id kept in data_dir/node_id)
  // with an etcd lease of cluster_lease_ttl, which it refreshes; a node that dies leaves
  // the cluster's views when the lease expires.
  std::string etcd_endpoints;
  std::string cluster = "default";
  absl::Duration cluster_lease_ttl = absl::Seconds(5);
  // A node that finds serving nodes in its cluster when it starts registers as joining and
  // turns serving after this: meanwhile clients look a segment it now owns up at the
  // segment's previous owner too, and move what they read there to it (a join is no cliff).
  // Zero: serving at once.
  absl::Duration cluster_join_window = absl::Minutes(5);
  // A file holding the bearer token a leaving node hands its segments over with (the other
  // nodes' tenants file must give it the namespaces to write); read when the node leaves.
  // Empty: no token (nodes without a tenants file).
  std::string cluster_token_file;
  // Hot replicas: a blob read cluster_hot_reads times on its segment's owner is pushed to
  // the next cluster_hot_replicas - 1 nodes of the segment's ranking (readers spread over
  // them; it stays readable when the owner is lost). cluster_hot_replicas 1: none.
  uint32_t cluster_hot_reads = 16;
  uint32_t cluster_hot_replicas = 2;
  // R: nodes holding each segment's token text (the cluster's writers' text_replicas).
  // When the serving nodes change (a node lost, drained, joined), a node holding a segment
  // whose R-node set gained a member copies the segment's token text there (TEXT puts,
  // no KV), so a second loss still finds it. 1: no repair.
  uint32_t cluster_text_replicas = 2;
  // The host other nodes and clients reach this node's ports at; empty: the listen
  // addresses' hosts (which must then not be wildcards when etcd_endpoints is set).
  std::string advertise_host;
  // glog: minimum severity written to stderr (info, warning, error) and VLOG verbosity.
  std::string log_level = "info";
  int log_verbosity = 0;

  // OK, or INVALID_ARGUMENT naming the first inconsistent option.
  absl::Status Validate() const;
  // OK unless the node would be reachable from other hosts without authentication:
  // FAILED_PRECONDITION when grpc_listen or dataplane_listen is not a loopback address and
  // there is no tenants_file, or http_listen (which has no authentication) is not a
  // loopback address — unless `insecure`.
  absl::Status CheckExposure() const;

  // Where the SSD tier file and the metadata store live: ssd_path / meta_dir, or their
  // defaults under data_dir ("" when ssd_bytes is 0 / meta is false).
  std::string SsdPath() const;
  std::string MetaDir() const;
};

// One row of the option table.
struct NodeOption {
  std::string_view key;
  std::string_view value_syntax;  // "address", "bytes", "duration", "bool", "fraction", ...
  std::string_view default_text;  // the default as a person reads it
  std::string_view help;          // one line
};

// Every option, in the order --help and docs/operations.md list them.
absl::Span<const NodeOption> NodeOptions();

// Whether `key` names a bool option (a bare --key flag means true).
bool IsBoolOption(std::string_view key);

// Parses `value` for option `key` into *config. Errors above. REQUIRES: config != nullptr.
absl::Status SetNodeOption(std::string_view key, std::string_view value, NodeConfig* config);

// The usage text printed by --help: synopsis, every option with its default, the
// precedence and where the full documentation lives.
std::string UsageText();

// ---- value parsers (exposed for tests)

// A host:port listen address. INVALID_ARGUMENT without a port, with a port outside
// 0..65535, or an empty host.
absl::Status ParseListenAddress(std::string_view text, std::string* host, int* port);

// True for localhost, 127.0.0.0/8 and ::1 (a host as ParseListenAddress returns it).
bool IsLoopbackHost(std::string_view host);
// True for a listen address ("host:port") whose host IsLoopbackHost; false when it does not
// parse.
bool IsLoopbackAddress(std::string_view address);

}  // namespace strata::store::node
