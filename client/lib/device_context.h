// DeviceContext: what a Client keeps per device ordinal for MemoryKind::kDevice calls
// (docs/design/device-memory.md): the gpu::Device (ClientOptions::open_device, else
// gpu::OpenCudaDevice), one stream, a pinned host staging pool of
// ClientOptions::device_staging_bytes in two halves, and an event per half.
//
// One call uses a context at a time (lock mu() for the whole call): the staging pool and
// the stream are the call's. Concurrent device calls to one device therefore take turns.
//
// Errors of Open: those of gpu::Device::AllocatePinnedHost / CreateStream / CreateEvent.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "strata/gpu/device.h"

namespace strata::client_internal {

class DeviceContext {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceContext>> Open(std::shared_ptr<gpu::Device> device,
                                                             size_t staging_bytes);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  absl::Mutex& mu() ABSL_LOCK_RETURNED(mu_) { return mu_; }
  gpu::Device& device() { return *device_; }
  gpu::Stream& stream() { return stream_; }
  // Staging half h (0 or 1) and its event (recorded after the copies out of / into it).
  std::byte* half(int h) { return static_cast<std::byte*>(staging_.data()) + h * half_bytes(); }
  size_t half_bytes() const { return staging_.size() / 2; }
  std::byte* staging() { return static_cast<std::byte*>(staging_.data()); }
  size_t staging_bytes() const { return staging_.size(); }
  gpu::Event& event(int h) { return events_[h]; }

 private:
  explicit DeviceContext(std::shared_ptr<gpu::Device> device) : device_(std::move(device)) {}

  absl::Mutex mu_;
  // Declared first: destroyed last, after everything it made.
  std::shared_ptr<gpu::Device> device_;
  gpu::DeviceBuffer staging_;
  gpu::Stream stream_;
  gpu::Event events_[2];
};

}  // namespace strata::client_internal
