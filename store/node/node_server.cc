#include "strata/store/node/node_server.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "nlohmann/json.hpp"
#include "strata/base/byte_size.h"
#include "strata/base/read_file.h"
#include "strata/base/status_macros.h"
#include "strata/gpu/device.h"
#include "strata/store/auth/data_plane_credential.h"
#include "strata/store/auth/tenant_table.h"
#include "strata/store/cluster/etcd_client.h"
#include "strata/store/cluster/membership.h"
#include "strata/store/cluster/node_record.h"
#include "strata/store/dataplane/data_plane_server.h"
#include "strata/store/dataplane/same_host_server.h"
#include "strata/store/http/http_server.h"
#include "strata/store/http/node_snapshot.h"
#include "strata/store/meta/rocks_meta_store.h"
#include "strata/store/node/dram_sizing.h"
#include "strata/store/peer/hand_over.h"
#include "strata/store/peer/hot_replicator.h"
#include "strata/store/peer/text_repair.h"
#include "strata/store/rpc/rpc_server.h"
#include "strata/tiering/hbm_tier.h"
#include "strata/tiering/io/ssd_tier.h"

namespace strata::store::node {
namespace {

constexpr uint64_t kDramGranuleBytes = uint64_t{64} << 10;
// A certificate chain, key or CA bundle larger than this is refused.
constexpr size_t kMaxPemBytes = size_t{1} << 20;

// config.dram_bytes, or the default from free memory; rounded down to the granule.
// FAILED_PRECONDITION when an explicit size exceeds the machine's memory (MemTotal): such a
// tier could never be filled without the kernel killing the node.
absl::StatusOr<uint64_t> ChooseDramBytes(const NodeConfig& config) {
  uint64_t bytes = config.dram_bytes;
  if (bytes == 0) {
    absl::StatusOr<uint64_t> available = ReadMemAvailableBytes();
    if (available.ok()) {
      bytes = DefaultDramBytes(*available);
      LOG(INFO) << "dram_bytes = auto: " << bytes << " bytes (25% of MemAvailable " << *available
                << ", clamped to [" << kMinDefaultDramBytes << ", " << kMaxDefaultDramBytes << "])";
    } else {
      bytes = kMinDefaultDramBytes;
      LOG(WARNING) << "dram_bytes = auto but " << available.status() << "; using " << bytes;
    }
  } else if (absl::StatusOr<uint64_t> total = ReadMemInfoBytes("MemTotal"); total.ok()) {
    if (bytes > *total) {
      return absl::FailedPreconditionError(absl::StrCat("dram_bytes: ", base::FormatBytes(bytes),
                                                        " exceeds this machine's memory (",
                                                        base::FormatBytes(*total), " MemTotal)"));
    }
    if (absl::StatusOr<uint64_t> available = ReadMemAvailableBytes();
        available.ok() && bytes > *available) {
      LOG(WARNING) << "dram_bytes: " << base::FormatBytes(bytes) << " is more than the "
                   << base::FormatBytes(*available)
                   << " of memory available now; the tier fills as it is used";
    }
  }
  return bytes / kDramGranuleBytes * kDramGranuleBytes;
}

// `status` with "<what>: " in front of its message, same code.
absl::Status Prefixed(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

// The metadata store at config.MetaDir(), or none (meta = false: then the directory must not
// hold a store, see node_server.h).
absl::StatusOr<std::shared_ptr<meta::RocksMetaStore>> OpenMetaStore(const NodeConfig& config) {
  if (!config.meta) {
    const std::string dir = config.meta_dir.empty() ? config.data_dir + "/meta" : config.meta_dir;
    std::error_code ec;
    if (std::filesystem::exists(dir + "/CURRENT", ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "meta = false but ", dir,
          " holds a metadata store of an earlier run: a node without metadata would reuse the "
          "SSD space its records name. Remove that directory to run without metadata, or keep "
          "meta = true"));
    }
    LOG(WARNING) << "metadata: off (meta = false): nothing this node holds survives a restart";
    return nullptr;
  }
  meta::RocksMetaStoreOptions options;
  options.path = config.MetaDir();
  absl::StatusOr<std::unique_ptr<meta::RocksMetaStore>> store = meta::RocksMetaStore::Open(options);
  if (!store.ok()) return Prefixed(store.status(), "metadata store");
  return std::shared_ptr<meta::RocksMetaStore>(*std::move(store));
}

// The SSD tier at config.SsdPath(), or none (ssd_bytes = 0).
absl::StatusOr<std::shared_ptr<tiering::io::SsdTier>> OpenSsdTier(const NodeConfig& config) {
  if (config.ssd_bytes == 0) return nullptr;
  tiering::io::SsdTierOptions options;
  options.path = config.SsdPath();
  options.capacity_bytes = config.ssd_bytes;
  options.queue_depth = config.ssd_queue_depth;
  options.preallocate = config.ssd_preallocate;
  absl::StatusOr<std::unique_ptr<tiering::io::SsdTier>> tier = tiering::io::SsdTier::Open(options);
  if (!tier.ok()) return Prefixed(tier.status(), "SSD tier");
  return std::shared_ptr<tiering::io::SsdTier>(*std::move(tier));
}

// The HBM tier on config.hbm_device, or none (hbm_bytes = 0). Its errors name the device
// (UNAVAILABLE: no GPU or driver; RESOURCE_EXHAUSTED: not that much device memory).
absl::StatusOr<std::shared_ptr<tiering::HbmTier>> OpenHbmTier(const NodeConfig& config) {
  if (config.hbm_bytes == 0) return nullptr;
  absl::StatusOr<std::unique_ptr<gpu::Device>> device =
      config.hbm_device == "host" ? gpu::CreateHostDevice({.memory_bytes = config.hbm_bytes})
                                  : gpu::OpenCudaDevice(0);
  if (!device.ok()) return Prefixed(device.status(), "HBM tier device " + config.hbm_device);
  absl::StatusOr<std::unique_ptr<tiering::HbmTier>> tier = tiering::HbmTier::Create(
      std::shared_ptr<gpu::Device>(*std::move(device)), {.capacity_bytes = config.hbm_bytes});
  if (!tier.ok()) return Prefixed(tier.status(), "HBM tier");
  return std::shared_ptr<tiering::HbmTier>(*std::move(tier));
}

// The bearer token in cluster_token_file (surrounding whitespace dropped); "" without a
// file. What the node's pushes to other nodes (hand-over, hot replicas) carry.
absl::StatusOr<std::string> ClusterToken(const std::string& path) {
  if (path.empty()) return std::string();
  STRATA_ASSIGN_OR_RETURN(const std::string text, base::ReadFileToString(path, 4096));
  std::string token(absl::StripAsciiWhitespace(text));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cluster_token_file ", path, " holds no token"));
  }
  return token;
}

core::NodeEngineOptions EngineOptions(const NodeConfig& config, uint64_t dram_bytes) {
  core::NodeEngineOptions options;
  options.dram_bytes = dram_bytes;
  options.dram_granule_bytes = kDramGranuleBytes;
  options.dram_try_hugetlb = config.dram_hugetlb;
  options.dram_populate = config.dram_populate;
  // The same-host channel shares the arena's file: anonymous memory has none.
  options.dram_backing = config.same_host && config.dram_backing == tiering::DramBacking::kAuto
                             ? tiering::DramBacking::kMemfd
                             : config.dram_backing;
  options.max_blob_bytes = config.max_blob_bytes;
  options.default_lease_ttl = config.lease_ttl;
  options.max_lease_ttl = config.max_lease_ttl;
  options.put_ttl = config.put_ttl;
  options.max_leases = config.max_leases;
  options.max_tenant_leases = config.max_tenant_leases;
  options.max_pending_puts = config.max_pending_puts;
  options.max_pending_metadata_bytes = config.max_pending_metadata_bytes;
  options.max_pending_share = config.max_pending_share;
  options.max_pending_tenant_share = config.max_pending_tenant_share;
  options.reap_interval = config.reap_interval;
  options.dram_policy = config.dram_policy;
  options.ssd_policy = config.ssd_policy;
  options.admission = config.admission;
  options.dram_high_watermark = config.dram_high_watermark;
  options.dram_low_watermark = config.dram_low_watermark;
  options.text_bytes = config.text_bytes;
  options.hbm_admit_reads = config.hbm_admit_reads;
  options.mrc_sampled_keys = config.mrc_sampled_keys;
  options.mrc_curve_points = config.mrc_curve_points;
  options.rebuild_task_ttl = config.rebuild_task_ttl;
  options.max_rebuild_attempts = config.max_rebuild_attempts;
  // Hot blobs are reported only where a replicator takes them (a cluster node, replicas on).
  if (!config.etcd_endpoints.empty() && config.cluster_hot_replicas >= 2) {
    options.hot_reads = config.cluster_hot_reads;
  }
  return options;
}

// One line per tier and one for the metadata, as the node starts.
void LogTiers(const NodeConfig& config, const core::NodeEngine& engine) {
  LOG(INFO) << "DRAM tier: " << engine.dram().capacity() << " bytes ("
            << tiering::HugePageModeName(engine.dram().huge_page_mode()) << "), policy "
            << config.dram_policy << ", background demotion from " << config.dram_high_watermark
            << " down to " << config.dram_low_watermark << " of it";
  if (config.ssd_bytes == 0) {
    LOG(INFO) << "SSD tier: none (ssd_bytes = 0): DRAM pressure drops bytes to TEXT";
  } else {
    LOG(INFO) << "SSD tier: " << config.SsdPath() << ", " << config.ssd_bytes << " bytes ("
              << (config.ssd_preallocate ? "preallocated" : "sparse") << "), io_uring O_DIRECT"
              << " queue depth " << config.ssd_queue_depth << ", policy " << config.ssd_policy
              << ", admission " << config.admission;
  }
  if (const tiering::HbmTier* hbm = engine.hbm(); hbm != nullptr) {
    LOG(INFO) << "HBM tier: " << hbm->capacity() << " bytes on " << hbm->device().name()
              << ", copies of blobs read " << config.hbm_admit_reads << " times";
  }
  if (config.text_bytes == 0) {
    LOG(INFO) << "TEXT tier: none (text_bytes = 0): a blob whose bytes are dropped is forgotten";
  } else {
    LOG(INFO) << "TEXT tier: " << config.text_bytes << " bytes of tokens, rebuild tasks live "
              << config.rebuild_task_ttl << " (at most " << config.max_rebuild_attempts
              << " hand-outs)";
  }
  if (config.meta) LOG(INFO) << "metadata: RocksDB at " << config.MetaDir();
}

void LogRestore(const core::RestoreReport& r, absl::Duration since_start) {
  if (r.restored + r.dropped + r.corrupt == 0) {
    LOG(INFO) << "restart: the metadata store holds no blobs (a first start)";
    return;
  }
  LOG(INFO) << "restart: " << r.restored << " blobs back in the index (" << r.on_ssd << " on SSD, "
            << r.text << " as TEXT), " << r.dropped << " records dropped, " << r.corrupt
            << " corrupt records skipped; metadata read in " << r.load_time << ", index rebuilt in "
            << r.ready_time << ", " << since_start << " since the node started";
}

struct TlsFiles {
  std::string cert_chain, private_key, client_ca;
};

// The PEM file at `path` ("" for an empty path), for option `key`.
absl::StatusOr<std::string> ReadPemFile(const char* key, const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> text = base::ReadFileToString(path, kMaxPemBytes);
  if (!text.ok()) return Prefixed(text.status(), key);
  if (text->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(key, " ", path, ": not a PEM file"));
  }
  return text;
}

absl::StatusOr<TlsFiles> ReadTlsFiles(const NodeConfig& config) {
  TlsFiles tls;
  STRATA_ASSIGN_OR_RETURN(tls.cert_chain, ReadPemFile("tls_cert_file", config.tls_cert_file));
  STRATA_ASSIGN_OR_RETURN(tls.private_key, ReadPemFile("tls_key_file", config.tls_key_file));
  STRATA_ASSIGN_OR_RETURN(tls.client_ca,
                          ReadPemFile("tls_client_ca_file", config.tls_client_ca_file));
  if (!tls.cert_chain.empty()) {
    LOG(INFO) << "gRPC: TLS (" << config.tls_cert_file << ")"
              << (tls.client_ca.empty() ? ""
                                        : absl::StrCat(", client certificates required, signed by ",
                                                       config.tls_client_ca_file));
  } else if (!config.tenants_file.empty() && !IsLoopbackAddress(config.grpc_listen)) {
    LOG(WARNING) << "gRPC: plain text on " << config.grpc_listen
                 << ", not a loopback address: bearer tokens cross the network readable; set "
                    "tls_cert_file and tls_key_file";
  }
  return tls;
}

// One line on who may call the node.
void LogAuthentication(const NodeConfig& config, const auth::TenantTable* tenants) {
  if (tenants == nullptr) {
    LOG(WARNING) << "authentication: OFF (no tenants_file): any process that reaches "
                 << config.grpc_listen << " or " << config.dataplane_listen
                 << " may read, write and delete every namespace"
                 << (config.insecure ? " (insecure = true)" : "");
    return;
  }
  size_t admins = 0;
  for (const auth::Tenant& tenant : tenants->tenants()) admins += tenant.role == auth::Role::kAdmin;
  LOG(INFO) << "authentication: " << tenants->tenants().size() << " tenants (" << admins
            << " admin) from " << config.tenants_file
            << "; every call needs a tenant's bearer token, data-plane connections a credential "
               "from Store.OpenDataPlane (valid "
            << config.dataplane_credential_ttl << ")";
}

// The tenants' quotas, by the label they apply to (the tenant's name).
core::TenantQuotas QuotasOf(const auth::TenantTable* tenants) {
  core::TenantQuotas quotas;
  if (tenants == nullptr) return quotas;
  for (const auth::Tenant& tenant : tenants->tenants()) {
    if (tenant.dram_quota_bytes == 0 && tenant.ssd_quota_bytes == 0) continue;
    quotas[tenant.name] = core::TenantQuota{.dram_bytes = tenant.dram_quota_bytes,
                                            .ssd_bytes = tenant.ssd_quota_bytes};
    LOG(INFO) << "quota of tenant label " << tenant.name << ": DRAM "
              << (tenant.dram_quota_bytes == 0
                      ? std::string("none")
                      : base::FormatBytes(static_cast<double>(tenant.dram_quota_bytes)))
              << ", SSD "
              << (tenant.ssd_quota_bytes == 0
                      ? std::string("none")
                      : base::FormatBytes(static_cast<double>(tenant.ssd_quota_bytes)));
  }
  return quotas;
}

// The data plane's check of a connection's credential; null (admit all) on an open node.
transport::PeerAuthenticator DataPlaneAuthenticator(
    std::shared_ptr<const auth::DataPlaneCredentials> credentials) {
  if (credentials == nullptr) return nullptr;
  return [credentials](absl::Span<const uint8_t> credential) {
    return credentials->Verify(credential, absl::Now());
  };
}

// A data-plane connection's namespaces, from its tenant; null (all) on an open node.
std::function<core::AccessScope(std::string_view)> DataPlaneScopes(
    std::shared_ptr<const auth::TenantTable> tenants) {
  if (tenants == nullptr) return nullptr;
  return [tenants](std::string_view name) {
    const auth::Tenant* tenant = tenants->Find(name);
    return tenant == nullptr ? core::AccessScope::Of({})
                             : core::AccessScope::Of(tenant->namespaces);
  };
}

}  // namespace

NodeServer::NodeServer(DataDirLock lock, std::shared_ptr<meta::RocksMetaStore> meta,
                       std::shared_ptr<tiering::io::SsdTier> ssd,
                       std::unique_ptr<core::NodeEngine> engine, uint64_t dram_bytes)
    : lock_(std::move(lock)),
      meta_(std::move(meta)),
      ssd_(std::move(ssd)),
      engine_(std::move(engine)),
      dram_bytes_(dram_bytes) {}

uint64_t NodeServer::ssd_bytes() const { return ssd_ == nullptr ? 0 : ssd_->capacity(); }

absl::StatusOr<std::unique_ptr<NodeServer>> NodeServer::Start(const NodeConfig& given) {
  const absl::Time started = absl::Now();
  STRATA_RETURN_IF_ERROR(given.Validate());
  STRATA_RETURN_IF_ERROR(given.CheckExposure());
  // 0. Who may call: the tenants file, read before anything is opened or bound.
  std::shared_ptr<const auth::TenantTable> tenants;
  std::shared_ptr<const auth::DataPlaneCredentials> credentials;
  if (!given.tenants_file.empty()) {
    STRATA_ASSIGN_OR_RETURN(auth::TenantTable table, auth::TenantTable::Load(given.tenants_file));
    tenants = std::make_shared<const auth::TenantTable>(std::move(table));
    STRATA_ASSIGN_OR_RETURN(auth::DataPlaneCredentials issuer,
                            auth::DataPlaneCredentials::Create(given.dataplane_credential_ttl));
    credentials = std::make_shared<const auth::DataPlaneCredentials>(std::move(issuer));
  }
  LogAuthentication(given, tenants.get());
  STRATA_ASSIGN_OR_RETURN(const TlsFiles tls, ReadTlsFiles(given));
  std::string grpc_host;
  int requested_port = 0;
  STRATA_RETURN_IF_ERROR(ParseListenAddress(given.grpc_listen, &grpc_host, &requested_port));

  // 1. One node per data directory.
  STRATA_ASSIGN_OR_RETURN(DataDirLock lock, DataDirLock::Acquire(given.data_dir));
  // From here on the data directory is absolute (so are the paths derived from it).
  NodeConfig config = given;
  config.data_dir = lock.dir();

  // 2., 3. The metadata store and the SSD tier, under the lock (the DRAM size checked first).
  STRATA_ASSIGN_OR_RETURN(const uint64_t dram_bytes, ChooseDramBytes(config));
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<meta::RocksMetaStore> meta, OpenMetaStore(config));
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<tiering::io::SsdTier> ssd, OpenSsdTier(config));

  // 4. The engine and its DRAM tier; it reloads the index from the metadata store.
  core::NodeEngineOptions engine_options = EngineOptions(config, dram_bytes);
  engine_options.ssd = ssd;
  STRATA_ASSIGN_OR_RETURN(engine_options.hbm, OpenHbmTier(config));
  engine_options.meta = meta;
  engine_options.tenant_quotas = QuotasOf(tenants.get());
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<core::NodeEngine> engine,
                          core::NodeEngine::Create(engine_options));
  std::unique_ptr<NodeServer> server(new NodeServer(std::move(lock), std::move(meta),
                                                    std::move(ssd), std::move(engine), dram_bytes));
  LogTiers(config, *server->engine_);
  if (server->meta_ != nullptr) LogRestore(server->engine_->restored(), absl::Now() - started);
  // SSD reads land straight in the arena; with the arena's pages resident anyway (hugetlb,
  // or populated), register it with io_uring once (best effort: without it I/O still
  // works). No I/O is in flight yet: nothing is in DRAM to demote, nothing served.
  if (server->ssd_ != nullptr &&
      (config.dram_populate ||
       server->engine_->dram().huge_page_mode() == tiering::HugePageMode::kHugeTlb)) {
    const absl::Span<std::byte> arena(server->engine_->dram().base(),
                                      server->engine_->dram().mapped_bytes());
    const absl::Status registered = server->ssd_->RegisterBuffers({&arena, 1});
    if (registered.ok()) LOG(INFO) << "SSD tier: DRAM arena registered with io_uring";
  }

  // 5. The data plane: UCX on dataplane_listen (transports from UCX_TLS), the arena
  //    registered; clients are told the bound address.
  STRATA_ASSIGN_OR_RETURN(
      server->data_plane_,
      dataplane::DataPlaneServer::Start(
          server->engine_.get(), {.listen_address = config.dataplane_listen,
                                  .max_connections = config.dataplane_max_connections,
                                  .handshake_timeout = config.dataplane_handshake_timeout,
                                  .transfer_timeout = config.dataplane_transfer_timeout,
                                  .max_puts_per_peer = config.dataplane_max_puts_per_connection,
                                  .max_put_metadata_bytes = config.dataplane_max_put_metadata_bytes,
                                  .authenticate = DataPlaneAuthenticator(credentials),
                                  .scope_of = DataPlaneScopes(tenants)}));
  server->data_plane_address_ = server->data_plane_->address();
  //    The same-host channel, where the arena can be shared safely (else UCX only).
  if (config.same_host) {
    absl::StatusOr<std::unique_ptr<dataplane::SameHostServer>> same_host =
        dataplane::SameHostServer::Start(server->engine_.get(),
                                         {.socket = config.same_host_socket,
                                          .staging_bytes = config.same_host_staging_bytes,
                                          .max_clients = config.same_host_max_clients,
                                          .authenticate = DataPlaneAuthenticator(credentials),
                                          .scope_of = DataPlaneScopes(tenants),
                                          .share_hbm = config.same_host_share_hbm});
    if (same_host.ok()) {
      server->same_host_ = *std::move(same_host);
    } else if (same_host.status().code() == absl::StatusCode::kFailedPrecondition) {
      LOG(WARNING) << "no same-host channel: " << same_host.status().message();
    } else {
      return same_host.status();
    }
  }

  // 6. gRPC.
  STRATA_ASSIGN_OR_RETURN(server->rpc_server_,
                          rpc::RpcServer::Start(server->engine_.get(),
                                                {.listen_address = config.grpc_listen,
                                                 .data_plane_address = server->data_plane_address_,
                                                 .same_host_socket = server->same_host_socket(),
                                                 .version = "",
                                                 .tenants = tenants,
                                                 .credentials = credentials,
                                                 .tls_cert_chain_pem = tls.cert_chain,
                                                 .tls_private_key_pem = tls.private_key,
                                                 .tls_client_ca_pem = tls.client_ca,
                                                 .leave = LeaveHook(server.get(), config)}));
  server->grpc_port_ = server->rpc_server_->port();
  const bool bracket = grpc_host.find(':') != std::string::npos;
  server->grpc_address_ =
      absl::StrCat(bracket ? "[" : "", grpc_host, bracket ? "]" : "", ":", server->grpc_port_);
  // 7. The HTTP endpoint, last: everything it reports exists.
  if (!config.http_listen.empty()) {
    NodeServer* self = server.get();
    STRATA_ASSIGN_OR_RETURN(
        server->http_server_,
        http::HttpServer::Start({.listen_address = config.http_listen,
                                 .max_connections = static_cast<int>(config.http_max_connections),
                                 .max_connections_per_client = static_cast<int>(
                                     std::max<uint32_t>(1, config.http_max_connections / 4))},
                                {.snapshot = [self] { return self->Snapshot(); },
                                 .readiness = [self] { return self->Readiness(); },
                                 .cluster = [self] { return self->ClusterJson(); }}));
    server->http_address_ = server->http_server_->address();
    if (!IsLoopbackAddress(config.http_listen)) {
      LOG(WARNING) << "HTTP endpoint listens on " << server->http_address_
                   << ", not a loopback address (insecure = true): it has no authentication";
    }
  }
  // 8. Cluster membership, once every address is known.
  if (!config.etcd_endpoints.empty()) {
    STRATA_RETURN_IF_ERROR(server->StartRegistration(config));
  }
  server->started_.store(true, std::memory_order_release);
  LOG(INFO) << "node started: grpc " << server->grpc_address_ << ", data plane "
            << server->data_plane_address_ << ", http "
            << (server->http_address_.empty() ? "off" : server->http_address_) << ", DRAM tier "
            << dram_bytes << " bytes ("
            << tiering::HugePageModeName(server->engine_->dram().huge_page_mode()) << "), SSD tier "
            << server->ssd_bytes() << " bytes, data dir " << server->data_dir() << "; ready "
            << absl::Now() - started << " after start";
  return server;
}

absl::StatusOr<std::string> NodeServer::ClusterJson() const {
  // etcd_ and cluster_name_ are set before started_ (release) and never change after.
  if (!started_.load(std::memory_order_acquire) || etcd_ == nullptr) {
    return absl::NotFoundError("this node is in no cluster (no etcd_endpoints)");
  }
  absl::StatusOr<cluster::MembersRead> read = cluster::ReadMembers(*etcd_, cluster_name_);
  if (!read.ok()) {
    return absl::UnavailableError(absl::StrCat("etcd did not answer: ", read.status().message()));
  }
  nlohmann::json out;
  out["cluster"] = cluster_name_;
  out["self"] = node_id_;
  out["registered"] = registered();
  out["etcd_revision"] = read->revision;
  out["undecodable"] = read->undecodable;
  nlohmann::json& nodes = out["nodes"] = nlohmann::json::array();
  for (const auto& [key, record] : read->nodes) {
    nodes.push_back(nlohmann::json::parse(cluster::EncodeNodeRecord(record)));
  }
  return out.dump(2) + "\n";
}

std::function<absl::StatusOr<rpc::LeaveReport>(absl::Duration, uint64_t)> NodeServer::LeaveHook(
    NodeServer* server, const NodeConfig& config) {
  if (config.etcd_endpoints.empty()) return nullptr;
  return [server, token_file = config.cluster_token_file](
             absl::Duration wait, uint64_t bytes) -> absl::StatusOr<rpc::LeaveReport> {
    STRATA_ASSIGN_OR_RETURN(const std::string token, ClusterToken(token_file));
    STRATA_ASSIGN_OR_RETURN(const peer::HandOverReport r, server->Leave(wait, bytes, token));
    return rpc::LeaveReport{r.segments,       r.blobs,         r.bytes,
                            r.blobs_existing, r.cold_segments, r.over_budget_segments,
                            r.text_blobs,     r.failures,      r.held_bytes};
  };
}

absl::StatusOr<peer::HandOverReport> NodeServer::Leave(absl::Duration wait,
                                                       uint64_t hand_over_bytes,
                                                       const std::string& token) {
  if (registration_ == nullptr) {
    return absl::FailedPreconditionError("this node is in no cluster");
  }
  const absl::Time deadline = absl::Now() + wait;
  STRATA_RETURN_IF_ERROR(Drain(wait));  // registers as draining first
  STRATA_ASSIGN_OR_RETURN(const cluster::MembersRead members,
                          cluster::ReadMembers(*etcd_, cluster_name_));
  std::vector<cluster::NodeRecord> records;
  for (const auto& [key, record] : members.nodes) records.push_back(record);
  STRATA_ASSIGN_OR_RETURN(
      const peer::HandOverReport report,
      peer::HandOverSegments(*engine_, records,
                             {.self_id = node_id_,
                              .max_bytes = hand_over_bytes,
                              .token = token,
                              .deadline = std::max(deadline, absl::Now() + absl::Minutes(10))}));
  if (absl::Status left = registration_->Stop(); !left.ok()) {
    LOG(WARNING) << "leave: " << left << " (the record expires with its lease)";
  }
  LOG(INFO) << "left cluster " << cluster_name_ << " after handing over " << report.segments
            << " segment(s), " << report.bytes << " bytes";
  return report;
}

absl::Status NodeServer::StartRegistration(const NodeConfig& config) {
  cluster_name_ = config.cluster;
  STRATA_ASSIGN_OR_RETURN(node_id_, cluster::LoadOrCreateNodeId(data_dir()));
  STRATA_ASSIGN_OR_RETURN(
      etcd_, cluster::EtcdClient::Create(
                 {.endpoints = absl::StrSplit(config.etcd_endpoints, ',', absl::SkipEmpty())}));
  // Where others reach this node: the bound address, its host replaced by advertise_host.
  auto advertised = [&](const std::string& bound) {
    if (bound.empty() || config.advertise_host.empty()) return bound;
    const bool v6 = config.advertise_host.find(':') != std::string::npos;
    return absl::StrCat(v6 ? "[" : "", config.advertise_host, v6 ? "]" : "",
                        bound.substr(bound.rfind(':')));
  };
  // Joining when the cluster already serves (its segments' previous owners are elsewhere);
  // serving when this node is among the first, or etcd does not answer yet.
  cluster::NodeState state = cluster::NodeState::kServing;
  if (config.cluster_join_window > absl::ZeroDuration()) {
    absl::StatusOr<cluster::MembersRead> members = cluster::ReadMembers(*etcd_, config.cluster);
    if (members.ok()) {
      for (const auto& [key, other] : members->nodes) {
        if (other.id != node_id_ && other.state == cluster::NodeState::kServing) {
          state = cluster::NodeState::kJoining;
        }
      }
    }
  }
  cluster::NodeRecord record{.id = node_id_,
                             .grpc_address = advertised(grpc_address_),
                             .dataplane_address = advertised(data_plane_address_),
                             .http_address = advertised(http_address_),
                             .state = state,
                             .version = STRATA_VERSION,
                             .dram_bytes = dram_bytes_,
                             .ssd_bytes = ssd_bytes(),
                             .started_ms = absl::ToUnixMillis(absl::Now())};
  STRATA_ASSIGN_OR_RETURN(
      registration_, cluster::Registration::Start(etcd_.get(), config.cluster, std::move(record),
                                                  {.lease_ttl = config.cluster_lease_ttl,
                                                   .joining_for = config.cluster_join_window}));
  const bool hot_replicas = config.cluster_hot_replicas >= 2 && config.cluster_hot_reads > 0;
  if (hot_replicas || config.cluster_text_replicas >= 2) {
    // The node's own view of the members: whom its hot blobs and token text go to.
    STRATA_ASSIGN_OR_RETURN(membership_, cluster::MembershipView::Start(etcd_.get(), config.cluster,
                                                                        /*need_etcd=*/false));
    STRATA_ASSIGN_OR_RETURN(const std::string token, ClusterToken(config.cluster_token_file));
    auto members = [view = membership_.get()] { return view->Nodes(); };
    if (hot_replicas) {
      hot_replicator_ = std::make_unique<peer::HotReplicator>(
          engine_.get(), members,
          peer::HotReplicatorOptions{
              .self_id = node_id_, .copies = config.cluster_hot_replicas, .token = token});
    }
    if (config.cluster_text_replicas >= 2) {
      text_repairer_ = std::make_unique<peer::TextRepairer>(
          engine_.get(), members,
          peer::TextRepairOptions{
              .self_id = node_id_, .replicas = config.cluster_text_replicas, .token = token});
    }
  }
  LOG(INFO) << "cluster " << config.cluster << ": registering as node " << node_id_ << " in etcd "
            << config.etcd_endpoints << " as " << cluster::NodeStateName(state) << " (lease "
            << absl::FormatDuration(config.cluster_lease_ttl) << ")";
  return absl::OkStatus();
}

bool NodeServer::registered() const {
  return registration_ != nullptr && registration_->registered();
}

http::NodeSnapshot NodeServer::Snapshot() const {
  http::NodeSnapshot snapshot;
  snapshot.tiers = engine_->Tiers();
  if (data_plane_ != nullptr) snapshot.data_plane = data_plane_->stats();
  if (same_host_ != nullptr) snapshot.same_host = same_host_->stats();
  if (rpc_server_ != nullptr) snapshot.rpc = rpc_server_->Metrics();
  // The cluster parts are made while the node starts (after the HTTP endpoint): read them
  // once it has.
  if (!started_.load(std::memory_order_acquire)) return snapshot;
  http::ClusterSnapshot& c = snapshot.cluster;
  c.registered = registered();
  if (membership_ != nullptr) {
    for (const cluster::NodeRecord& node : membership_->Nodes()) {
      switch (node.state) {
        case cluster::NodeState::kServing:
          ++c.serving;
          break;
        case cluster::NodeState::kJoining:
          ++c.joining;
          break;
        case cluster::NodeState::kDraining:
          ++c.draining;
          break;
      }
    }
  }
  if (hot_replicator_ != nullptr) {
    const peer::HotReplicatorStats hot = hot_replicator_->stats();
    c.hot_blobs = hot.blobs;
    c.hot_pushed_blobs = hot.pushed_blobs;
    c.hot_bytes = hot.bytes;
    c.hot_failures = hot.failures;
  }
  if (text_repairer_ != nullptr) {
    const peer::TextRepairStats repair = text_repairer_->stats();
    c.text_repairs = repair.passes;
    c.text_repaired_segments = repair.segments;
    c.text_repair_puts = repair.text_puts;
    c.text_repair_failures = repair.failures;
  }
  return snapshot;
}

absl::Status NodeServer::Readiness() const {
  if (stopping_.load(std::memory_order_acquire)) return absl::UnavailableError("shutting down");
  if (!started_.load(std::memory_order_acquire)) return absl::UnavailableError("starting");
  if (engine_->draining()) return absl::UnavailableError("draining");
  return absl::OkStatus();
}

std::string NodeServer::same_host_socket() const {
  return same_host_ == nullptr ? std::string() : same_host_->socket();
}

NodeServer::~NodeServer() { Shutdown(absl::ZeroDuration()); }

absl::Status NodeServer::Drain(absl::Duration timeout) {
  LOG(INFO) << "draining: puts refused; waiting up to " << timeout
            << " for pending puts, held leases and transfers";
  const absl::Time deadline = absl::Now() + timeout;
  // Clients and nodes see the node leaving before its puts are refused.
  if (registration_ != nullptr) registration_->SetState(cluster::NodeState::kDraining);
  absl::Status drained = engine_->Drain(timeout);
  // The engine is quiet once no HeldSpan is alive; the data plane's last replies (a
  // FETCH_DONE after its last range) may still be on their way.
  if (drained.ok()) drained = data_plane_->WaitIdle(deadline - absl::Now());
  if (drained.ok()) {
    LOG(INFO) << "drained";
  } else {
    LOG(WARNING) << drained;
  }
  return drained;
}

void NodeServer::Shutdown(absl::Duration grace) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  shut_down_ = true;
  stopping_.store(true, std::memory_order_release);
  // The HTTP endpoint first: no scrape reads a part being stopped.
  if (http_server_ != nullptr) http_server_->Stop();
  // No more pushes to other nodes (an in-flight one finishes), then out of the cluster:
  // every view drops the node at once (the lease revoked).
  hot_replicator_.reset();
  text_repairer_.reset();
  if (registration_ != nullptr) registration_->Stop().IgnoreError();
  // Calls still running get up to `grace`; then gRPC stops at once (RpcServer::Shutdown).
  if (rpc_server_ != nullptr) rpc_server_->Shutdown(grace);
  // After gRPC (no Read can grant a lease any more), before the engine goes: transfers
  // still in flight end CANCELLED and release their HeldSpans.
  if (same_host_ != nullptr) same_host_->Stop();
  if (data_plane_ != nullptr) data_plane_->Stop();
}

}  // namespace strata::store::node
