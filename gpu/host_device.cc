#include "gpu/host_device.h"

#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "xxhash.h"

namespace strata::gpu {
namespace {

constexpr std::align_val_t kDeviceAlignment{256};
constexpr std::align_val_t kPinnedAlignment{4096};

// Streams and events of the host device: work runs when enqueued, so they carry
// no state; distinct heap objects give them identity (and let ASan catch misuse).
struct HostStream {
  int unused = 0;
};
struct HostEvent {
  int unused = 0;
};

bool Overlaps(uintptr_t a, size_t a_bytes, uintptr_t b, size_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

// Whether [p, p + bytes) overlaps one of `ranges` (start -> bytes, disjoint).
bool OverlapsAny(const std::map<uintptr_t, size_t>& ranges, uintptr_t p, size_t bytes) {
  auto it = ranges.upper_bound(p);
  if (it != ranges.end() && Overlaps(p, bytes, it->first, it->second)) return true;
  if (it != ranges.begin()) {
    --it;
    if (Overlaps(p, bytes, it->first, it->second)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> CreateHostDevice(const HostDeviceOptions& options) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) {
    return absl::InternalError("CreateHostDevice: cannot read the physical memory size");
  }
  const size_t physical = static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  const size_t memory_bytes = options.memory_bytes != 0 ? options.memory_bytes : physical;
  return std::make_unique<HostDevice>(memory_bytes, physical);
}

HostDevice::HostDevice(size_t memory_bytes, size_t pinned_limit_bytes)
    : memory_bytes_(memory_bytes), pinned_limit_bytes_(pinned_limit_bytes) {
  CHECK_GT(memory_bytes_, 0u);
  CHECK_GT(pinned_limit_bytes_, 0u);
}

namespace {

// Host-device buffers exported in this process (address -> bytes): a handle opens only
// while its buffer is live, so a stale or forged handle never becomes a wild pointer.
absl::Mutex exported_mu(absl::kConstInit);
std::map<uintptr_t, size_t>& Exported() ABSL_EXCLUSIVE_LOCKS_REQUIRED(exported_mu) {
  static auto* exported = new std::map<uintptr_t, size_t>();
  return *exported;
}

constexpr absl::string_view kIpcPrefix = "strata-host-ipc";

}  // namespace

absl::StatusOr<std::string> HostDevice::DoExportIpc(void* data, size_t bytes) {
  const auto p = reinterpret_cast<uintptr_t>(data);
  absl::MutexLock lock(&exported_mu);
  Exported()[p] = bytes;
  return absl::StrCat(kIpcPrefix, ":", ::getpid(), ":", absl::Hex(p), ":", bytes);
}

absl::StatusOr<void*> HostDevice::DoOpenIpc(absl::string_view handle) {
  const std::vector<absl::string_view> parts = absl::StrSplit(handle, ':');
  int64_t pid = 0;
  uint64_t p = 0;
  uint64_t bytes = 0;
  if (parts.size() != 4 || parts[0] != kIpcPrefix || !absl::SimpleAtoi(parts[1], &pid) ||
      !absl::SimpleHexAtoi(parts[2], &p) || !absl::SimpleAtoi(parts[3], &bytes)) {
    return absl::InvalidArgumentError("host device: OpenIpc: not a host-device IPC handle");
  }
  if (pid != ::getpid()) {
    return absl::FailedPreconditionError(
        "host device: OpenIpc: host-device memory is not shared between processes (the handle "
        "is another process's)");
  }
  {
    absl::MutexLock lock(&exported_mu);
    auto it = Exported().find(p);
    if (it == Exported().end() || it->second != bytes) {
      return absl::NotFoundError("host device: OpenIpc: no live exported buffer has this handle");
    }
  }
  absl::MutexLock lock(&mu_);
  imported_[p] = bytes;
  return reinterpret_cast<void*>(p);
}

absl::Status HostDevice::DoCloseIpc(void* base) {
  absl::MutexLock lock(&mu_);
  if (imported_.erase(reinterpret_cast<uintptr_t>(base)) == 0) {
    return absl::NotFoundError("host device: CloseIpc of memory not opened");
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceMemoryInfo> HostDevice::DoGetMemoryInfo() {
  absl::MutexLock lock(&mu_);
  return DeviceMemoryInfo{.total_bytes = memory_bytes_,
                          .free_bytes = memory_bytes_ - device_bytes_in_use_};
}

absl::StatusOr<void*> HostDevice::DoAllocate(size_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    if (bytes > memory_bytes_ - device_bytes_in_use_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("host device: Allocate(", bytes, ") exceeds the free ",
                       memory_bytes_ - device_bytes_in_use_, " of ", memory_bytes_, " bytes"));
    }
    device_bytes_in_use_ += bytes;
  }
  void* data = ::operator new(bytes, kDeviceAlignment, std::nothrow);
  absl::MutexLock lock(&mu_);
  if (data == nullptr) {
    device_bytes_in_use_ -= bytes;
    return absl::ResourceExhaustedError(
        absl::StrCat("host device: out of host memory allocating ", bytes, " bytes"));
  }
  device_buffers_.emplace(reinterpret_cast<uintptr_t>(data), bytes);
  return data;
}

absl::StatusOr<void*> HostDevice::DoAllocatePinnedHost(size_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    if (bytes > pinned_limit_bytes_ - pinned_bytes_in_use_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "host device: AllocatePinnedHost(", bytes, ") exceeds the free ",
          pinned_limit_bytes_ - pinned_bytes_in_use_, " of ", pinned_limit_bytes_, " bytes"));
    }
    pinned_bytes_in_use_ += bytes;
  }
  void* data = ::operator new(bytes, kPinnedAlignment, std::nothrow);
  if (data == nullptr) {
    absl::MutexLock lock(&mu_);
    pinned_bytes_in_use_ -= bytes;
    return absl::ResourceExhaustedError(
        absl::StrCat("host device: out of host memory allocating ", bytes, " pinned bytes"));
  }
  return data;
}

void HostDevice::DoFree(void* data, size_t bytes, MemoryKind kind) {
  if (kind == MemoryKind::kPinnedHost) {
    ::operator delete(data, kPinnedAlignment);
    absl::MutexLock lock(&mu_);
    pinned_bytes_in_use_ -= bytes;
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    const size_t erased = device_buffers_.erase(reinterpret_cast<uintptr_t>(data));
    CHECK_EQ(erased, 1u) << "host device: freeing unknown buffer " << data;
    device_bytes_in_use_ -= bytes;
  }
  {
    absl::MutexLock lock(&exported_mu);
    Exported().erase(reinterpret_cast<uintptr_t>(data));
  }
  ::operator delete(data, kDeviceAlignment);
}

absl::Status HostDevice::DoPagedCopyAsync(bool scatter, void* blob, const BlobShape& shape,
                                          const PagedCache& cache, absl::Span<const uint64_t> rows,
                                          void* /*stream*/) {
  // Every tensor must be device memory: its rows, to the last one, inside one live buffer.
  const uint64_t extent = (cache.rows - 1) * cache.row_stride + shape.row_bytes;
  for (size_t l = 0; l < cache.k.size(); ++l) {
    STRATA_RETURN_IF_ERROR(CheckDeviceRange(cache.k[l], extent, "paged KV: a K tensor"));
    if (!cache.v.empty()) {
      STRATA_RETURN_IF_ERROR(CheckDeviceRange(cache.v[l], extent, "paged KV: a V tensor"));
    }
  }
  if (scatter) {
    ScatterPagedReference(blob, shape, cache, rows);
  } else {
    GatherPagedReference(blob, shape, cache, rows);
  }
  return absl::OkStatus();
}

absl::Status HostDevice::DoRegisterHost(void* ptr, size_t bytes, bool /*read_only*/) {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&mu_);
  if (OverlapsAny(registered_, p, bytes)) {
    return absl::AlreadyExistsError(absl::StrCat("host device: RegisterHost(", absl::Hex(p), ", ",
                                                 bytes, ") overlaps a registered range"));
  }
  registered_.emplace(p, bytes);
  return absl::OkStatus();
}

absl::Status HostDevice::DoUnregisterHost(void* ptr) {
  absl::MutexLock lock(&mu_);
  if (registered_.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) {
    return absl::NotFoundError(absl::StrCat("host device: UnregisterHost(",
                                            absl::Hex(reinterpret_cast<uintptr_t>(ptr)),
                                            "): not registered"));
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> HostDevice::DoCreateStream() { return new HostStream; }

void HostDevice::DoDestroyStream(void* stream) { delete static_cast<HostStream*>(stream); }

absl::StatusOr<void*> HostDevice::DoCreateEvent() { return new HostEvent; }

void HostDevice::DoDestroyEvent(void* event) { delete static_cast<HostEvent*>(event); }

absl::Status HostDevice::CheckDeviceRange(const void* p, size_t bytes,
                                          absl::string_view what) const {
  const auto start = reinterpret_cast<uintptr_t>(p);
  absl::MutexLock lock(&mu_);
  for (const std::map<uintptr_t, size_t>* buffers : {&device_buffers_, &imported_}) {
    auto it = buffers->upper_bound(start);
    if (it == buffers->begin()) continue;
    --it;
    const uintptr_t buffer_end = it->first + it->second;
    if (start < buffer_end) {
      if (bytes > buffer_end - start) {
        return absl::OutOfRangeError(absl::StrCat(
            "host device: ", what, " [", absl::Hex(start), ", +", bytes,
            ") runs past the end of its ", it->second, "-byte buffer at ", absl::Hex(it->first)));
      }
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("host device: ", what, " ", absl::Hex(start),
                                                 " is not in a live device buffer"));
}

absl::Status HostDevice::DoCopyAsync(CopyDirection direction, void* dst, const void* src,
                                     size_t bytes, void* stream) {
  if (direction != CopyDirection::kDeviceToHost) {
    STRATA_RETURN_IF_ERROR(CheckDeviceRange(dst, bytes, "copy destination"));
  }
  if (direction != CopyDirection::kHostToDevice) {
    STRATA_RETURN_IF_ERROR(CheckDeviceRange(src, bytes, "copy source"));
  }
  if (Overlaps(reinterpret_cast<uintptr_t>(dst), bytes, reinterpret_cast<uintptr_t>(src), bytes)) {
    return absl::InvalidArgumentError("host device: copy source and destination overlap");
  }
  std::memcpy(dst, src, bytes);
  return absl::OkStatus();
}

absl::Status HostDevice::DoMemsetAsync(void* dst, uint8_t value, size_t bytes, void* stream) {
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(dst, bytes, "memset destination"));
  std::memset(dst, value, bytes);
  return absl::OkStatus();
}

absl::Status HostDevice::DoReferenceKvAsync(const ReferenceKvJob& job, void* /*stream*/) {
  using reference::kModelDim;
  const uint64_t floats = sizeof(float);
  STRATA_RETURN_IF_ERROR(
      CheckDeviceRange(job.weights, uint64_t{job.layers} * kModelDim * job.layer_columns * floats,
                       "reference KV: weights"));
  STRATA_RETURN_IF_ERROR(
      CheckDeviceRange(job.hidden, job.tokens * kModelDim * floats, "reference KV: hidden"));
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.projected, job.tokens * job.layer_columns * floats,
                                          "reference KV: projected"));
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(
      job.running_mean, uint64_t{job.layers} * kModelDim * floats, "reference KV: running mean"));
  if (job.out != nullptr) {
    STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.out, job.OutBytes(), "reference KV: the blob"));
  }
  RunReferenceKvOnHost(job);
  return absl::OkStatus();
}

absl::Status HostDevice::DoAttentionAsync(const AttentionJob& job, void* /*stream*/) {
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.blob, job.BlobBytes(), "attention: the blob"));
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(
      job.out, uint64_t{job.heads} * job.head_dim * sizeof(float), "attention: out"));
  RunAttentionOnHost(job);
  return absl::OkStatus();
}

absl::Status HostDevice::DoExpertsAsync(const ExpertsJob& job, void* /*stream*/) {
  const uint64_t w = job.width;
  const uint64_t f = sizeof(float);
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.o, w * f, "experts: o"));
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.router, job.experts * w * f, "experts: router"));
  STRATA_RETURN_IF_ERROR(
      CheckDeviceRange(job.weights, job.experts * w * w * f, "experts: weights"));
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.logits, job.experts * f, "experts: logits"));
  STRATA_RETURN_IF_ERROR(
      CheckDeviceRange(job.chosen, job.top_k * sizeof(uint32_t), "experts: chosen"));
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(job.out, w * f, "experts: out"));
  RunExpertsOnHost(job);
  return absl::OkStatus();
}

absl::Status HostDevice::DoChecksumChunks(const void* data, uint64_t chunk_bytes, uint64_t chunks,
                                          uint64_t seed, uint64_t* out, void* /*stream*/) {
  STRATA_RETURN_IF_ERROR(CheckDeviceRange(data, chunk_bytes * chunks, "checksummed range"));
  // libxxhash itself: the reference the portable XXH3 (the CUDA kernel's) is tested against.
  const auto* p = static_cast<const uint8_t*>(data);
  for (uint64_t i = 0; i < chunks; ++i)
    out[i] = XXH3_64bits_withSeed(p + i * chunk_bytes, chunk_bytes, seed);
  return absl::OkStatus();
}

absl::Status HostDevice::DoSynchronizeStream(void* stream) { return absl::OkStatus(); }

absl::Status HostDevice::DoWaitForEvent(void* stream, void* event) { return absl::OkStatus(); }

absl::Status HostDevice::DoRecordEvent(void* event, void* stream) { return absl::OkStatus(); }

absl::Status HostDevice::DoSynchronizeEvent(void* event) { return absl::OkStatus(); }

absl::StatusOr<bool> HostDevice::DoQueryEvent(void* event) { return true; }

}  // namespace strata::gpu
