#include "strata/store/rpc/rpc_metrics.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/string_view.h"

#include "grpcpp/support/server_interceptor.h"

namespace strata::store::rpc {
namespace {

std::string_view WithoutLeadingSlash(const char* method) {
  std::string_view name = method == nullptr ? std::string_view("unknown") : method;
  if (!name.empty() && name.front() == '/') name.remove_prefix(1);
  return name;
}

// Times one call: created when gRPC starts the call, records at PRE_SEND_STATUS (or, when
// the call ends without sending a status, as CANCELLED when destroyed).
class TimingInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TimingInterceptor(RpcMetrics::Method* method)
      : method_(method), start_(std::chrono::steady_clock::now()) {}

  ~TimingInterceptor() override {
    if (!recorded_) method_->Record(static_cast<int>(grpc::StatusCode::CANCELLED), Elapsed());
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS) &&
        !recorded_) {
      recorded_ = true;
      method_->Record(static_cast<int>(methods->GetSendStatus().error_code()), Elapsed());
    }
    methods->Proceed();
  }

 private:
  absl::Duration Elapsed() const {
    return absl::FromChrono(std::chrono::steady_clock::now() - start_);
  }

  RpcMetrics::Method* const method_;
  const std::chrono::steady_clock::time_point start_;
  // One call's hooks run one after another, never concurrently.
  bool recorded_ = false;
};

class TimingInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit TimingInterceptorFactory(RpcMetrics* metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new TimingInterceptor(metrics_->FindOrAdd(WithoutLeadingSlash(info->method())));
  }

 private:
  RpcMetrics* const metrics_;
};

}  // namespace

void RpcMetrics::Method::Record(int code, absl::Duration elapsed) {
  if (code < 0 || code >= kGrpcStatusCodes) code = static_cast<int>(grpc::StatusCode::UNKNOWN);
  calls_by_code[static_cast<size_t>(code)].fetch_add(1, std::memory_order_relaxed);
  latency.Record(elapsed);
}

RpcMetrics::Method* RpcMetrics::FindOrAdd(std::string_view method) {
  const absl::string_view key(method.data(), method.size());
  {
    // Abseil's string hash is transparent: no std::string is built for a known method.
    absl::ReaderMutexLock lock(&mu_);
    auto it = methods_.find(key);
    if (it != methods_.end()) return &it->second;
  }
  absl::MutexLock lock(&mu_);
  return &methods_.try_emplace(std::string(key)).first->second;
}

void RpcMetrics::Record(std::string_view method, int code, absl::Duration latency) {
  FindOrAdd(method)->Record(code, latency);
}

RpcMetricsSnapshot RpcMetrics::Snapshot() const {
  RpcMetricsSnapshot out;
  {
    absl::ReaderMutexLock lock(&mu_);
    out.methods.reserve(methods_.size());
    for (const auto& [name, method] : methods_) {
      RpcMethodStats stats;
      stats.method = name;
      for (int c = 0; c < kGrpcStatusCodes; ++c) {
        stats.calls_by_code[static_cast<size_t>(c)] =
            method.calls_by_code[static_cast<size_t>(c)].load(std::memory_order_relaxed);
      }
      stats.latency = method.latency.Snapshot();
      out.methods.push_back(std::move(stats));
    }
  }
  std::sort(out.methods.begin(), out.methods.end(),
            [](const RpcMethodStats& a, const RpcMethodStats& b) { return a.method < b.method; });
  return out;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcMetrics::MakeInterceptorFactory() {
  return std::make_unique<TimingInterceptorFactory>(this);
}

}  // namespace strata::store::rpc
