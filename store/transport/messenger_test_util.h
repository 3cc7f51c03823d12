// Test helpers for Messenger tests (test-only; not part of the library).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "strata/store/transport/messenger.h"

namespace strata::store::transport::testing {

// Bounded wait for tests: Wait() fails the test instead of hanging.
inline constexpr absl::Duration kWaitLimit = absl::Seconds(20);

// Collects the status of one completion. Shared, so a late callback after a failed wait
// does not write into freed memory.
class Completion {
 public:
  Completion() : state_(std::make_shared<State>()) {}

  CompletionCallback Callback() {
    return [state = state_](absl::Status status) {
      absl::MutexLock lock(&state->mu);
      state->status = std::move(status);
      state->done = true;
    };
  }
  // True when the completion ran within `limit`.
  bool Wait(absl::Duration limit = kWaitLimit) const {
    absl::MutexLock lock(&state_->mu);
    return state_->mu.AwaitWithTimeout(absl::Condition(&state_->done), limit);
  }
  bool done() const {
    absl::MutexLock lock(&state_->mu);
    return state_->done;
  }
  absl::Status status() const {
    absl::MutexLock lock(&state_->mu);
    return state_->status;
  }

 private:
  struct State {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<State> state_;
};

// Deterministic payload bytes: seed `seed`, `size` bytes.
inline std::vector<uint8_t> Pattern(size_t size, uint64_t seed) {
  std::vector<uint8_t> out(size);
  std::mt19937_64 rng(seed);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    const uint64_t v = rng();
    for (int b = 0; b < 8; ++b) out[i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  for (; i < size; ++i) out[i] = static_cast<uint8_t>(rng());
  return out;
}

inline absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

inline std::string Text(absl::Span<const uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// A parameterized test's name for its UCX transport list: "shm,cma,tcp" -> "shm_cma_tcp".
inline std::string TransportName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (c == ',') c = '_';
  }
  return name;
}

}  // namespace strata::store::transport::testing
