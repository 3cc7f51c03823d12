#include "strata/store/rpc/rpc_server.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/server_interceptor.h"
#include "strata/proto/grpc_limits.h"
#include "strata/store/rpc/admin_service.h"
#include "strata/store/rpc/rpc_metrics.h"
#include "strata/store/rpc/store_service.h"

namespace strata::store::rpc {

absl::StatusOr<std::unique_ptr<RpcServer>> RpcServer::Start(core::NodeEngine* engine,
                                                            const RpcServerOptions& options) {
  std::unique_ptr<RpcServer> server(new RpcServer());
  server->store_service_ = std::make_unique<StoreService>(
      engine, ServiceOptions{.data_plane_address = options.data_plane_address,
                             .same_host_socket = options.same_host_socket,
                             .version = options.version,
                             .tenants = options.tenants,
                             .credentials = options.credentials});
  server->admin_service_ = std::make_unique<AdminService>(engine, options.tenants);
  server->admin_service_->set_leave(options.leave);
  server->metrics_ = std::make_unique<RpcMetrics>();
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tls_cert_chain_pem.empty()) {
    grpc::SslServerCredentialsOptions tls(
        options.tls_client_ca_pem.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    tls.pem_root_certs = options.tls_client_ca_pem;
    tls.pem_key_cert_pairs.push_back({options.tls_private_key_pem, options.tls_cert_chain_pem});
    credentials = grpc::SslServerCredentials(tls);
  }
  builder.AddListeningPort(options.listen_address, credentials, &server->port_);
  // gRPC sets SO_REUSEPORT by default, which would let a second node bind the same port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  proto::ApplyMessageLimits(&builder);
  {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
    creators.push_back(server->metrics_->MakeInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(creators));
  }
  builder.RegisterService(server->store_service_.get());
  builder.RegisterService(server->admin_service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    server->server_.reset();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on grpc_listen = ", options.listen_address,
                     " (address in use, or not an address of "
                     "this host?)"));
  }
  return server;
}

RpcServer::~RpcServer() { Shutdown(absl::ZeroDuration()); }

core::RpcMetricsSnapshot RpcServer::Metrics() const { return metrics_->Snapshot(); }

void RpcServer::Shutdown(absl::Duration grace) {
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  const absl::Time deadline = absl::Now() + grace;
  while (store_service_->in_flight() + admin_service_->in_flight() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  server_->Shutdown(absl::ToChronoTime(absl::Now()));
  server_->Wait();
  LOG(INFO) << "gRPC server stopped";
}

}  // namespace strata::store::rpc
