// The `strata._strata` extension module (python/README.md): pybind11 bindings over libstrata.
// Each Bind* function adds one part of the module; module.cc calls them in order.
//
//   errors.cc   strata.Error and its subclasses, one per status code; StatusError, the C++
//               exception the bindings throw for a non-OK absl::Status
//   buffers.cc  BorrowBuffer: the memory of any Python object (buffer protocol, DLPack,
//               strata.DeviceMemory) as a MemoryDescriptor, and token lists
//   types.cc    the value types: KvLayout, Namespace, BlobKey, Segment, MatchResult, ...
//   client.cc   strata.Client
//   model.cc    strata.ReferenceModel and rebuild helpers (Python rebuild workers)
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "pybind11/pybind11.h"
#include "strata/client.h"

namespace strata::python {

namespace py = pybind11;

// ---------------------------------------------------------------- errors.cc

// Thrown by the bindings for a non-OK status; the module's translator raises the
// strata.Error subclass of its code (strata.NotFound, strata.DataLoss, ...) with
// `.code` (the code's name, "NOT_FOUND") and `.message`.
class StatusError : public std::exception {
 public:
  explicit StatusError(absl::Status status)
      : status_(std::move(status)), what_(status_.ToString()) {}
  const absl::Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  absl::Status status_;
  std::string what_;
};

inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw StatusError(status);
}
template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) throw StatusError(value.status());
  return *std::move(value);
}

// The exception object for a non-OK status (what a batch or a future reports).
// REQUIRES: the GIL; BindErrors ran.
py::object StatusToException(const absl::Status& status);

void BindErrors(py::module_& m);

// ---------------------------------------------------------------- buffers.cc

enum class Access { kRead, kWrite };  // kRead: a source (Write); kWrite: a destination (Read)

// The memory of one Python object, borrowed for one call. Holds the object's buffer view
// (buffer protocol) or its DLPack capsule until destroyed. REQUIRES: destroyed with the GIL
// held (Release gives the view back early, also under the GIL).
class BorrowedBuffer {
 public:
  BorrowedBuffer() = default;
  ~BorrowedBuffer();
  BorrowedBuffer(BorrowedBuffer&& other) noexcept;
  BorrowedBuffer& operator=(BorrowedBuffer&& other) noexcept;
  BorrowedBuffer(const BorrowedBuffer&) = delete;
  BorrowedBuffer& operator=(const BorrowedBuffer&) = delete;

  const MemoryDescriptor& memory() const { return memory_; }
  // Element type where the object says ('i' signed, 'u' unsigned, 'f' float; 0 unknown) and
  // element size in bytes.
  char element_kind() const { return element_kind_; }
  size_t element_bytes() const { return element_bytes_; }
  void Release();

 private:
  friend BorrowedBuffer BorrowBuffer(py::handle object, Access access, const char* what);
  MemoryDescriptor memory_;
  char element_kind_ = 0;
  size_t element_bytes_ = 1;
  std::unique_ptr<Py_buffer> view_;  // buffer protocol
  void* dl_tensor_ = nullptr;        // DLManagedTensor*, consumed from its capsule
  py::object owner_;                 // strata.DeviceMemory or the exporting object
};

// strata.DeviceMemory: a raw range the caller owns (e.g. a vLLM KV cache's data_ptr()).
struct DeviceMemory {
  uintptr_t ptr = 0;
  size_t nbytes = 0;
  MemoryKind kind = MemoryKind::kDevice;
  int device = 0;
};

// The memory of `object`, which must be one C-contiguous block:
//   - a strata.DeviceMemory (a raw pointer the caller vouches for: host, pinned or device);
//   - an object with the buffer protocol (bytes — sources only —, bytearray, memoryview,
//     numpy.ndarray, array.array, mmap);
//   - an object with __dlpack__ / __dlpack_device__ (torch.Tensor on CPU or CUDA, numpy,
//     cupy, jax): kDLCPU is host memory, kDLCUDAHost pinned host, kDLCUDA / kDLCUDAManaged
//     device memory of that ordinal.
// Throws StatusError INVALID_ARGUMENT naming `what` for anything else: not contiguous,
// read-only as a destination, a device type libstrata cannot move bytes to, a tensor that
// requires grad (DLPack refuses to export it). REQUIRES: the GIL.
BorrowedBuffer BorrowBuffer(py::handle object, Access access, const char* what);

// Token ids from a sequence of ints, or an integer array (buffer protocol or DLPack on the
// CPU; any integer width). INVALID_ARGUMENT a value outside 0..2^32-1 or a non-integer.
// REQUIRES: the GIL.
std::vector<TokenId> TokensFrom(py::handle object);

// strata.DeviceMemory: a raw memory range the caller owns.
void BindBuffers(py::module_& m);

// ---------------------------------------------------------------- types.cc, client.cc, model.cc

void BindTypes(py::module_& m);
void BindClient(py::module_& m);
void BindModel(py::module_& m);

// Seconds (a Python float or None) as a CallOptions deadline from now; None: the client's
// default timeout.
CallOptions CallFromTimeout(const py::object& timeout);

}  // namespace strata::python
