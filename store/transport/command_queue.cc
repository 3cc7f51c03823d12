#include "store/transport/command_queue.h"

#include <cerrno>
#include <cstdint>
#include <utility>

#include <sys/eventfd.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/errno_status.h"

namespace strata::store::transport {

absl::StatusOr<std::shared_ptr<CommandQueue>> CommandQueue::Create() {
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    return base::ErrnoToStatus(errno, "eventfd");
  }
  return std::shared_ptr<CommandQueue>(new CommandQueue(fd));
}

CommandQueue::~CommandQueue() { close(wake_fd_); }

bool CommandQueue::Push(Command command) {
  bool wake = false;
  bool queued = false;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_) {
      queued = true;
      commands_.push_back(std::move(command));
      wake = asleep_;
      asleep_ = false;  // one wakeup per sleep is enough
    }
  }
  if (!queued) {
    std::move(command)(/*cancelled=*/true);
    return false;
  }
  if (wake) {
    const uint64_t one = 1;
    const ssize_t n = write(wake_fd_, &one, sizeof(one));
    // EAGAIN means the counter is already non-zero: the sleeper will wake anyway.
    PCHECK(n == sizeof(one) || errno == EAGAIN) << "eventfd write";
  }
  return true;
}

std::vector<CommandQueue::Command> CommandQueue::TakeAll() {
  std::vector<Command> out;
  absl::MutexLock lock(&mu_);
  out.swap(commands_);
  return out;
}

bool CommandQueue::PrepareToSleep() {
  absl::MutexLock lock(&mu_);
  if (!commands_.empty()) return false;
  asleep_ = true;
  return true;
}

void CommandQueue::WokeUp() {
  {
    absl::MutexLock lock(&mu_);
    asleep_ = false;
  }
  uint64_t count = 0;
  while (read(wake_fd_, &count, sizeof(count)) == sizeof(count)) {
  }
}

std::vector<CommandQueue::Command> CommandQueue::Close() {
  std::vector<Command> out;
  absl::MutexLock lock(&mu_);
  closed_ = true;
  out.swap(commands_);
  return out;
}

}  // namespace strata::store::transport
