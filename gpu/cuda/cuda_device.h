// CudaDevice: the Device of one CUDA GPU, on the CUDA runtime API (linked
// statically, so a binary runs where no toolkit is installed and reports
// UNAVAILABLE where no driver is). gpu-internal: callers use OpenCudaDevice()
// from strata/gpu/device.h; tests/gpu uses this header for the kernel entry
// points.
//
// Mapping onto CUDA:
//   Allocate            cudaMalloc                    (256-byte aligned)
//   AllocatePinnedHost  cudaHostAlloc(Portable)       (usable by every device)
//   RegisterHost        cudaHostRegister(Portable)
//   Stream              cudaStreamCreateWithFlags(NonBlocking): no implicit
//                       synchronization with the legacy default stream
//   Event               cudaEventCreateWithFlags(DisableTiming)
//   copies / memset     cudaMemcpyAsync with an explicit direction / cudaMemsetAsync
// Errors are converted by FromCudaError (gpu/cuda/cuda_status.h).
//
// Thread safety: all methods are thread-safe. Each one first makes this device
// current on the calling thread (cudaSetDevice), so threads may use several
// CudaDevices in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/gpu/device.h"

namespace strata::gpu {

class CudaDevice final : public Device {
 public:
  // The device with `ordinal`. Errors as OpenCudaDevice (strata/gpu/device.h).
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Open(int ordinal);

  ~CudaDevice() override = default;

  const std::string& name() const override { return name_; }
  int ordinal() const override { return ordinal_; }
  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }

  // Enqueues the fill kernel on `stream`: dst[i] = FillPatternByte(i, seed) for
  // i < bytes (gpu/cuda/fill_pattern.h). bytes == 0 is a no-op. INVALID_ARGUMENT
  // for a null dst or an empty/foreign stream; INTERNAL if the launch fails.
  // REQUIRES: [dst, dst + bytes) lies in device memory of this device.
  absl::Status FillPatternAsync(void* dst, size_t bytes, uint32_t seed, Stream& stream);

 private:
  CudaDevice(int ordinal, std::string name) : ordinal_(ordinal), name_(std::move(name)) {}

  // Makes this device current on the calling thread.
  absl::Status Activate() const;

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

  const int ordinal_;
  const std::string name_;
};

}  // namespace strata::gpu
