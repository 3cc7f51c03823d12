#include "strata/store/node/node_config.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

#include "strata/base/absl_view.h"
#include "strata/base/byte_size.h"
#include "strata/base/status_macros.h"
#include "strata/tiering/admission_policy.h"
#include "strata/tiering/eviction_policy.h"

namespace strata::store::node {
namespace {

constexpr uint64_t kSsdGranuleBytes = uint64_t{64} << 10;

absl::Status Bad(std::string_view key, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(base::AbslView(key), ": ", why));
}

absl::Status SetAddress(std::string_view key, std::string_view value, std::string* out) {
  std::string host;
  int port = 0;
  absl::Status parsed = ParseListenAddress(value, &host, &port);
  if (!parsed.ok()) return Bad(key, parsed.message());
  *out = std::string(value);
  return absl::OkStatus();
}

absl::Status SetBytes(std::string_view key, std::string_view value, uint64_t* out) {
  absl::StatusOr<uint64_t> parsed = base::ParseBytes(value);
  if (!parsed.ok()) return Bad(key, parsed.status().message());
  *out = *parsed;
  return absl::OkStatus();
}

absl::Status SetDuration(std::string_view key, std::string_view value, absl::Duration* out) {
  absl::Duration d;
  if (!absl::ParseDuration(base::AbslView(value), &d) || d < absl::ZeroDuration() ||
      d == absl::InfiniteDuration()) {
    return Bad(key, absl::StrCat("\"", base::AbslView(value),
                                 "\" is not a duration (e.g. 30s, 500ms, 10m, 1h30m)"));
  }
  *out = d;
  return absl::OkStatus();
}

absl::Status SetBool(std::string_view key, std::string_view value, bool* out) {
  const std::string v = absl::AsciiStrToLower(base::AbslView(value));
  if (v == "true" || v == "yes" || v == "on" || v == "1") {
    *out = true;
  } else if (v == "false" || v == "no" || v == "off" || v == "0") {
    *out = false;
  } else {
    return Bad(key, absl::StrCat("\"", base::AbslView(value), "\" is not a bool (true or false)"));
  }
  return absl::OkStatus();
}

// A decimal fraction in (0, 1].
absl::Status SetFraction(std::string_view key, std::string_view value, double* out) {
  double d = 0;
  if (!absl::SimpleAtod(base::AbslView(value), &d) || !(d > 0 && d <= 1)) {
    return Bad(key, absl::StrCat("\"", base::AbslView(value),
                                 "\" is not a fraction in (0, 1] (e.g. 0.85)"));
  }
  *out = d;
  return absl::OkStatus();
}

// A policy name tiering::MakeEvictionPolicy knows.
absl::Status SetPolicy(std::string_view key, std::string_view value, std::string* out) {
  const absl::StatusOr<std::unique_ptr<tiering::EvictionPolicy>> policy =
      tiering::MakeEvictionPolicy(value);
  if (!policy.ok()) return Bad(key, policy.status().message());
  *out = std::string(value);
  return absl::OkStatus();
}

// A name tiering::MakeAdmissionPolicy knows.
absl::Status SetAdmission(std::string_view key, std::string_view value, std::string* out) {
  const absl::StatusOr<std::unique_ptr<tiering::AdmissionPolicy>> policy =
      tiering::MakeAdmissionPolicy(value);
  if (!policy.ok()) return Bad(key, policy.status().message());
  *out = std::string(value);
  return absl::OkStatus();
}

absl::Status SetUint32(std::string_view key, std::string_view value, uint32_t min, uint32_t max,
                       uint32_t* out) {
  uint32_t n = 0;
  if (!absl::SimpleAtoi(base::AbslView(value), &n) || n < min || n > max) {
    return Bad(key, absl::StrCat("expected an integer in [", min, ", ", max, "]"));
  }
  *out = n;
  return absl::OkStatus();
}

using Setter = absl::Status (*)(std::string_view key, std::string_view value, NodeConfig* c);

struct OptionRow {
  NodeOption option;
  Setter set;
};

// The table. Keep docs/operations.md in step with it (node_config_test checks that every
// key has a row there).
const std::vector<OptionRow>& Table() {
  static const std::vector<OptionRow> table = {{
      {{"grpc_listen", "address", "127.0.0.1:7400",
        "control plane (gRPC Store + Admin) listen address; port 0 picks a free port"},
       [](auto k, auto v, NodeConfig* c) { return SetAddress(k, v, &c->grpc_listen); }},
      {{"dataplane_listen", "address", "127.0.0.1:7401",
        "data plane (UCX) listen address, reported to clients in BeginPut/Read/Health"},
       [](auto k, auto v, NodeConfig* c) { return SetAddress(k, v, &c->dataplane_listen); }},
      {{"dataplane_max_connections", "integer", "1024",
        "data-plane client connections kept at once; more are closed when accepted"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1000000, &c->dataplane_max_connections);
       }},
      {{"dataplane_handshake_timeout", "duration", "10s",
        "a data-plane connection must complete its handshake within this or is closed"},
       [](auto k, auto v, NodeConfig* c) {
         return SetDuration(k, v, &c->dataplane_handshake_timeout);
       }},
      {{"dataplane_transfer_timeout", "duration", "30s",
        "a data-plane transfer (one payload) taking longer fails its client's connection"},
       [](auto k, auto v, NodeConfig* c) {
         return SetDuration(k, v, &c->dataplane_transfer_timeout);
       }},
      {{"dataplane_max_puts_per_connection", "integer", "256",
        "PUTs one data-plane connection may have unfinished"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1 << 20, &c->dataplane_max_puts_per_connection);
       }},
      {{"dataplane_max_put_metadata_bytes", "bytes", "64MiB",
        "PUT metadata arriving at once over all data-plane connections"},
       [](auto k, auto v, NodeConfig* c) {
         return SetBytes(k, v, &c->dataplane_max_put_metadata_bytes);
       }},
      {{"same_host", "bool", "true",
        "offer the same-host channel: clients on this host read blobs straight out of the "
        "DRAM tier (mapped read-only) and put through a staging file (needs a memfd DRAM tier)"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->same_host); }},
      {{"same_host_socket", "socket name or empty", "empty",
        "the same-host channel's UNIX socket: \"@name\" (abstract) or a path; empty: "
        "\"@strata-node-<pid>-<n>\""},
       [](auto k, auto v, NodeConfig* c) {
         c->same_host_socket = std::string(v);
         return absl::OkStatus();
       }},
      {{"same_host_staging_bytes", "bytes", "64MiB",
        "each same-host connection's staging file: the largest blob put that way"},
       [](auto k, auto v, NodeConfig* c) -> absl::Status {
         STRATA_RETURN_IF_ERROR(SetBytes(k, v, &c->same_host_staging_bytes));
         if (c->same_host_staging_bytes == 0) return Bad(k, "must be > 0");
         return absl::OkStatus();
       }},
      {{"same_host_share_hbm", "bool", "false",
        "give same-host GPU readers the HBM tier by CUDA IPC (device-to-device copies); the "
        "pool is then writable by every same-host client: only where all are trusted"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->same_host_share_hbm); }},
      {{"same_host_max_clients", "integer", "64", "same-host connections open at once"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 4096, &c->same_host_max_clients);
       }},
      {{"tenants_file", "path or empty", "empty",
        "the tenants file (JSON: name, role, token_sha256, namespaces per tenant); every call "
        "then needs a tenant's bearer token. Empty: no authentication (loopback only)"},
       [](auto k, auto v, NodeConfig* c) {
         c->tenants_file = std::string(v);
         return absl::OkStatus();
       }},
      {{"insecure", "bool", "false",
        "allow listening on a non-loopback address without a tenants file, and the HTTP "
        "endpoint (unauthenticated) on a non-loopback address"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->insecure); }},
      {{"tls_cert_file", "path or empty", "empty",
        "TLS for gRPC: the server's certificate chain (PEM); with tls_key_file, gRPC serves "
        "TLS only"},
       [](auto k, auto v, NodeConfig* c) {
         c->tls_cert_file = std::string(v);
         return absl::OkStatus();
       }},
      {{"tls_key_file", "path or empty", "empty", "the private key of tls_cert_file (PEM)"},
       [](auto k, auto v, NodeConfig* c) {
         c->tls_key_file = std::string(v);
         return absl::OkStatus();
       }},
      {{"tls_client_ca_file", "path or empty", "empty",
        "mutual TLS: gRPC clients must present a certificate this CA (PEM) signed"},
       [](auto k, auto v, NodeConfig* c) {
         c->tls_client_ca_file = std::string(v);
         return absl::OkStatus();
       }},
      {{"dataplane_credential_ttl", "duration", "10m",
        "lifetime of a data-plane credential (Store.OpenDataPlane); connections made with it "
        "outlive it"},
       [](auto k, auto v, NodeConfig* c) {
         return SetDuration(k, v, &c->dataplane_credential_ttl);
       }},
      {{"http_listen", "address or empty", "127.0.0.1:7402",
        "HTTP endpoint (/metrics, /v1/tiers, /healthz, /readyz); port 0 picks a free port; "
        "empty: off"},
       [](auto k, auto v, NodeConfig* c) {
         if (v.empty()) {
           c->http_listen.clear();
           return absl::OkStatus();
         }
         return SetAddress(k, v, &c->http_listen);
       }},
      {{"http_max_connections", "integer", "256",
        "HTTP connections open at once (a quarter of them from one client address)"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 65536, &c->http_max_connections);
       }},
      {{"data_dir", "path", "./var, or $STRATA_DATA",
        "node state directory (created): the strata-node.pid lock, meta/ and ssd.tier"},
       [](auto k, auto v, NodeConfig* c) {
         if (v.empty()) return Bad(k, "empty path");
         c->data_dir = std::string(v);
         return absl::OkStatus();
       }},
      {{"dram_bytes", "bytes or auto", "auto",
        "DRAM tier size; auto = 25% of MemAvailable, at least 64MiB, at most 8GiB"},
       [](auto k, auto v, NodeConfig* c) {
         if (absl::AsciiStrToLower(base::AbslView(v)) == "auto") {
           c->dram_bytes = 0;
           return absl::OkStatus();
         }
         STRATA_RETURN_IF_ERROR(SetBytes(k, v, &c->dram_bytes));
         if (c->dram_bytes < (uint64_t{64} << 10)) return Bad(k, "must be at least 64KiB");
         return absl::OkStatus();
       }},
      {{"dram_hugetlb", "bool", "true",
        "back the DRAM tier with 2 MiB hugetlb pages where the kernel has them reserved"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->dram_hugetlb); }},
      {{"dram_populate", "bool", "false", "fault every DRAM tier page in at start"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->dram_populate); }},
      {{"dram_backing", "auto|memfd|anonymous", "auto",
        "what backs the DRAM tier: a shareable memfd, or anonymous memory (hugepages where "
        "only it gets them)"},
       [](auto k, auto v, NodeConfig* c) -> absl::Status {
         if (v == "auto") {
           c->dram_backing = tiering::DramBacking::kAuto;
         } else if (v == "memfd") {
           c->dram_backing = tiering::DramBacking::kMemfd;
         } else if (v == "anonymous") {
           c->dram_backing = tiering::DramBacking::kAnonymous;
         } else {
           return absl::InvalidArgumentError(absl::StrCat(std::string(k), ": \"", std::string(v),
                                                          "\" is not auto, memfd or anonymous"));
         }
         return absl::OkStatus();
       }},
      {{"dram_policy", "policy", "branch-lru",
        "eviction policy of the DRAM tier: lru, branch-lru, gdsf"},
       [](auto k, auto v, NodeConfig* c) { return SetPolicy(k, v, &c->dram_policy); }},
      {{"dram_high_watermark", "fraction", "0.95",
        "DRAM use above this fraction starts background demotion (to SSD, else to TEXT)"},
       [](auto k, auto v, NodeConfig* c) { return SetFraction(k, v, &c->dram_high_watermark); }},
      {{"dram_low_watermark", "fraction", "0.85",
        "background demotion stops at this fraction of the DRAM tier (<= high)"},
       [](auto k, auto v, NodeConfig* c) { return SetFraction(k, v, &c->dram_low_watermark); }},
      {{"ssd_bytes", "bytes", "2GiB",
        "SSD tier size, rounded down to 64KiB; 0 = no SSD tier (DRAM pressure drops to TEXT)"},
       [](auto k, auto v, NodeConfig* c) {
         uint64_t bytes = 0;
         STRATA_RETURN_IF_ERROR(SetBytes(k, v, &bytes));
         if (bytes != 0 && bytes < kSsdGranuleBytes) {
           return Bad(k, "must be 0 (no SSD tier) or at least 64KiB");
         }
         c->ssd_bytes = bytes / kSsdGranuleBytes * kSsdGranuleBytes;
         return absl::OkStatus();
       }},
      {{"ssd_path", "path", "<data_dir>/ssd.tier",
        "SSD tier file (created) or block device; its filesystem must support O_DIRECT"},
       [](auto k, auto v, NodeConfig* c) {
         if (v.empty()) return Bad(k, "empty path");
         c->ssd_path = std::string(v);
         return absl::OkStatus();
       }},
      {{"ssd_preallocate", "bool", "true",
        "reserve the SSD file's space at start (fallocate); false: a sparse file"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->ssd_preallocate); }},
      {{"ssd_queue_depth", "integer", "32", "io_uring submission queue depth of the SSD tier"},
       [](auto k, auto v, NodeConfig* c) { return SetUint32(k, v, 1, 4096, &c->ssd_queue_depth); }},
      {{"ssd_policy", "policy", "branch-lru",
        "eviction policy of the SSD tier: lru, branch-lru, gdsf"},
       [](auto k, auto v, NodeConfig* c) { return SetPolicy(k, v, &c->ssd_policy); }},
      {{"admission", "admission", "always",
        "which blobs leaving DRAM are written to SSD (else TEXT) and which SSD hits are "
        "copied back into DRAM: always, reuse"},
       [](auto k, auto v, NodeConfig* c) { return SetAdmission(k, v, &c->admission); }},
      {{"hbm_bytes", "bytes", "0",
        "HBM tier size (device memory, a multiple of 64KiB): copies of hot DRAM blobs; 0 = none"},
       [](auto k, auto v, NodeConfig* c) {
         STRATA_RETURN_IF_ERROR(SetBytes(k, v, &c->hbm_bytes));
         if (c->hbm_bytes % (uint64_t{64} << 10) != 0) return Bad(k, "not a multiple of 64KiB");
         return absl::OkStatus();
       }},
      {{"hbm_device", "device", "cuda",
        "what holds the HBM tier: cuda (GPU 0) or host (host memory standing in, for tests)"},
       [](auto k, auto v, NodeConfig* c) {
         if (v != "cuda" && v != "host") return Bad(k, "must be cuda or host");
         c->hbm_device = std::string(v);
         return absl::OkStatus();
       }},
      {{"hbm_admit_reads", "integer", "2", "a blob is copied into the HBM tier at this many reads"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1000000, &c->hbm_admit_reads);
       }},
      {{"text_bytes", "bytes", "64MiB",
        "TEXT tier budget: tokens kept for blobs whose KV bytes were dropped; 0 = none"},
       [](auto k, auto v, NodeConfig* c) { return SetBytes(k, v, &c->text_bytes); }},
      {{"rebuild_task_ttl", "duration", "30s",
        "a rebuild task a worker took goes back to the queue if not filled in this time"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->rebuild_task_ttl); }},
      {{"max_rebuild_attempts", "integer", "3",
        "a rebuild task handed out this many times without being filled is dropped"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1000000, &c->max_rebuild_attempts);
       }},
      {{"mrc_sampled_keys", "integer", "8192",
        "page keys the live miss-ratio curve (SHARDS) tracks; 0 = no curve"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 0, 1 << 22, &c->mrc_sampled_keys);
       }},
      {{"mrc_curve_points", "integer", "32", "points per tier curve in Tiers and /v1/tiers"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1024, &c->mrc_curve_points);
       }},
      {{"meta", "bool", "true",
        "keep blob metadata in RocksDB so a restart serves SSD blobs again (false: restart "
        "empty)"},
       [](auto k, auto v, NodeConfig* c) { return SetBool(k, v, &c->meta); }},
      {{"meta_dir", "path", "<data_dir>/meta", "metadata store directory (created)"},
       [](auto k, auto v, NodeConfig* c) {
         if (v.empty()) return Bad(k, "empty path");
         c->meta_dir = std::string(v);
         return absl::OkStatus();
       }},
      {{"max_blob_bytes", "bytes", "1GiB", "largest blob one put may carry (at most 1GiB)"},
       [](auto k, auto v, NodeConfig* c) { return SetBytes(k, v, &c->max_blob_bytes); }},
      {{"lease_ttl", "duration", "30s", "read lease lifetime when a Read asks for 0"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->lease_ttl); }},
      {{"max_lease_ttl", "duration", "10m", "longest lease a Read or RenewLease gets"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->max_lease_ttl); }},
      {{"put_ttl", "duration", "60s", "a put with no activity for this long is abandoned"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->put_ttl); }},
      {{"max_leases", "integer", "65536", "read leases held at once"},
       [](auto k, auto v, NodeConfig* c) { return SetUint32(k, v, 1, 1 << 24, &c->max_leases); }},
      {{"max_tenant_leases", "integer", "16384", "read leases one tenant may hold at once"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1 << 24, &c->max_tenant_leases);
       }},
      {{"max_pending_puts", "integer", "4096", "puts that may be pending at once"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1 << 20, &c->max_pending_puts);
       }},
      {{"max_pending_metadata_bytes", "bytes", "256MiB",
        "memory pending puts' tokens and checksums may take"},
       [](auto k, auto v, NodeConfig* c) {
         return SetBytes(k, v, &c->max_pending_metadata_bytes);
       }},
      {{"etcd_endpoints", "host:port,...", "empty",
        "etcd client endpoints of the cluster this node joins (registered under "
        "/strata/<cluster>/nodes/<id>); empty: a single node without etcd"},
       [](auto k, auto v, NodeConfig* c) -> absl::Status {
         for (absl::string_view endpoint :
              absl::StrSplit(base::AbslView(v), ',', absl::SkipEmpty())) {
           std::string host;
           int port = 0;
           absl::Status parsed =
               ParseListenAddress(std::string_view(endpoint.data(), endpoint.size()), &host, &port);
           if (!parsed.ok()) return Bad(k, parsed.message());
           if (port == 0)
             return Bad(k, absl::StrCat("\"", endpoint, "\": port 0 is not an endpoint"));
         }
         c->etcd_endpoints = std::string(v);
         return absl::OkStatus();
       }},
      {{"cluster", "name", "default",
        "the cluster's name in etcd (letters, digits, '.', '_', '-'; at most 64)"},
       [](auto k, auto v, NodeConfig* c) -> absl::Status {
         if (v.empty() || v.size() > 64 ||
             v.find_first_not_of(
                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                 std::string_view::npos) {
           return Bad(k, "1 to 64 letters, digits, '.', '_' or '-'");
         }
         c->cluster = std::string(v);
         return absl::OkStatus();
       }},
      {{"cluster_lease_ttl", "duration", "5s",
        "the etcd lease of the node's registration: a node that dies leaves the cluster's "
        "views this long after (>= 2s)"},
       [](auto k, auto v, NodeConfig* c) -> absl::Status {
         STRATA_RETURN_IF_ERROR(SetDuration(k, v, &c->cluster_lease_ttl));
         if (c->cluster_lease_ttl < absl::Seconds(2)) return Bad(k, "must be at least 2s");
         return absl::OkStatus();
       }},
      {{"cluster_join_window", "duration", "5m",
        "a node that joins a cluster with serving nodes is 'joining' this long: clients also "
        "ask a segment's previous owner and move what they read there to this node; 0: "
        "serving at once"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->cluster_join_window); }},
      {{"cluster_token_file", "path or empty", "empty",
        "a file with the bearer token this node hands its segments to the other nodes with "
        "when it leaves the cluster (their tenants file must let it write those namespaces)"},
       [](auto k, auto v, NodeConfig* c) {
         c->cluster_token_file = std::string(v);
         return absl::OkStatus();
       }},
      {{"cluster_hot_reads", "integer", "16",
        "a blob read this many times on its segment's owner is pushed to the next nodes of "
        "the segment's ranking (cluster_hot_replicas)"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 1000000, &c->cluster_hot_reads);
       }},
      {{"cluster_hot_replicas", "integer", "2",
        "nodes holding a hot blob, its owner included (readers spread over them); 1: no "
        "hot replicas"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 8, &c->cluster_hot_replicas);
       }},
      {{"cluster_text_replicas", "integer", "2",
        "nodes holding each segment's token text (the writers' text_replicas); when the "
        "serving nodes change, the text is copied to the segment's new holders; 1: no repair"},
       [](auto k, auto v, NodeConfig* c) {
         return SetUint32(k, v, 1, 8, &c->cluster_text_replicas);
       }},
      {{"advertise_host", "host or empty", "empty",
        "the host other nodes and clients reach this node at (registered in etcd); empty: "
        "the listen addresses' hosts"},
       [](auto k, auto v, NodeConfig* c) {
         c->advertise_host = std::string(v);
         return absl::OkStatus();
       }},
      {{"max_pending_share", "fraction", "0.5",
        "share of the DRAM tier pending puts may reserve in all"},
       [](auto k, auto v, NodeConfig* c) { return SetFraction(k, v, &c->max_pending_share); }},
      {{"max_pending_tenant_share", "fraction", "0.25",
        "share of the DRAM tier one tenant's pending puts may reserve"},
       [](auto k, auto v, NodeConfig* c) {
         return SetFraction(k, v, &c->max_pending_tenant_share);
       }},
      {{"reap_interval", "duration", "1s",
        "how often expired leases and abandoned puts are reclaimed"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->reap_interval); }},
      {{"drain_timeout", "duration", "30s",
        "on SIGTERM/SIGINT: how long to wait for pending puts and held leases"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->drain_timeout); }},
      {{"shutdown_grace", "duration", "5s",
        "after draining: how long in-flight RPCs may run before they are cancelled"},
       [](auto k, auto v, NodeConfig* c) { return SetDuration(k, v, &c->shutdown_grace); }},
      {{"log_level", "info|warning|error", "info", "least severe log line written to stderr"},
       [](auto k, auto v, NodeConfig* c) {
         const std::string level = absl::AsciiStrToLower(base::AbslView(v));
         if (level != "info" && level != "warning" && level != "error") {
           return Bad(
               k, absl::StrCat("\"", base::AbslView(v), "\" is not one of info, warning, error"));
         }
         c->log_level = level;
         return absl::OkStatus();
       }},
      {{"log_verbosity", "integer", "0", "glog VLOG verbosity (1: every failed RPC)"},
       [](auto k, auto v, NodeConfig* c) {
         int n = 0;
         if (!absl::SimpleAtoi(base::AbslView(v), &n) || n < 0)
           return Bad(k, "expected an integer >= 0");
         c->log_verbosity = n;
         return absl::OkStatus();
       }},
      {{"config", "path", "none", "read options from this key = value file (command line only)"},
       [](auto k, auto, NodeConfig*) {
         return Bad(k, "names the config file; it is a command-line flag only");
       }},
  }};
  return table;
}

}  // namespace

absl::Span<const NodeOption> NodeOptions() {
  static const std::vector<NodeOption> options = [] {
    std::vector<NodeOption> out;
    for (const OptionRow& row : Table()) out.push_back(row.option);
    return out;
  }();
  return options;
}

bool IsBoolOption(std::string_view key) {
  for (const OptionRow& row : Table()) {
    if (row.option.key == key) return row.option.value_syntax == "bool";
  }
  return false;
}

absl::Status SetNodeOption(std::string_view key, std::string_view value, NodeConfig* config) {
  for (const OptionRow& row : Table()) {
    if (row.option.key == key) return row.set(key, value, config);
  }
  return absl::NotFoundError(absl::StrCat("unknown option \"", base::AbslView(key), "\""));
}

absl::Status NodeConfig::Validate() const {
  if (max_blob_bytes == 0 || max_blob_bytes > (uint64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_blob_bytes: ", max_blob_bytes, " is outside 1B..1GiB"));
  }
  if (lease_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lease_ttl: must be > 0");
  }
  if (lease_ttl > max_lease_ttl) {
    return absl::InvalidArgumentError(absl::StrCat("lease_ttl: ", absl::FormatDuration(lease_ttl),
                                                   " exceeds max_lease_ttl ",
                                                   absl::FormatDuration(max_lease_ttl)));
  }
  if (put_ttl <= absl::ZeroDuration()) return absl::InvalidArgumentError("put_ttl: must be > 0");
  if (max_pending_metadata_bytes == 0) {
    return absl::InvalidArgumentError("max_pending_metadata_bytes: must be > 0");
  }
  for (auto [key, share] : {std::pair{"max_pending_share", max_pending_share},
                            std::pair{"max_pending_tenant_share", max_pending_tenant_share}}) {
    if (!(share > 0 && share <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", share, " is outside (0, 1]"));
    }
  }
  if (dataplane_handshake_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("dataplane_handshake_timeout: must be > 0");
  }
  if (dataplane_max_put_metadata_bytes == 0) {
    return absl::InvalidArgumentError("dataplane_max_put_metadata_bytes: must be > 0");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls_cert_file, tls_key_file: give both or neither");
  }
  if (!tls_client_ca_file.empty() && tls_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "tls_client_ca_file: needs tls_cert_file and tls_key_file (mutual TLS is TLS first)");
  }
  if (dataplane_credential_ttl < absl::Seconds(1)) {
    return absl::InvalidArgumentError("dataplane_credential_ttl: must be >= 1s");
  }
  if (dataplane_transfer_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("dataplane_transfer_timeout: must be > 0");
  }
  if (reap_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("reap_interval: must be > 0");
  }
  if (!(dram_high_watermark > 0 && dram_high_watermark <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("dram_high_watermark: ", dram_high_watermark, " is outside (0, 1]"));
  }
  if (!(dram_low_watermark > 0 && dram_low_watermark <= dram_high_watermark)) {
    return absl::InvalidArgumentError(absl::StrCat("dram_low_watermark: ", dram_low_watermark,
                                                   " must be > 0 and <= dram_high_watermark ",
                                                   dram_high_watermark));
  }
  if (ssd_bytes % kSsdGranuleBytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ssd_bytes: ", ssd_bytes, " is not a multiple of 64KiB"));
  }
  if (ssd_queue_depth == 0) return absl::InvalidArgumentError("ssd_queue_depth: must be > 0");
  if (!etcd_endpoints.empty() && advertise_host.empty()) {
    // What the node registers must be reachable: a wildcard listen host is not.
    for (auto [key, address] :
         {std::pair{"grpc_listen", grpc_listen}, std::pair{"dataplane_listen", dataplane_listen}}) {
      std::string host;
      int port = 0;
      if (ParseListenAddress(address, &host, &port).ok() &&
          (host == "0.0.0.0" || host == "::" || host == "[::]")) {
        return absl::InvalidArgumentError(absl::StrCat(
            key, ": ", address,
            " listens on every address; a cluster node needs advertise_host (what to register)"));
      }
    }
  }
  if (rebuild_task_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rebuild_task_ttl: must be > 0");
  }
  if (max_rebuild_attempts == 0) {
    return absl::InvalidArgumentError("max_rebuild_attempts: must be > 0");
  }
  for (const auto& [key, name] :
       {std::pair<const char*, const std::string*>{"dram_policy", &dram_policy},
        {"ssd_policy", &ssd_policy}}) {
    if (absl::Status made = tiering::MakeEvictionPolicy(*name).status(); !made.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", made.message()));
    }
  }
  if (absl::Status made = tiering::MakeAdmissionPolicy(admission).status(); !made.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("admission: ", made.message()));
  }
  return absl::OkStatus();
}

std::string NodeConfig::SsdPath() const {
  if (ssd_bytes == 0) return "";
  return ssd_path.empty() ? absl::StrCat(data_dir, "/ssd.tier") : ssd_path;
}

std::string NodeConfig::MetaDir() const {
  if (!meta) return "";
  return meta_dir.empty() ? absl::StrCat(data_dir, "/meta") : meta_dir;
}

std::string UsageText() {
  std::string text =
      "usage: strata-node [--config FILE] [--KEY=VALUE ...]\n"
      "\n"
      "Runs one strata storage node. With no arguments: a single local node on loopback\n"
      "with embedded defaults. Every option below can be given as a flag (--KEY=VALUE or\n"
      "--KEY VALUE; a bare --KEY sets a bool to true) or as a `KEY = VALUE` line of the\n"
      "config file. Precedence: flags > config file > environment (STRATA_DATA sets\n"
      "data_dir) > defaults. SIGTERM or SIGINT drains the node and exits 0.\n"
      "Exit codes: 0 clean stop, 1 could not start, 2 bad flag or config.\n"
      "Documentation: docs/operations.md.\n"
      "\n"
      "options (default in brackets):\n";
  for (const NodeOption& option : NodeOptions()) {
    absl::StrAppend(&text, "  --", base::AbslView(option.key), "=<",
                    base::AbslView(option.value_syntax), ">  [",
                    base::AbslView(option.default_text), "]\n      ", base::AbslView(option.help),
                    "\n");
  }
  absl::StrAppend(&text, "  --help        this text\n  --version     print the version\n");
  return text;
}

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool IsLoopbackAddress(std::string_view address) {
  std::string host;
  int port = 0;
  return ParseListenAddress(address, &host, &port).ok() && IsLoopbackHost(host);
}

absl::Status NodeConfig::CheckExposure() const {
  if (insecure) return absl::OkStatus();
  if (tenants_file.empty()) {
    for (const auto& [key, address] :
         {std::pair<const char*, const std::string*>{"grpc_listen", &grpc_listen},
          {"dataplane_listen", &dataplane_listen}}) {
      if (!IsLoopbackAddress(*address)) {
        return absl::FailedPreconditionError(absl::StrCat(
            key, " = ", *address,
            " is not a loopback address and there is no tenants_file: any host could read and "
            "write every namespace. Give a tenants_file (docs/operations.md, "
            "\"Authentication\"), or pass --insecure to run open anyway"));
      }
    }
  }
  if (!http_listen.empty() && !IsLoopbackAddress(http_listen)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "http_listen = ", http_listen,
        " is not a loopback address and the HTTP endpoint has no authentication. Bind it to "
        "loopback (a local scraper or proxy can forward it), or pass --insecure"));
  }
  return absl::OkStatus();
}

absl::Status ParseListenAddress(std::string_view text, std::string* host, int* port) {
  const absl::string_view t = base::AbslView(text);
  const size_t colon = t.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("\"", t, "\" is not host:port"));
  }
  absl::string_view h = t.substr(0, colon);
  const absl::string_view p = t.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", t, "\": write an IPv6 address in brackets, [::1]:7400"));
  }
  if (h.empty()) return absl::InvalidArgumentError(absl::StrCat("\"", t, "\": empty host"));
  int n = -1;
  if (p.empty() ||
      !std::all_of(p.begin(), p.end(),
                   [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) ||
      !absl::SimpleAtoi(p, &n) || n > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("\"", t, "\": port must be a number 0..65535"));
  }
  *host = std::string(h);
  *port = n;
  return absl::OkStatus();
}

}  // namespace strata::store::node
