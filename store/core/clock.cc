#include "strata/store/core/clock.h"

#include "glog/logging.h"

namespace strata::store::core {

RealClock* RealClock::Default() {
  static RealClock* const clock = new RealClock;
  return clock;
}

absl::Time FakeClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

void FakeClock::Set(absl::Time now) {
  absl::MutexLock lock(&mu_);
  now_ = now;
}

void FakeClock::Advance(absl::Duration d) {
  DCHECK(d >= absl::ZeroDuration()) << "FakeClock::Advance by a negative duration";
  absl::MutexLock lock(&mu_);
  now_ += d;
}

}  // namespace strata::store::core
