// AsyncExecutor: a fixed set of threads running the client's async calls (ReadAsync,
// WriteAsync) in submission order, as many at once as there are threads.
//
// Ownership: owns its threads and the queued tasks. The destructor runs every task already
// queued (and any a running task schedules), then joins the threads. REQUIRES: not
// destroyed from one of its own threads; no Schedule from other threads once destruction
// began.
//
// Thread-safe: Schedule from any thread (including a task).
#pragma once

#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace strata::client_internal {

class AsyncExecutor {
 public:
  // REQUIRES: threads >= 1.
  explicit AsyncExecutor(int threads);
  ~AsyncExecutor();
  AsyncExecutor(const AsyncExecutor&) = delete;
  AsyncExecutor& operator=(const AsyncExecutor&) = delete;

  void Schedule(absl::AnyInvocable<void() &&> task) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::client_internal
