// Device: one accelerator's memory, streams and events behind a narrow interface
// with no vendor types in it. Two implementations:
//
//   CreateHostDevice()   host memory plays "device" memory; always builds. Copies
//                        are memcpy and complete before the call returns; streams
//                        and events are real objects whose ordering guarantees
//                        hold trivially. It checks every device-side range against
//                        its live buffers, so tests of modules above catch
//                        out-of-bounds and use-after-free copies.
//   OpenCudaDevice(n)    a CUDA GPU (gpu/cuda/, static cudart). UNAVAILABLE, with
//                        the reason, where strata was built without CUDA or the
//                        machine has no driver or device.
//
// Everything a Device makes is returned in a move-only RAII owner (DeviceBuffer,
// Stream, Event) that releases it through the Device. REQUIRES: the Device
// outlives all of them (destroying it first CHECK-fails).
//
// Asynchrony: *Async methods enqueue work on a Stream and may return before it
// runs (the host device runs it before returning). The caller keeps source and
// destination memory alive and untouched until the work completes, i.e. until
// Synchronize(stream) or an Event recorded after it is ready. Copies from or to
// pageable host memory may be synchronous on CUDA; use pinned or registered host
// memory for overlap.
//
// Thread safety: every Device method is thread-safe.
//
// Errors (the same for every implementation; the conformance suite in
// gpu/device_conformance_test_suite.h pins them):
//   INVALID_ARGUMENT     zero-byte allocation or registration, null pointer,
//                        address range that wraps, empty Stream/Event or one made
//                        by another Device, a pointer the device rejects
//   OUT_OF_RANGE         (host device) a device range that starts inside a live
//                        buffer but runs past its end
//   RESOURCE_EXHAUSTED   out of device memory, or of pinned host memory
//   ALREADY_EXISTS       RegisterHost of a range overlapping a registered one
//   NOT_FOUND            UnregisterHost of a pointer not registered
//   UNAVAILABLE          no driver / device (lost or never there)
//   INTERNAL             any other device failure, incl. an asynchronous fault of
//                        earlier work surfacing on a later call
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/gpu/device_buffer.h"
#include "strata/gpu/event.h"
#include "strata/gpu/memory_kind.h"
#include "strata/gpu/moe_reference.h"
#include "strata/gpu/paged_kv.h"
#include "strata/gpu/reference_kv.h"
#include "strata/gpu/stream.h"

namespace strata::gpu {

// Device memory as the device reports it. free_bytes may change at any moment
// (other processes share a GPU).
struct DeviceMemoryInfo {
  size_t total_bytes = 0;
  size_t free_bytes = 0;
};

// Objects currently alive that this Device made (plain counters, for tests,
// leak checks and metrics).
struct DeviceStats {
  uint64_t device_buffers = 0;
  uint64_t device_bytes = 0;
  uint64_t pinned_host_buffers = 0;
  uint64_t pinned_host_bytes = 0;
  uint64_t streams = 0;
  uint64_t events = 0;
  uint64_t registered_host_ranges = 0;
};

class Device {
 public:
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  virtual ~Device();

  // Human-readable identity, e.g. "host" or "cuda:0 (NVIDIA H200)".
  virtual const std::string& name() const = 0;
  // CUDA device ordinal; -1 for the host device.
  virtual int ordinal() const = 0;
  // Kind of the memory Allocate() returns: kDevice on a GPU, kHost for the host
  // device (its "device" memory is host-addressable).
  virtual MemoryKind memory_kind() const = 0;

  absl::StatusOr<DeviceMemoryInfo> GetMemoryInfo();
  DeviceStats stats() const;

  // Device memory of `bytes` bytes, aligned to at least 256 bytes, contents
  // unspecified. INVALID_ARGUMENT if bytes == 0; RESOURCE_EXHAUSTED when the
  // device cannot satisfy it.
  absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  // Page-locked host memory (kind kPinnedHost) for staging copies, usable with
  // every device of the process. Same errors as Allocate.
  absl::StatusOr<DeviceBuffer> AllocatePinnedHost(size_t bytes);

  // Page-locks existing host memory [ptr, ptr+bytes) (e.g. a shared DRAM arena)
  // so it serves as DMA source/destination like pinned memory. The caller keeps
  // the memory mapped until UnregisterHost(ptr). INVALID_ARGUMENT for null/zero;
  // ALREADY_EXISTS if it overlaps a registered range.
  // read_only: the range may be mapped PROT_READ (a same-host client's view of a node's
  // arena); the device then only reads it (DMA to the device), never writes it (CUDA:
  // cudaHostRegisterReadOnly).
  absl::Status RegisterHost(void* ptr, size_t bytes, bool read_only = false);
  // Undoes RegisterHost(ptr, ...). NOT_FOUND if ptr does not start a registered range.
  // REQUIRES: every registered range is unregistered before the Device is destroyed.
  absl::Status UnregisterHost(void* ptr);

  // Sharing device memory with other processes of this machine (CUDA IPC): ExportIpc gives
  // a handle to `buffer` (an Allocate() buffer of this device; INVALID_ARGUMENT else);
  // OpenIpc, in another process, turns it into a pointer its device can copy from and to
  // (CUDA: cudaIpcOpenMemHandle with lazy peer access: the importer's GPU may be another
  // one with peer access; the mapping is readable AND writable); CloseIpc(base) ends it.
  // The host device's memory is not shared between processes: its handle opens only in the
  // exporting process (FAILED_PRECONDITION elsewhere), where it stands in for CUDA IPC in
  // tests. Errors: INVALID_ARGUMENT a malformed handle; UNAVAILABLE / INTERNAL the
  // driver's refusal. REQUIRES: the exported buffer outlives every opening of it.
  absl::StatusOr<std::string> ExportIpc(const DeviceBuffer& buffer);
  absl::StatusOr<void*> OpenIpc(absl::string_view handle);
  absl::Status CloseIpc(void* base);

  absl::StatusOr<Stream> CreateStream();
  absl::StatusOr<Event> CreateEvent();

  // Enqueue a copy of `bytes` bytes on `stream`. Host pointers may be pageable,
  // pinned or registered; device pointers point into this Device's buffers.
  // bytes == 0 is a no-op (pointers unchecked). Source and destination must not
  // overlap.
  absl::Status CopyToDeviceAsync(void* dst, const void* src, size_t bytes, Stream& stream);
  absl::Status CopyToHostAsync(void* dst, const void* src, size_t bytes, Stream& stream);
  absl::Status CopyDeviceToDeviceAsync(void* dst, const void* src, size_t bytes, Stream& stream);
  // Enqueue setting `bytes` bytes of device memory at `dst` to `value`.
  absl::Status MemsetAsync(void* dst, uint8_t value, size_t bytes, Stream& stream);

  // Paged KV (strata/gpu/paged_kv.h): enqueue copying the blob's token rows into the
  // engine cache's rows (scatter), or the cache's rows into the blob (gather). The cache
  // tensors are this device's memory; the blob is this device's memory or, on CUDA, pinned
  // / registered host memory (read or written across PCIe by the kernel itself). `rows` is
  // copied before the call returns. Errors: CheckPagedTransfer's, and (host device) a
  // tensor outside every live buffer as for copies.
  absl::Status ScatterPagedAsync(const void* blob, const BlobShape& shape, const PagedCache& cache,
                                 absl::Span<const uint64_t> rows, Stream& stream);
  absl::Status GatherPagedAsync(void* blob, const BlobShape& shape, const PagedCache& cache,
                                absl::Span<const uint64_t> rows, Stream& stream);

  // Chunk checksums where the bytes are: XXH3-64 with `seed` (strata/gpu/xxh3.h) of each of
  // `chunks` chunks of `chunk_bytes` bytes at `data` (this device's memory) into out[0,
  // chunks) (host memory). Runs after the work enqueued on `stream` and returns once `out`
  // is written. INVALID_ARGUMENT null pointers or chunk_bytes 0; (host device) `data`
  // outside every live buffer as for copies. chunks == 0 is a no-op.
  absl::Status ChecksumChunks(const void* data, uint64_t chunk_bytes, uint64_t chunks,
                              uint64_t seed, uint64_t* out, Stream& stream);

  // The MoE reference worker's attention on this device (strata/gpu/moe_reference.h):
  // enqueue `job`, its blob and out this device's memory. Errors: CheckAttentionJob's;
  // (host device) a buffer outside every live buffer as for copies.
  absl::Status AttentionAsync(const AttentionJob& job, Stream& stream);
  // Its MoE layer (router, top-k, gated experts: moe_reference.h), every pointer this
  // device's memory. Errors: CheckExpertsJob's; (host device) memory outside every live
  // buffer as for copies.
  absl::Status ExpertsAsync(const ExpertsJob& job, Stream& stream);

  // The reference model on this device (strata/gpu/reference_kv.h): enqueue `job`, every
  // buffer of it this device's memory. Errors: CheckReferenceKvJob's; (host device) a
  // buffer outside every live buffer as for copies.
  absl::Status ReferenceKvAsync(const ReferenceKvJob& job, Stream& stream);

  // Blocks until all work enqueued on `stream` so far has completed; an
  // asynchronous failure of that work is returned here (INTERNAL).
  absl::Status Synchronize(Stream& stream);
  // Work enqueued on `stream` after this call waits until `event` is ready
  // (cross-stream ordering without blocking the host).
  absl::Status WaitForEvent(Stream& stream, const Event& event);

 protected:
  Device() = default;

  enum class CopyDirection { kHostToDevice, kDeviceToHost, kDeviceToDevice };

  // For an implementation's own entry points (e.g. kernels): the opaque handle of
  // `stream`, or INVALID_ARGUMENT if it is empty or not made by this Device.
  absl::StatusOr<void*> StreamHandle(const Stream& stream) const;

 private:
  friend class DeviceBuffer;
  friend class Stream;
  friend class Event;

  absl::Status CopyAsync(CopyDirection direction, void* dst, const void* src, size_t bytes,
                         Stream& stream);
  absl::StatusOr<void*> EventHandle(const Event& event) const;

  // Called by the RAII owners and Event.
  void ReleaseBuffer(void* data, size_t bytes, MemoryKind kind);
  void ReleaseStream(void* handle);
  void ReleaseEvent(void* handle);
  absl::Status RecordEvent(void* event, Stream& stream);
  absl::Status SynchronizeEvent(void* event);
  absl::StatusOr<bool> QueryEvent(void* event);

  // What an implementation provides. Arguments are validated before these run:
  // sizes are non-zero, pointers non-null, handles are this Device's own.
  virtual absl::StatusOr<DeviceMemoryInfo> DoGetMemoryInfo() = 0;
  virtual absl::StatusOr<void*> DoAllocate(size_t bytes) = 0;
  virtual absl::StatusOr<void*> DoAllocatePinnedHost(size_t bytes) = 0;
  // Must not fail visibly: log what goes wrong.
  virtual void DoFree(void* data, size_t bytes, MemoryKind kind) = 0;
  virtual absl::Status DoRegisterHost(void* ptr, size_t bytes, bool read_only) = 0;
  virtual absl::Status DoUnregisterHost(void* ptr) = 0;
  virtual absl::StatusOr<std::string> DoExportIpc(void* data, size_t bytes) = 0;
  virtual absl::StatusOr<void*> DoOpenIpc(absl::string_view handle) = 0;
  virtual absl::Status DoCloseIpc(void* base) = 0;
  virtual absl::StatusOr<void*> DoCreateStream() = 0;
  virtual void DoDestroyStream(void* stream) = 0;
  virtual absl::StatusOr<void*> DoCreateEvent() = 0;
  virtual void DoDestroyEvent(void* event) = 0;
  virtual absl::Status DoCopyAsync(CopyDirection direction, void* dst, const void* src,
                                   size_t bytes, void* stream) = 0;
  virtual absl::Status DoMemsetAsync(void* dst, uint8_t value, size_t bytes, void* stream) = 0;
  // Arguments checked (CheckPagedTransfer); scatter: blob -> cache.
  virtual absl::Status DoPagedCopyAsync(bool scatter, void* blob, const BlobShape& shape,
                                        const PagedCache& cache, absl::Span<const uint64_t> rows,
                                        void* stream) = 0;
  virtual absl::Status DoReferenceKvAsync(const ReferenceKvJob& job, void* stream) = 0;
  virtual absl::Status DoAttentionAsync(const AttentionJob& job, void* stream) = 0;
  virtual absl::Status DoExpertsAsync(const ExpertsJob& job, void* stream) = 0;
  virtual absl::Status DoChecksumChunks(const void* data, uint64_t chunk_bytes, uint64_t chunks,
                                        uint64_t seed, uint64_t* out, void* stream) = 0;
  virtual absl::Status DoSynchronizeStream(void* stream) = 0;
  virtual absl::Status DoWaitForEvent(void* stream, void* event) = 0;
  virtual absl::Status DoRecordEvent(void* event, void* stream) = 0;
  virtual absl::Status DoSynchronizeEvent(void* event) = 0;
  virtual absl::StatusOr<bool> DoQueryEvent(void* event) = 0;

  std::atomic<uint64_t> device_buffers_{0};
  std::atomic<uint64_t> device_bytes_{0};
  std::atomic<uint64_t> pinned_host_buffers_{0};
  std::atomic<uint64_t> pinned_host_bytes_{0};
  std::atomic<uint64_t> streams_{0};
  std::atomic<uint64_t> events_{0};
  std::atomic<uint64_t> registered_host_ranges_{0};
};

// Options of the host device.
struct HostDeviceOptions {
  // Total bytes Allocate() may hand out at once (the "device memory" size);
  // beyond it Allocate returns RESOURCE_EXHAUSTED. 0 means the machine's
  // physical memory.
  size_t memory_bytes = 0;
};

// A Device backed by host memory. Errors: INTERNAL if the physical memory size
// cannot be read (only when options.memory_bytes == 0).
absl::StatusOr<std::unique_ptr<Device>> CreateHostDevice(const HostDeviceOptions& options = {});

// The CUDA device with `ordinal`. INVALID_ARGUMENT if ordinal < 0; UNAVAILABLE
// with the reason otherwise: "strata built without CUDA", "no CUDA driver:
// <cuda error>", "no CUDA device", "ordinal N out of range (M devices)".
absl::StatusOr<std::unique_ptr<Device>> OpenCudaDevice(int ordinal);

// Number of CUDA devices usable by this process; 0 without CUDA, driver or device.
int CudaDeviceCount();

}  // namespace strata::gpu
