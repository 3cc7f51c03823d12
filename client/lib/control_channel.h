// ControlChannel: the client's gRPC side — one channel to the node (with strata's message
// limits, strata/proto/grpc_limits.h), the Store and Admin stubs, the retry loop, and lease
// releases sent in the background.
//
// Call() runs one unary RPC until it succeeds, fails with a code that is not retried, or
// runs out of retries or time (retry_policy.h): each attempt gets a fresh ClientContext
// whose deadline is the call's; gRPC's status becomes an absl::Status with its code and
// message unchanged (FromGrpcStatus).
//
// TLS: with ChannelTls::enabled the channel is grpc::SslCredentials (the CA, and the
// client's certificate for mutual TLS); else plain text.
//
// Authentication: with ClientOptions::token set, every call carries the metadata
// "authorization: Bearer <token>" (on a plain-text channel: see docs/operations.md on TLS).
//
// Reconnecting: after its connection to the node broke, the channel fails RPCs at once
// (UNAVAILABLE) until a new connection is up, and it makes one only after its resolver
// answered again and its reconnect backoff passed. With gRPC's defaults (resolutions at
// least 30 s apart; backoff from 1 s growing to 120 s) a client of a node restarted on the
// same address kept failing for about 8 s after the node was back, longer after long
// outages (tests/integration/client_recovery_test.cc). So both are capped at
// RetryOptions::max_backoff (at least 100 ms): the channel tries again at least as often
// as a retrying call does.
//
// Thread-safe: every method from any thread; gRPC stubs are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "client/lib/retry_policy.h"
#include "grpcpp/client_context.h"
#include "strata/options.h"
#include "strata/proto/protocol_internal.h"
#include "strata/proto/status_convert.h"

namespace strata::client_internal {

// What the channel's TLS needs, read from ClientOptions' files (LoadChannelTls).
struct ChannelTls {
  bool enabled = false;
  std::string ca_pem;    // empty: the system's roots
  std::string cert_pem;  // this client's certificate chain (mutual TLS), or empty
  std::string key_pem;
};
// Reads options.tls_*_file. NOT_FOUND / PERMISSION_DENIED opening one, INVALID_ARGUMENT
// not PEM.
absl::StatusOr<ChannelTls> LoadChannelTls(const ClientOptions& options);

class ControlChannel {
 public:
  ControlChannel(const ClientOptions& options, const ChannelTls& tls);
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  v1::Store::Stub& store() { return *store_; }
  v1::Admin::Stub& admin() { return *admin_; }

  // Runs `method` on `stub` with retries. *attempts (if not null) receives the number of
  // attempts made.
  template <typename Stub, typename Request, typename Response>
  absl::Status Call(Stub& stub,
                    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response, absl::Time deadline, Retry retry,
                    int* attempts = nullptr);

  uint64_t rpcs() const { return rpcs_.load(std::memory_order_relaxed); }
  uint64_t retries() const { return retries_.load(std::memory_order_relaxed); }

 private:
  const RetryPolicy policy_;
  // "Bearer <token>", or empty without a token.
  const std::string authorization_;
  std::unique_ptr<v1::Store::Stub> store_;
  std::unique_ptr<v1::Admin::Stub> admin_;
  std::atomic<uint64_t> rpcs_{0};
  std::atomic<uint64_t> retries_{0};
};

template <typename Stub, typename Request, typename Response>
absl::Status ControlChannel::Call(
    Stub& stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response, absl::Time deadline, Retry retry, int* attempts) {
  absl::BitGen random;
  for (int attempt = 1;; ++attempt) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(deadline));
    if (!authorization_.empty()) context.AddMetadata("authorization", authorization_);
    response->Clear();
    rpcs_.fetch_add(1, std::memory_order_relaxed);
    absl::Status status = proto::FromGrpcStatus((stub.*method)(&context, request, response));
    if (attempts != nullptr) *attempts = attempt;
    if (status.ok()) return status;
    const absl::Duration backoff = policy_.Backoff(attempt, absl::Uniform(random, 0.0, 1.0));
    if (!policy_.ShouldRetry(retry, status, attempt, backoff, absl::Now(), deadline)) {
      return status;
    }
    retries_.fetch_add(1, std::memory_order_relaxed);
    absl::SleepFor(backoff);
  }
}

}  // namespace strata::client_internal
