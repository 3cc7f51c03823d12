#include "strata/gpu/device_buffer.h"

#include <utility>

#include "strata/gpu/device.h"

namespace strata::gpu {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      kind_(std::exchange(other.kind_, MemoryKind::kHost)),
      device_ordinal_(std::exchange(other.device_ordinal_, -1)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    owner_ = std::exchange(other.owner_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    kind_ = std::exchange(other.kind_, MemoryKind::kHost);
    device_ordinal_ = std::exchange(other.device_ordinal_, -1);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Reset(); }

void DeviceBuffer::Reset() {
  if (data_ == nullptr) return;
  owner_->ReleaseBuffer(data_, size_, kind_);
  owner_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  kind_ = MemoryKind::kHost;
  device_ordinal_ = -1;
}

}  // namespace strata::gpu
