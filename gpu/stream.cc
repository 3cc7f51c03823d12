#include "strata/gpu/stream.h"

#include <utility>

#include "strata/gpu/device.h"

namespace strata::gpu {

Stream::Stream(Stream&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Reset();
    owner_ = std::exchange(other.owner_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Stream::~Stream() { Reset(); }

void Stream::Reset() {
  if (handle_ == nullptr) return;
  owner_->ReleaseStream(handle_);
  owner_ = nullptr;
  handle_ = nullptr;
}

}  // namespace strata::gpu
