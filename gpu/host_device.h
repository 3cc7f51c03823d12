// HostDevice: the Device whose "device memory" is ordinary host memory, for tests
// of the modules above gpu/ and for machines without a GPU. Made by
// CreateHostDevice() (strata/gpu/device.h); gpu-internal.
//
// Behaviour beyond the Device contract:
//   * Allocate() hands out at most `memory_bytes` in total (RESOURCE_EXHAUSTED
//     beyond), so a test can model a small HBM; AllocatePinnedHost() at most the
//     machine's physical memory. Buffers are 256-byte (device) or page (pinned)
//     aligned.
//   * Every *Async call runs before it returns (memcpy/memset); streams and events
//     are real handles whose ordering holds trivially, events are always ready.
//   * Device-side pointers are checked against the live Allocate() buffers: a
//     range outside every buffer is INVALID_ARGUMENT, one that starts inside a
//     buffer and runs past its end is OUT_OF_RANGE, overlapping source and
//     destination is INVALID_ARGUMENT. Host-side pointers are not checked.
//   * RegisterHost pins nothing; it records the range so that overlaps
//     (ALREADY_EXISTS) and unknown pointers (NOT_FOUND) behave as on CUDA.
//
// Thread safety: all methods are thread-safe (one mutex over the bookkeeping;
// copies run outside it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

#include "strata/gpu/device.h"

namespace strata::gpu {

class HostDevice final : public Device {
 public:
  // REQUIRES: memory_bytes > 0 and pinned_limit_bytes > 0.
  HostDevice(size_t memory_bytes, size_t pinned_limit_bytes);
  ~HostDevice() override = default;

  const std::string& name() const override { return name_; }
  int ordinal() const override { return -1; }
  MemoryKind memory_kind() const override { return MemoryKind::kHost; }

 private:
  absl::StatusOr<DeviceMemoryInfo> DoGetMemoryInfo() override;
  absl::StatusOr<void*> DoAllocate(size_t bytes) override;
  absl::StatusOr<void*> DoAllocatePinnedHost(size_t bytes) override;
  void DoFree(void* data, size_t bytes, MemoryKind kind) override;
  absl::Status DoRegisterHost(void* ptr, size_t bytes, bool read_only) override;
  absl::Status DoUnregisterHost(void* ptr) override;
  absl::StatusOr<std::string> DoExportIpc(void* data, size_t bytes) override;
  absl::StatusOr<void*> DoOpenIpc(absl::string_view handle) override;
  absl::Status DoCloseIpc(void* base) override;
  absl::StatusOr<void*> DoCreateStream() override;
  void DoDestroyStream(void* stream) override;
  absl::StatusOr<void*> DoCreateEvent() override;
  void DoDestroyEvent(void* event) override;
  absl::Status DoCopyAsync(CopyDirection direction, void* dst, const void* src, size_t bytes,
                           void* stream) override;
  absl::Status DoMemsetAsync(void* dst, uint8_t value, size_t bytes, void* stream) override;
  absl::Status DoPagedCopyAsync(bool scatter, void* blob, const BlobShape& shape,
                                const PagedCache& cache, absl::Span<const uint64_t> rows,
                                void* stream) override;
  absl::Status DoReferenceKvAsync(const ReferenceKvJob& job, void* stream) override;
  absl::Status DoAttentionAsync(const AttentionJob& job, void* stream) override;
  absl::Status DoExpertsAsync(const ExpertsJob& job, void* stream) override;
  absl::Status DoChecksumChunks(const void* data, uint64_t chunk_bytes, uint64_t chunks,
                                uint64_t seed, uint64_t* out, void* stream) override;
  absl::Status DoSynchronizeStream(void* stream) override;
  absl::Status DoWaitForEvent(void* stream, void* event) override;
  absl::Status DoRecordEvent(void* event, void* stream) override;
  absl::Status DoSynchronizeEvent(void* event) override;
  absl::StatusOr<bool> DoQueryEvent(void* event) override;

  // OK if [p, p + bytes) lies inside one live Allocate() buffer.
  absl::Status CheckDeviceRange(const void* p, size_t bytes, absl::string_view what) const
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::string name_ = "host";
  const size_t memory_bytes_;
  const size_t pinned_limit_bytes_;

  mutable absl::Mutex mu_;
  size_t device_bytes_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  size_t pinned_bytes_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  // Live Allocate() buffers and registered host ranges: start address -> bytes.
  std::map<uintptr_t, size_t> device_buffers_ ABSL_GUARDED_BY(mu_);
  std::map<uintptr_t, size_t> registered_ ABSL_GUARDED_BY(mu_);
  // Buffers of (other) host devices of this process opened through OpenIpc: device memory
  // to this one's copies too.
  std::map<uintptr_t, size_t> imported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::gpu
