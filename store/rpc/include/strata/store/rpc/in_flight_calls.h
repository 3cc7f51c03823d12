// InFlightCalls: how many RPC handlers of a service are running right now.
//
// The node uses it at shutdown to tell calls still running (which deserve a grace period)
// from idle client connections (which gRPC's Server::Shutdown would otherwise wait out
// until its deadline, since it finishes only when every client channel has gone).
//
// Each handler holds a Scope for its whole run. Thread-safe (one relaxed atomic); no
// errors.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::store::rpc {

class InFlightCalls {
 public:
  class Scope {
   public:
    explicit Scope(InFlightCalls* calls) : calls_(calls) {
      calls_->count_.fetch_add(1, std::memory_order_relaxed);
    }
    ~Scope() { calls_->count_.fetch_sub(1, std::memory_order_relaxed); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    InFlightCalls* const calls_;
  };

  int64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> count_{0};
};

}  // namespace strata::store::rpc
