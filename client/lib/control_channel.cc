#include "client/lib/control_channel.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "strata/base/read_file.h"
#include "strata/base/status_macros.h"
#include "strata/proto/grpc_limits.h"

namespace strata::client_internal {
namespace {

// The least reconnect backoff cap (the header's "Reconnecting").
constexpr int64_t kMinReconnectBackoffCapMs = 100;
// gRPC's default first reconnect backoff.
constexpr int64_t kGrpcInitialReconnectBackoffMs = 1000;
// A CA bundle, certificate chain or key larger than this is refused.
constexpr size_t kMaxPemBytes = size_t{1} << 20;

}  // namespace

absl::StatusOr<ChannelTls> LoadChannelTls(const ClientOptions& options) {
  ChannelTls tls;
  tls.enabled = options.tls;
  auto read = [](const char* field, const std::string& path, std::string* out) -> absl::Status {
    if (path.empty()) return absl::OkStatus();
    absl::StatusOr<std::string> text = base::ReadFileToString(path, kMaxPemBytes);
    if (!text.ok()) {
      return absl::Status(text.status().code(),
                          absl::StrCat(field, ": cannot read ", text.status().message()));
    }
    if (text->find("-----BEGIN ") == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": ", path, " is not a PEM file"));
    }
    *out = *std::move(text);
    return absl::OkStatus();
  };
  STRATA_RETURN_IF_ERROR(read("tls_ca_file", options.tls_ca_file, &tls.ca_pem));
  STRATA_RETURN_IF_ERROR(read("tls_cert_file", options.tls_cert_file, &tls.cert_pem));
  STRATA_RETURN_IF_ERROR(read("tls_key_file", options.tls_key_file, &tls.key_pem));
  return tls;
}

ControlChannel::ControlChannel(const ClientOptions& options, const ChannelTls& tls)
    : policy_(options.retry),
      authorization_(options.token.empty() ? "" : "Bearer " + options.token) {
  grpc::ChannelArguments args;
  proto::ApplyMessageLimits(&args);
  const int64_t cap_ms = std::clamp<int64_t>(absl::ToInt64Milliseconds(options.retry.max_backoff),
                                             kMinReconnectBackoffCapMs, INT32_MAX);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(cap_ms));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(std::min(cap_ms, kGrpcInitialReconnectBackoffMs)));
  // After a lost connection the channel reconnects only once its resolver answered again,
  // and gRPC spaces resolutions 30 s apart by default.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, static_cast<int>(cap_ms));
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls.enabled) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = tls.ca_pem;
    ssl.pem_cert_chain = tls.cert_pem;
    ssl.pem_private_key = tls.key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(options.node, credentials, args);
  store_ = v1::Store::NewStub(channel);
  admin_ = v1::Admin::NewStub(channel);
}

}  // namespace strata::client_internal
