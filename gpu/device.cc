#include "strata/gpu/device.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::gpu {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// INVALID_ARGUMENT if [p, p + bytes) is null or wraps around the address space.
absl::Status CheckRange(const void* p, size_t bytes, absl::string_view what) {
  if (p == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  if (reinterpret_cast<uintptr_t>(p) > UINTPTR_MAX - bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " range of ", bytes, " bytes wraps"));
  }
  return absl::OkStatus();
}

}  // namespace

Device::~Device() {
  // The RAII owners call back into this Device: none may outlive it.
  const DeviceStats s = stats();
  // A host range still registered would outlive the Device's context (undefined
  // behaviour once the memory is unmapped): callers must UnregisterHost first.
  CHECK(s.device_buffers == 0 && s.pinned_host_buffers == 0 && s.streams == 0 && s.events == 0 &&
        s.registered_host_ranges == 0)
      << "Device destroyed while objects it made are alive: " << s.device_buffers
      << " device buffers, " << s.pinned_host_buffers << " pinned host buffers, " << s.streams
      << " streams, " << s.events << " events, " << s.registered_host_ranges
      << " registered host ranges";
}

DeviceStats Device::stats() const {
  DeviceStats s;
  s.device_buffers = device_buffers_.load(kRelaxed);
  s.device_bytes = device_bytes_.load(kRelaxed);
  s.pinned_host_buffers = pinned_host_buffers_.load(kRelaxed);
  s.pinned_host_bytes = pinned_host_bytes_.load(kRelaxed);
  s.streams = streams_.load(kRelaxed);
  s.events = events_.load(kRelaxed);
  s.registered_host_ranges = registered_host_ranges_.load(kRelaxed);
  return s;
}

absl::StatusOr<DeviceMemoryInfo> Device::GetMemoryInfo() { return DoGetMemoryInfo(); }

absl::StatusOr<DeviceBuffer> Device::Allocate(size_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("Allocate: zero bytes");
  STRATA_ASSIGN_OR_RETURN(void* data, DoAllocate(bytes));
  CHECK(data != nullptr) << name() << ": DoAllocate returned null";
  device_buffers_.fetch_add(1, kRelaxed);
  device_bytes_.fetch_add(bytes, kRelaxed);
  return DeviceBuffer(this, data, bytes, memory_kind(), ordinal());
}

absl::StatusOr<DeviceBuffer> Device::AllocatePinnedHost(size_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("AllocatePinnedHost: zero bytes");
  STRATA_ASSIGN_OR_RETURN(void* data, DoAllocatePinnedHost(bytes));
  CHECK(data != nullptr) << name() << ": DoAllocatePinnedHost returned null";
  pinned_host_buffers_.fetch_add(1, kRelaxed);
  pinned_host_bytes_.fetch_add(bytes, kRelaxed);
  return DeviceBuffer(this, data, bytes, MemoryKind::kPinnedHost, ordinal());
}

void Device::ReleaseBuffer(void* data, size_t bytes, MemoryKind kind) {
  DoFree(data, bytes, kind);
  if (kind == MemoryKind::kPinnedHost) {
    pinned_host_buffers_.fetch_sub(1, kRelaxed);
    pinned_host_bytes_.fetch_sub(bytes, kRelaxed);
  } else {
    device_buffers_.fetch_sub(1, kRelaxed);
    device_bytes_.fetch_sub(bytes, kRelaxed);
  }
}

absl::Status Device::ScatterPagedAsync(const void* blob, const BlobShape& shape,
                                       const PagedCache& cache, absl::Span<const uint64_t> rows,
                                       Stream& stream) {
  if (blob == nullptr) return absl::InvalidArgumentError("ScatterPagedAsync: blob is null");
  STRATA_RETURN_IF_ERROR(CheckPagedTransfer(shape, cache, rows, /*scatter=*/true));
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoPagedCopyAsync(true, const_cast<void*>(blob), shape, cache, rows, handle);
}

absl::Status Device::ChecksumChunks(const void* data, uint64_t chunk_bytes, uint64_t chunks,
                                    uint64_t seed, uint64_t* out, Stream& stream) {
  if (chunks == 0) return absl::OkStatus();
  if (data == nullptr || out == nullptr || chunk_bytes == 0) {
    return absl::InvalidArgumentError("ChecksumChunks: null data or out, or chunk_bytes 0");
  }
  if (chunk_bytes > UINT64_MAX / chunks) {
    return absl::InvalidArgumentError("ChecksumChunks: the range wraps");
  }
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoChecksumChunks(data, chunk_bytes, chunks, seed, out, handle);
}

absl::Status Device::AttentionAsync(const AttentionJob& job, Stream& stream) {
  STRATA_RETURN_IF_ERROR(CheckAttentionJob(job));
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoAttentionAsync(job, handle);
}

absl::Status Device::ExpertsAsync(const ExpertsJob& job, Stream& stream) {
  STRATA_RETURN_IF_ERROR(CheckExpertsJob(job));
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoExpertsAsync(job, handle);
}

absl::Status Device::ReferenceKvAsync(const ReferenceKvJob& job, Stream& stream) {
  STRATA_RETURN_IF_ERROR(CheckReferenceKvJob(job));
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoReferenceKvAsync(job, handle);
}

absl::Status Device::GatherPagedAsync(void* blob, const BlobShape& shape, const PagedCache& cache,
                                      absl::Span<const uint64_t> rows, Stream& stream) {
  if (blob == nullptr) return absl::InvalidArgumentError("GatherPagedAsync: blob is null");
  STRATA_RETURN_IF_ERROR(CheckPagedTransfer(shape, cache, rows, /*scatter=*/false));
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoPagedCopyAsync(false, blob, shape, cache, rows, handle);
}

absl::Status Device::RegisterHost(void* ptr, size_t bytes, bool read_only) {
  if (bytes == 0) return absl::InvalidArgumentError("RegisterHost: zero bytes");
  STRATA_RETURN_IF_ERROR(CheckRange(ptr, bytes, "RegisterHost: ptr"));
  STRATA_RETURN_IF_ERROR(DoRegisterHost(ptr, bytes, read_only));
  registered_host_ranges_.fetch_add(1, kRelaxed);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Device::ExportIpc(const DeviceBuffer& buffer) {
  if (buffer.empty() || buffer.owner_ != this || buffer.kind() != memory_kind()) {
    return absl::InvalidArgumentError("ExportIpc: not a device buffer of this device");
  }
  return DoExportIpc(buffer.data(), buffer.size());
}

absl::StatusOr<void*> Device::OpenIpc(absl::string_view handle) {
  if (handle.empty()) return absl::InvalidArgumentError("OpenIpc: empty handle");
  return DoOpenIpc(handle);
}

absl::Status Device::CloseIpc(void* base) {
  if (base == nullptr) return absl::InvalidArgumentError("CloseIpc: base is null");
  return DoCloseIpc(base);
}

absl::Status Device::UnregisterHost(void* ptr) {
  if (ptr == nullptr) return absl::InvalidArgumentError("UnregisterHost: ptr is null");
  STRATA_RETURN_IF_ERROR(DoUnregisterHost(ptr));
  registered_host_ranges_.fetch_sub(1, kRelaxed);
  return absl::OkStatus();
}

absl::StatusOr<Stream> Device::CreateStream() {
  STRATA_ASSIGN_OR_RETURN(void* handle, DoCreateStream());
  CHECK(handle != nullptr) << name() << ": DoCreateStream returned null";
  streams_.fetch_add(1, kRelaxed);
  return Stream(this, handle);
}

void Device::ReleaseStream(void* handle) {
  DoDestroyStream(handle);
  streams_.fetch_sub(1, kRelaxed);
}

absl::StatusOr<Event> Device::CreateEvent() {
  STRATA_ASSIGN_OR_RETURN(void* handle, DoCreateEvent());
  CHECK(handle != nullptr) << name() << ": DoCreateEvent returned null";
  events_.fetch_add(1, kRelaxed);
  return Event(this, handle);
}

void Device::ReleaseEvent(void* handle) {
  DoDestroyEvent(handle);
  events_.fetch_sub(1, kRelaxed);
}

absl::StatusOr<void*> Device::StreamHandle(const Stream& stream) const {
  if (stream.empty()) return absl::InvalidArgumentError("stream is empty");
  if (stream.owner_ != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("stream belongs to another device, not ", name()));
  }
  return stream.handle_;
}

absl::StatusOr<void*> Device::EventHandle(const Event& event) const {
  if (event.empty()) return absl::InvalidArgumentError("event is empty");
  if (event.owner_ != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("event belongs to another device, not ", name()));
  }
  return event.handle_;
}

absl::Status Device::CopyAsync(CopyDirection direction, void* dst, const void* src, size_t bytes,
                               Stream& stream) {
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  if (bytes == 0) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(CheckRange(dst, bytes, "copy destination"));
  STRATA_RETURN_IF_ERROR(CheckRange(src, bytes, "copy source"));
  return DoCopyAsync(direction, dst, src, bytes, handle);
}

absl::Status Device::CopyToDeviceAsync(void* dst, const void* src, size_t bytes, Stream& stream) {
  return CopyAsync(CopyDirection::kHostToDevice, dst, src, bytes, stream);
}

absl::Status Device::CopyToHostAsync(void* dst, const void* src, size_t bytes, Stream& stream) {
  return CopyAsync(CopyDirection::kDeviceToHost, dst, src, bytes, stream);
}

absl::Status Device::CopyDeviceToDeviceAsync(void* dst, const void* src, size_t bytes,
                                             Stream& stream) {
  return CopyAsync(CopyDirection::kDeviceToDevice, dst, src, bytes, stream);
}

absl::Status Device::MemsetAsync(void* dst, uint8_t value, size_t bytes, Stream& stream) {
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  if (bytes == 0) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(CheckRange(dst, bytes, "memset destination"));
  return DoMemsetAsync(dst, value, bytes, handle);
}

absl::Status Device::Synchronize(Stream& stream) {
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  return DoSynchronizeStream(handle);
}

absl::Status Device::WaitForEvent(Stream& stream, const Event& event) {
  STRATA_ASSIGN_OR_RETURN(void* stream_handle, StreamHandle(stream));
  STRATA_ASSIGN_OR_RETURN(void* event_handle, EventHandle(event));
  return DoWaitForEvent(stream_handle, event_handle);
}

absl::Status Device::RecordEvent(void* event, Stream& stream) {
  STRATA_ASSIGN_OR_RETURN(void* stream_handle, StreamHandle(stream));
  return DoRecordEvent(event, stream_handle);
}

absl::Status Device::SynchronizeEvent(void* event) { return DoSynchronizeEvent(event); }

absl::StatusOr<bool> Device::QueryEvent(void* event) { return DoQueryEvent(event); }

}  // namespace strata::gpu
