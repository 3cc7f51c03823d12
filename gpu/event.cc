#include "strata/gpu/event.h"

#include <utility>

#include "strata/gpu/device.h"
#include "strata/gpu/stream.h"

namespace strata::gpu {

Event::Event(Event&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Reset();
    owner_ = std::exchange(other.owner_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Event::~Event() { Reset(); }

void Event::Reset() {
  if (handle_ == nullptr) return;
  owner_->ReleaseEvent(handle_);
  owner_ = nullptr;
  handle_ = nullptr;
}

absl::Status Event::Record(Stream& stream) {
  if (empty()) return absl::FailedPreconditionError("Record on an empty event");
  return owner_->RecordEvent(handle_, stream);
}

absl::Status Event::Synchronize() {
  if (empty()) return absl::FailedPreconditionError("Synchronize on an empty event");
  return owner_->SynchronizeEvent(handle_);
}

absl::StatusOr<bool> Event::Query() {
  if (empty()) return absl::FailedPreconditionError("Query on an empty event");
  return owner_->QueryEvent(handle_);
}

}  // namespace strata::gpu
