// Lock hold-time measurement: how long a lock is held, per acquisition, as a histogram.
//
// What: LockHoldHistogram counts hold durations into log2 buckets of nanoseconds (bucket i
// holds [2^(i-1), 2^i) ns; 1 ns to ~69 s) and keeps count, sum and max. It is finer than
// base::LatencyHistogram (whose first bucket is 25 us), because an index lock is held for
// a few microseconds or less. TimedMutexLock and TimedReaderMutexLock are absl::MutexLock
// and absl::ReaderMutexLock that, given a histogram, record the time from acquisition to
// release into it; given nullptr they only lock (one branch each way: production with the
// measurement off pays nothing measurable). LockHoldPause excludes a stretch inside a held
// scope during which the lock is not held (a CondVar wait, an Await, an explicit
// Unlock/Lock pair around I/O) from the measurement of the innermost timed scope of the
// calling thread.
//
// Ownership: the histogram is owned by whoever owns the lock; a timed scope borrows it.
// Thread safety: Record and Snapshot may be called from any thread at once (relaxed
// atomics; a snapshot taken during records is a set of individually exact counts). Timed
// scopes keep the current scope's start in a thread-local, so a LockHoldPause applies to
// the calling thread's innermost timed scope only. No errors.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace strata::store::core {

// What a LockHoldHistogram saw: quantiles interpolated within the log2 bucket of the rank.
struct LockHoldStats {
  uint64_t count = 0;  // acquisitions recorded
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;  // exact
};

class LockHoldHistogram {
 public:
  static constexpr int kBuckets = 37;  // up to 2^36 ns (~69 s); longer ones in the last

  LockHoldHistogram() = default;
  LockHoldHistogram(const LockHoldHistogram&) = delete;
  LockHoldHistogram& operator=(const LockHoldHistogram&) = delete;

  // Counts one hold of `nanos` (negative counts as 0).
  void Record(int64_t nanos);
  LockHoldStats Snapshot() const;
  // The q-quantile (clamped to [0, 1]) in microseconds; 0 when nothing was recorded.
  double QuantileUs(double q) const;

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};
  std::atomic<uint64_t> max_nanos_{0};
};

namespace lock_hold_internal {

inline int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The calling thread's innermost timed scope (histogram null: none is timing).
struct Scope {
  LockHoldHistogram* histogram = nullptr;
  int64_t start = 0;
};
inline thread_local Scope current;

// Starts timing a scope; returns the scope it nests in.
inline Scope Begin(LockHoldHistogram* histogram) {
  const Scope outer = current;
  current = Scope{histogram, NowNanos()};
  return outer;
}
inline void End(const Scope& outer) {
  current.histogram->Record(NowNanos() - current.start);
  current = outer;
}

}  // namespace lock_hold_internal

// absl::MutexLock that records its hold time into `histogram` (nullptr: not timed).
class ABSL_SCOPED_LOCKABLE TimedMutexLock {
 public:
  TimedMutexLock(absl::Mutex* mu, LockHoldHistogram* histogram) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu), timed_(histogram != nullptr) {
    mu_->Lock();
    if (timed_) outer_ = lock_hold_internal::Begin(histogram);
  }
  ~TimedMutexLock() ABSL_UNLOCK_FUNCTION() {
    if (timed_) lock_hold_internal::End(outer_);
    mu_->Unlock();
  }
  TimedMutexLock(const TimedMutexLock&) = delete;
  TimedMutexLock& operator=(const TimedMutexLock&) = delete;

 private:
  absl::Mutex* const mu_;
  const bool timed_;
  lock_hold_internal::Scope outer_;
};

// absl::ReaderMutexLock that records its hold time into `histogram` (nullptr: not timed).
class ABSL_SCOPED_LOCKABLE TimedReaderMutexLock {
 public:
  TimedReaderMutexLock(absl::Mutex* mu, LockHoldHistogram* histogram) ABSL_SHARED_LOCK_FUNCTION(mu)
      : mu_(mu), timed_(histogram != nullptr) {
    mu_->ReaderLock();
    if (timed_) outer_ = lock_hold_internal::Begin(histogram);
  }
  ~TimedReaderMutexLock() ABSL_UNLOCK_FUNCTION() {
    if (timed_) lock_hold_internal::End(outer_);
    mu_->ReaderUnlock();
  }
  TimedReaderMutexLock(const TimedReaderMutexLock&) = delete;
  TimedReaderMutexLock& operator=(const TimedReaderMutexLock&) = delete;

 private:
  absl::Mutex* const mu_;
  const bool timed_;
  lock_hold_internal::Scope outer_;
};

// While alive, the calling thread's innermost timed scope is not timing: construct it
// just before the lock is given up (CondVar::Wait, Await, Unlock) and let it go just after
// it is held again. The part before counts as one hold, the part after as another.
class LockHoldPause {
 public:
  LockHoldPause() {
    if (lock_hold_internal::current.histogram == nullptr) return;
    histogram_ = lock_hold_internal::current.histogram;
    histogram_->Record(lock_hold_internal::NowNanos() - lock_hold_internal::current.start);
  }
  ~LockHoldPause() {
    if (histogram_ != nullptr) lock_hold_internal::current.start = lock_hold_internal::NowNanos();
  }
  LockHoldPause(const LockHoldPause&) = delete;
  LockHoldPause& operator=(const LockHoldPause&) = delete;

 private:
  LockHoldHistogram* histogram_ = nullptr;
};

}  // namespace strata::store::core
