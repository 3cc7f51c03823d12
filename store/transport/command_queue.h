// CommandQueue: how other threads hand work to a Messenger's progress thread.
//
// Private to store/transport; no UCX types. Any thread may Push() a command; the progress
// thread takes them in FIFO order with TakeAll(). Before the progress thread sleeps (in
// poll() on the UCX worker's fd and wake_fd()) it calls PrepareToSleep(): if the queue is
// empty it marks itself asleep, and the next Push() writes wake_fd() (an eventfd) so the
// sleeper wakes. Pushes while the progress thread is awake cost no system call.
//
// A command is called exactly once: `command(false)` on the progress thread, or — when it is
// pushed after Close() — `command(true)` at once on the pushing thread, so that it can fail
// its callback (CANCELLED) instead of vanishing.
//
// Shared ownership (std::shared_ptr): IncomingData descriptors that a handler kept hold the
// queue, so a late Accept/Drop after the Messenger shut down fails cleanly instead of
// touching a destroyed messenger.
//
// Thread-safe. Errors: Create returns the errno of eventfd() (base::ErrnoToStatus:
// RESOURCE_EXHAUSTED when out of fds or memory, else INTERNAL).
#pragma once

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace strata::store::transport {

class CommandQueue {
 public:
  using Command = absl::AnyInvocable<void(bool cancelled) &&>;

  static absl::StatusOr<std::shared_ptr<CommandQueue>> Create();
  ~CommandQueue();
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;

  // Appends `command` and returns true; once Close() was called, runs `command(true)` on
  // this thread instead and returns false.
  bool Push(Command command) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves out every queued command, oldest first.
  std::vector<Command> TakeAll() ABSL_LOCKS_EXCLUDED(mu_);
  // Progress thread, before sleeping: returns true (and marks the thread asleep) when the
  // queue is empty; false when commands wait (run them instead of sleeping).
  bool PrepareToSleep() ABSL_LOCKS_EXCLUDED(mu_);
  // Progress thread, after waking (or deciding not to sleep): clears the asleep mark and
  // drains wake_fd().
  void WokeUp() ABSL_LOCKS_EXCLUDED(mu_);
  // Refuses further pushes and returns the commands still queued (the caller runs them).
  std::vector<Command> Close() ABSL_LOCKS_EXCLUDED(mu_);

  // Readable after a Push() to a sleeping progress thread.
  int wake_fd() const { return wake_fd_; }

 private:
  explicit CommandQueue(int wake_fd) : wake_fd_(wake_fd) {}

  const int wake_fd_;
  absl::Mutex mu_;
  std::vector<Command> commands_ ABSL_GUARDED_BY(mu_);
  bool asleep_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace strata::store::transport
