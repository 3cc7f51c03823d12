// Clock: where the node engine reads the time (lease expiry, put deadlines, record times).
//
// A narrow interface around one side effect, so tests can drive time by hand:
//   RealClock  absl::Now(). RealClock::Default() is a process-wide instance that is never
//              destroyed.
//   FakeClock  starts at a fixed instant and moves only when Set() or Advance() is called.
//
// Ownership: whoever passes a Clock* to a NodeEngine keeps it alive for the engine's
// lifetime. Thread safety: Now() of both implementations may be called from any thread;
// FakeClock's Set/Advance may race with Now() (a mutex orders them).
// Errors: none.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace strata::store::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // A shared instance; never destroyed.
  static RealClock* Default();
};

class FakeClock final : public Clock {
 public:
  // 2030-01-01T00:00:00Z: a fixed, recognisable start.
  static absl::Time DefaultStart() { return absl::FromUnixSeconds(1893456000); }

  explicit FakeClock(absl::Time start = DefaultStart()) : now_(start) {}

  absl::Time Now() const override ABSL_LOCKS_EXCLUDED(mu_);
  void Set(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  // REQUIRES: d >= 0 (a clock does not run backwards; Set may move it anywhere).
  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::store::core
