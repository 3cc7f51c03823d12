#include "client/lib/control_channel.h"

#include <algorithm>
#include <cstdint>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "strata/proto/grpc_limits.h"

namespace strata::client_internal {
namespace {

// The least reconnect backoff cap (the header's "Reconnecting").
constexpr int64_t kMinReconnectBackoffCapMs = 100;
// gRPC's default first reconnect backoff.
constexpr int64_t kGrpcInitialReconnectBackoffMs = 1000;

}  // namespace

ControlChannel::ControlChannel(const ClientOptions& options)
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
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(options.node, grpc::InsecureChannelCredentials(), args);
  store_ = v1::Store::NewStub(channel);
  admin_ = v1::Admin::NewStub(channel);
}

}  // namespace strata::client_internal
