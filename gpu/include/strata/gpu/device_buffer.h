// DeviceBuffer: the RAII owner of one allocation made by a Device — device
// memory from Device::Allocate or page-locked host memory from
// Device::AllocatePinnedHost.
//
// Ownership: move-only. The buffer frees its bytes through the Device that made
// it when destroyed or Reset(); a moved-from or default-constructed buffer is
// empty (data() == nullptr, size() == 0) and frees nothing. Freeing device memory
// may wait for work still queued on the device (cudaFree does).
//
// REQUIRES: the Device that made a buffer outlives it (a Device destroyed with
// live buffers is a bug and CHECK-fails).
//
// Thread safety: a DeviceBuffer is a value; distinct buffers may be used and
// destroyed from any threads; one buffer needs external synchronization. The
// bytes themselves are ordered only by the streams and events that touch them.
#pragma once

#include <cstddef>

#include "strata/gpu/memory_kind.h"

namespace strata::gpu {

class Device;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // Start of the allocation. For kDevice memory the host must not dereference it:
  // pass it to the Device's copy methods (or to a kernel).
  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  MemoryKind kind() const { return kind_; }
  // Ordinal of the Device that made the buffer (Device::ordinal()); -1 when empty.
  int device_ordinal() const { return device_ordinal_; }

  // Frees the bytes now; the buffer becomes empty. No-op when already empty.
  void Reset();

 private:
  friend class Device;
  DeviceBuffer(Device* owner, void* data, size_t size, MemoryKind kind, int device_ordinal)
      : owner_(owner), data_(data), size_(size), kind_(kind), device_ordinal_(device_ordinal) {}

  Device* owner_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
  MemoryKind kind_ = MemoryKind::kHost;
  int device_ordinal_ = -1;
};

}  // namespace strata::gpu
