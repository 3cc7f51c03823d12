#include "gpu/cuda/cuda_device.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "gpu/cuda/cuda_status.h"
#include "gpu/cuda/kernels.h"
#include "strata/base/status_macros.h"
#include "strata/gpu/xxh3.h"

namespace strata::gpu {
namespace {

cudaStream_t AsStream(void* handle) { return static_cast<cudaStream_t>(handle); }
cudaEvent_t AsEvent(void* handle) { return static_cast<cudaEvent_t>(handle); }

// Logs a failure of a call that cannot report one (frees, destroys).
void LogIfError(cudaError_t error, absl::string_view operation) {
  if (error != cudaSuccess) LOG(ERROR) << FromCudaError(error, operation);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> OpenCudaDevice(int ordinal) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::Open(ordinal));
  return std::unique_ptr<Device>(std::move(device));
}

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  if (ordinal < 0) {
    return absl::InvalidArgumentError(absl::StrCat("OpenCudaDevice: negative ordinal ", ordinal));
  }
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaErrorNoDevice || (error == cudaSuccess && count == 0)) {
    return absl::UnavailableError("no CUDA device");
  }
  if (error != cudaSuccess) {
    return absl::UnavailableError(
        absl::StrCat("no CUDA driver: ", FromCudaError(error, "cudaGetDeviceCount").message()));
  }
  if (ordinal >= count) {
    return absl::UnavailableError(
        absl::StrCat("ordinal ", ordinal, " out of range (", count, " devices)"));
  }
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaSetDevice(ordinal), "cudaSetDevice"));
  cudaDeviceProp properties{};
  STRATA_RETURN_IF_ERROR(
      FromCudaError(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties"));
  return std::unique_ptr<CudaDevice>(
      new CudaDevice(ordinal, absl::StrCat("cuda:", ordinal, " (", properties.name, ")")));
}

absl::Status CudaDevice::Activate() const {
  return FromCudaError(cudaSetDevice(ordinal_), "cudaSetDevice");
}

absl::StatusOr<DeviceMemoryInfo> CudaDevice::DoGetMemoryInfo() {
  STRATA_RETURN_IF_ERROR(Activate());
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  STRATA_RETURN_IF_ERROR(
      FromCudaError(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  return DeviceMemoryInfo{.total_bytes = total_bytes, .free_bytes = free_bytes};
}

absl::StatusOr<void*> CudaDevice::DoAllocate(size_t bytes) {
  STRATA_RETURN_IF_ERROR(Activate());
  void* data = nullptr;
  STRATA_RETURN_IF_ERROR(
      FromCudaError(cudaMalloc(&data, bytes), absl::StrCat("cudaMalloc(", bytes, " bytes)")));
  return data;
}

absl::StatusOr<void*> CudaDevice::DoAllocatePinnedHost(size_t bytes) {
  STRATA_RETURN_IF_ERROR(Activate());
  void* data = nullptr;
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaHostAlloc(&data, bytes, cudaHostAllocPortable),
                                       absl::StrCat("cudaHostAlloc(", bytes, " bytes)")));
  return data;
}

void CudaDevice::DoFree(void* data, size_t bytes, MemoryKind kind) {
  LogIfError(cudaSetDevice(ordinal_), "cudaSetDevice");
  if (kind == MemoryKind::kPinnedHost) {
    LogIfError(cudaFreeHost(data), "cudaFreeHost");
  } else {
    LogIfError(cudaFree(data), "cudaFree");
  }
}

absl::Status CudaDevice::DoRegisterHost(void* ptr, size_t bytes, bool read_only) {
  STRATA_RETURN_IF_ERROR(Activate());
  // Mapped: kernels may read (paged KV scatter) straight from the registered memory.
  const unsigned flags = cudaHostRegisterPortable | cudaHostRegisterMapped |
                         (read_only ? cudaHostRegisterReadOnly : 0u);
  return FromCudaError(
      cudaHostRegister(ptr, bytes, flags),
      absl::StrCat("cudaHostRegister(", bytes, " bytes", read_only ? ", read-only" : "", ")"));
}

absl::Status CudaDevice::DoUnregisterHost(void* ptr) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaHostUnregister(ptr), "cudaHostUnregister");
}

absl::Status CudaDevice::DoReferenceKvAsync(const ReferenceKvJob& job, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(LaunchReferenceKv(job, AsStream(stream)), "reference KV kernels");
}

absl::Status CudaDevice::DoAttentionAsync(const AttentionJob& job, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(LaunchAttention(job, AsStream(stream)), "attention kernel");
}

absl::Status CudaDevice::DoExpertsAsync(const ExpertsJob& job, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(LaunchExperts(job, AsStream(stream)), "experts kernels");
}

absl::Status CudaDevice::DoChecksumChunks(const void* data, uint64_t chunk_bytes, uint64_t chunks,
                                          uint64_t seed, uint64_t* out, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  cudaStream_t s = AsStream(stream);
  void* sums = nullptr;
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaMallocAsync(&sums, chunks * sizeof(uint64_t), s),
                                       "cudaMallocAsync(chunk checksums)"));
  absl::Status status =
      FromCudaError(LaunchChecksumChunks(static_cast<const uint8_t*>(data), chunk_bytes, chunks,
                                         Xxh3Secrets::For(seed), static_cast<uint64_t*>(sums), s),
                    "checksum kernel");
  if (status.ok()) {
    status = FromCudaError(
        cudaMemcpyAsync(out, sums, chunks * sizeof(uint64_t), cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync(chunk checksums)");
  }
  (void)cudaFreeAsync(sums, s);
  const absl::Status synced = FromCudaError(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return status.ok() ? synced : status;
}

absl::StatusOr<std::string> CudaDevice::DoExportIpc(void* data, size_t /*bytes*/) {
  STRATA_RETURN_IF_ERROR(Activate());
  cudaIpcMemHandle_t handle;
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaIpcGetMemHandle(&handle, data), "cudaIpcGetMemHandle"));
  return std::string(reinterpret_cast<const char*>(&handle), sizeof(handle));
}

absl::StatusOr<void*> CudaDevice::DoOpenIpc(absl::string_view handle) {
  cudaIpcMemHandle_t h;
  if (handle.size() != sizeof(h)) {
    return absl::InvalidArgumentError(
        absl::StrCat("OpenIpc: a CUDA IPC handle has ", sizeof(h), " bytes, not ", handle.size()));
  }
  std::memcpy(&h, handle.data(), sizeof(h));
  STRATA_RETURN_IF_ERROR(Activate());
  void* base = nullptr;
  STRATA_RETURN_IF_ERROR(FromCudaError(
      cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle"));
  return base;
}

absl::Status CudaDevice::DoCloseIpc(void* base) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaIpcCloseMemHandle(base), "cudaIpcCloseMemHandle");
}

absl::StatusOr<void*> CudaDevice::DoCreateStream() {
  STRATA_RETURN_IF_ERROR(Activate());
  cudaStream_t stream = nullptr;
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                                       "cudaStreamCreateWithFlags"));
  return static_cast<void*>(stream);
}

void CudaDevice::DoDestroyStream(void* stream) {
  LogIfError(cudaSetDevice(ordinal_), "cudaSetDevice");
  LogIfError(cudaStreamDestroy(AsStream(stream)), "cudaStreamDestroy");
}

absl::StatusOr<void*> CudaDevice::DoCreateEvent() {
  STRATA_RETURN_IF_ERROR(Activate());
  cudaEvent_t event = nullptr;
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                                       "cudaEventCreateWithFlags"));
  return static_cast<void*>(event);
}

void CudaDevice::DoDestroyEvent(void* event) {
  LogIfError(cudaSetDevice(ordinal_), "cudaSetDevice");
  LogIfError(cudaEventDestroy(AsEvent(event)), "cudaEventDestroy");
}

absl::Status CudaDevice::DoCopyAsync(CopyDirection direction, void* dst, const void* src,
                                     size_t bytes, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  cudaMemcpyKind kind = cudaMemcpyDeviceToDevice;
  if (direction == CopyDirection::kHostToDevice) kind = cudaMemcpyHostToDevice;
  if (direction == CopyDirection::kDeviceToHost) kind = cudaMemcpyDeviceToHost;
  return FromCudaError(cudaMemcpyAsync(dst, src, bytes, kind, AsStream(stream)),
                       absl::StrCat("cudaMemcpyAsync(", bytes, " bytes)"));
}

absl::Status CudaDevice::DoPagedCopyAsync(bool scatter, void* blob, const BlobShape& shape,
                                          const PagedCache& cache, absl::Span<const uint64_t> rows,
                                          void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  // The tensor table (K of every layer, then V) and the rows, uploaded for this call into
  // stream-ordered device memory that is freed after the kernel.
  std::vector<uint8_t*> tensors;
  for (void* k : cache.k) tensors.push_back(static_cast<uint8_t*>(k));
  for (void* v : cache.v) tensors.push_back(static_cast<uint8_t*>(v));
  const size_t table_bytes = tensors.size() * sizeof(uint8_t*);
  const size_t rows_bytes = rows.size() * sizeof(uint64_t);
  void* scratch = nullptr;
  cudaStream_t s = AsStream(stream);
  STRATA_RETURN_IF_ERROR(FromCudaError(cudaMallocAsync(&scratch, table_bytes + rows_bytes, s),
                                       "cudaMallocAsync(paged KV tables)"));
  auto* table = static_cast<uint8_t* const*>(scratch);
  auto* device_rows =
      reinterpret_cast<const uint64_t*>(static_cast<uint8_t*>(scratch) + table_bytes);
  // From pageable memory (the table, and a copy of the rows so that a caller's pinned rows
  // may be reused at once): both copies are staged before cudaMemcpyAsync returns.
  const std::vector<uint64_t> host_rows(rows.begin(), rows.end());
  absl::Status status = FromCudaError(
      cudaMemcpyAsync(scratch, tensors.data(), table_bytes, cudaMemcpyHostToDevice, s),
      "cudaMemcpyAsync(paged KV table)");
  if (status.ok()) {
    status = FromCudaError(cudaMemcpyAsync(const_cast<uint64_t*>(device_rows), host_rows.data(),
                                           rows_bytes, cudaMemcpyHostToDevice, s),
                           "cudaMemcpyAsync(paged KV rows)");
  }
  if (status.ok()) {
    status = FromCudaError(
        LaunchPagedCopy(scatter, static_cast<uint8_t*>(blob), table, device_rows, shape.num_layers,
                        shape.num_pages, shape.page_tokens, shape.row_bytes, cache.row_stride,
                        shape.key_value ? 2 : 1, s),
        "paged KV kernel launch");
  }
  LogIfError(cudaFreeAsync(scratch, s), "cudaFreeAsync(paged KV tables)");
  return status;
}

absl::Status CudaDevice::DoMemsetAsync(void* dst, uint8_t value, size_t bytes, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaMemsetAsync(dst, value, bytes, AsStream(stream)),
                       absl::StrCat("cudaMemsetAsync(", bytes, " bytes)"));
}

absl::Status CudaDevice::DoSynchronizeStream(void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaStreamSynchronize(AsStream(stream)), "cudaStreamSynchronize");
}

absl::Status CudaDevice::DoWaitForEvent(void* stream, void* event) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaStreamWaitEvent(AsStream(stream), AsEvent(event), 0),
                       "cudaStreamWaitEvent");
}

absl::Status CudaDevice::DoRecordEvent(void* event, void* stream) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaEventRecord(AsEvent(event), AsStream(stream)), "cudaEventRecord");
}

absl::Status CudaDevice::DoSynchronizeEvent(void* event) {
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(cudaEventSynchronize(AsEvent(event)), "cudaEventSynchronize");
}

absl::StatusOr<bool> CudaDevice::DoQueryEvent(void* event) {
  STRATA_RETURN_IF_ERROR(Activate());
  const cudaError_t error = cudaEventQuery(AsEvent(event));
  if (error == cudaSuccess) return true;
  if (error == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not ready" is an answer, not an error to keep
    return false;
  }
  return FromCudaError(error, "cudaEventQuery");
}

absl::Status CudaDevice::FillPatternAsync(void* dst, size_t bytes, uint32_t seed, Stream& stream) {
  STRATA_ASSIGN_OR_RETURN(void* handle, StreamHandle(stream));
  if (bytes == 0) return absl::OkStatus();
  if (dst == nullptr) return absl::InvalidArgumentError("FillPatternAsync: dst is null");
  STRATA_RETURN_IF_ERROR(Activate());
  return FromCudaError(LaunchFillPattern(dst, bytes, seed, AsStream(handle)),
                       absl::StrCat("LaunchFillPattern(", bytes, " bytes)"));
}

}  // namespace strata::gpu
