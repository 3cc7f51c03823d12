#include "strata/store/node/node_server.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"
#include "strata/base/status_macros.h"
#include "strata/proto/grpc_limits.h"
#include "strata/store/dataplane/data_plane_server.h"
#include "strata/store/node/dram_sizing.h"
#include "strata/store/rpc/admin_service.h"
#include "strata/store/rpc/store_service.h"

namespace strata::store::node {
namespace {

constexpr uint64_t kDramGranuleBytes = uint64_t{64} << 10;

// config.dram_bytes, or the default from free memory; rounded down to the granule.
uint64_t ChooseDramBytes(const NodeConfig& config) {
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
  }
  return bytes / kDramGranuleBytes * kDramGranuleBytes;
}

core::NodeEngineOptions EngineOptions(const NodeConfig& config, uint64_t dram_bytes) {
  core::NodeEngineOptions options;
  options.dram_bytes = dram_bytes;
  options.dram_granule_bytes = kDramGranuleBytes;
  options.dram_try_hugetlb = config.dram_hugetlb;
  options.dram_populate = config.dram_populate;
  options.max_blob_bytes = config.max_blob_bytes;
  options.default_lease_ttl = config.lease_ttl;
  options.max_lease_ttl = config.max_lease_ttl;
  options.put_ttl = config.put_ttl;
  options.reap_interval = config.reap_interval;
  return options;
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

NodeServer::NodeServer(DataDirLock lock, std::unique_ptr<core::NodeEngine> engine,
                       uint64_t dram_bytes)
    : lock_(std::move(lock)), engine_(std::move(engine)), dram_bytes_(dram_bytes) {}

absl::StatusOr<std::unique_ptr<NodeServer>> NodeServer::Start(const NodeConfig& config) {
  STRATA_RETURN_IF_ERROR(config.Validate());
  std::string grpc_host;
  int requested_port = 0;
  STRATA_RETURN_IF_ERROR(ParseListenAddress(config.grpc_listen, &grpc_host, &requested_port));

  // 1. One node per data directory.
  STRATA_ASSIGN_OR_RETURN(DataDirLock lock, DataDirLock::Acquire(config.data_dir));

  // 2. The engine and its DRAM tier.
  const uint64_t dram_bytes = ChooseDramBytes(config);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<core::NodeEngine> engine,
                          core::NodeEngine::Create(EngineOptions(config, dram_bytes)));
  std::unique_ptr<NodeServer> server(
      new NodeServer(std::move(lock), std::move(engine), dram_bytes));

  // 3. The data plane: UCX on dataplane_listen (transports from UCX_TLS), the arena
  //    registered; clients are told the bound address.
  STRATA_ASSIGN_OR_RETURN(server->data_plane_,
                          dataplane::DataPlaneServer::Start(
                              server->engine_.get(), {.listen_address = config.dataplane_listen}));
  server->data_plane_address_ = server->data_plane_->address();

  // 4. gRPC.
  server->store_service_ = std::make_unique<rpc::StoreService>(
      server->engine_.get(),
      rpc::ServiceOptions{.data_plane_address = server->data_plane_address_, .version = ""});
  server->admin_service_ = std::make_unique<rpc::AdminService>(server->engine_.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.grpc_listen, grpc::InsecureServerCredentials(),
                           &server->grpc_port_);
  // gRPC sets SO_REUSEPORT by default, which would let a second node bind the same port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  proto::ApplyMessageLimits(&builder);
  builder.RegisterService(server->store_service_.get());
  builder.RegisterService(server->admin_service_.get());
  server->grpc_server_ = builder.BuildAndStart();
  if (server->grpc_server_ == nullptr || server->grpc_port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on grpc_listen = ", config.grpc_listen,
                     " (address in use, or not an address of "
                     "this host?)"));
  }
  const bool bracket = grpc_host.find(':') != std::string::npos;
  server->grpc_address_ =
      absl::StrCat(bracket ? "[" : "", grpc_host, bracket ? "]" : "", ":", server->grpc_port_);
  if (!IsLoopbackHost(grpc_host)) {
    LOG(WARNING) << "gRPC listens on " << server->grpc_address_
                 << ", not a loopback address: strata.v1 has no authentication yet";
  }
  LOG(INFO) << "node started: grpc " << server->grpc_address_ << ", data plane "
            << server->data_plane_address_ << ", DRAM tier " << dram_bytes << " bytes ("
            << tiering::HugePageModeName(server->engine_->dram().huge_page_mode()) << "), data dir "
            << server->data_dir() << "; http_listen " << config.http_listen
            << " is reserved (not served yet)";
  return server;
}

NodeServer::~NodeServer() { Shutdown(absl::ZeroDuration()); }

absl::Status NodeServer::Drain(absl::Duration timeout) {
  LOG(INFO) << "draining: puts refused; waiting up to " << timeout
            << " for pending puts, held leases and transfers";
  const absl::Time deadline = absl::Now() + timeout;
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
  if (grpc_server_ != nullptr) {
    // Calls still running get up to `grace`. gRPC's own Shutdown(deadline) would also wait
    // out the deadline for idle client connections, so the node waits for its handlers
    // itself and then shuts down at once (cancelling whatever is still running).
    const absl::Time deadline = absl::Now() + grace;
    while (store_service_->in_flight() + admin_service_->in_flight() > 0 &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    grpc_server_->Shutdown(absl::ToChronoTime(absl::Now()));
    grpc_server_->Wait();
    LOG(INFO) << "gRPC server stopped";
  }
  // After gRPC (no Read can grant a lease any more), before the engine goes: transfers
  // still in flight end CANCELLED and release their HeldSpans.
  if (data_plane_ != nullptr) data_plane_->Stop();
}

}  // namespace strata::store::node
