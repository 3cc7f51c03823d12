// Borrowing a Python object's memory for one call (python/README.md, "Buffers").
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#include "dlpack/dlpack.h"
#include "python/src/bindings.h"

namespace strata::python {
namespace {

const char* KindName(MemoryKind kind) {
  return kind == MemoryKind::kDevice       ? "device"
         : kind == MemoryKind::kPinnedHost ? "pinned"
                                           : "host";
}

[[noreturn]] void Invalid(const char* what, const std::string& why) {
  throw StatusError(absl::InvalidArgumentError(absl::StrCat(what, ": ", why)));
}

// The pending Python error's text (and clears it).
std::string TakePythonError() {
  py::error_already_set error;
  return error.what();
}

// 'i', 'u' or 'f' and the size of a struct-module format of one element; kind 0 otherwise.
char FormatKind(const char* format) {
  if (format == nullptr) return 'u';  // plain bytes
  const char* f = format;
  if (*f == '@' || *f == '=' || *f == '<' || *f == '>' || *f == '!') ++f;
  if (f[0] == '\0' || f[1] != '\0') return 0;
  switch (f[0]) {
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      return 'i';
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
    case 'c':
      return 'u';
    case 'e':
    case 'f':
    case 'd':
      return 'f';
    default:
      return 0;
  }
}

bool IsCContiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

void DeleteDlTensor(void* tensor) {
  auto* managed = static_cast<DLManagedTensor*>(tensor);
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

}  // namespace

BorrowedBuffer::~BorrowedBuffer() { Release(); }

BorrowedBuffer::BorrowedBuffer(BorrowedBuffer&& other) noexcept
    : memory_(other.memory_),
      element_kind_(other.element_kind_),
      element_bytes_(other.element_bytes_),
      view_(std::move(other.view_)),
      dl_tensor_(std::exchange(other.dl_tensor_, nullptr)),
      owner_(std::move(other.owner_)) {}

BorrowedBuffer& BorrowedBuffer::operator=(BorrowedBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    memory_ = other.memory_;
    element_kind_ = other.element_kind_;
    element_bytes_ = other.element_bytes_;
    view_ = std::move(other.view_);
    dl_tensor_ = std::exchange(other.dl_tensor_, nullptr);
    owner_ = std::move(other.owner_);
  }
  return *this;
}

void BorrowedBuffer::Release() {
  if (view_ != nullptr) {
    PyBuffer_Release(view_.get());
    view_.reset();
  }
  if (dl_tensor_ != nullptr) DeleteDlTensor(std::exchange(dl_tensor_, nullptr));
  owner_ = py::object();
  memory_ = MemoryDescriptor{};
}

BorrowedBuffer BorrowBuffer(py::handle object, Access access, const char* what) {
  BorrowedBuffer out;
  if (py::isinstance<DeviceMemory>(object)) {
    const auto& raw = object.cast<const DeviceMemory&>();
    out.memory_ = MemoryDescriptor{reinterpret_cast<void*>(raw.ptr), raw.nbytes, raw.kind,
                                   raw.kind == MemoryKind::kDevice ? raw.device : 0};
    out.owner_ = py::reinterpret_borrow<py::object>(object);
    return out;
  }
  if (py::hasattr(object, "__strata_memory__")) {  // strata.DeviceBuffer
    BorrowedBuffer inner = BorrowBuffer(object.attr("__strata_memory__")(), access, what);
    inner.owner_ = py::reinterpret_borrow<py::object>(object);
    return inner;
  }
  if (PyObject_CheckBuffer(object.ptr())) {
    auto view = std::make_unique<Py_buffer>();
    const int flags =
        PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (access == Access::kWrite ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), view.get(), flags) != 0) {
      const std::string why = TakePythonError();
      Invalid(what, access == Access::kWrite
                        ? absl::StrCat("needs a writable C-contiguous buffer (", why, ")")
                        : absl::StrCat("needs a C-contiguous buffer (", why, ")"));
    }
    out.memory_ = MemoryDescriptor::Host(view->buf, static_cast<size_t>(view->len));
    out.element_kind_ = FormatKind(view->format);
    out.element_bytes_ = view->itemsize > 0 ? static_cast<size_t>(view->itemsize) : 1;
    out.view_ = std::move(view);
    return out;
  }
  if (py::hasattr(object, "__dlpack__") && py::hasattr(object, "__dlpack_device__")) {
    if (py::hasattr(object, "requires_grad") && object.attr("requires_grad").cast<bool>()) {
      Invalid(what, "a tensor that requires grad (pass tensor.detach())");
    }
    py::tuple device = object.attr("__dlpack_device__")();
    const int device_type = device[0].cast<int>();
    const int device_id = device[1].cast<int>();
    MemoryKind kind;
    switch (device_type) {
      case kDLCPU:
        kind = MemoryKind::kHost;
        break;
      case kDLCUDAHost:
        kind = MemoryKind::kPinnedHost;
        break;
      case kDLCUDA:
      case kDLCUDAManaged:
        kind = MemoryKind::kDevice;
        break;
      default:
        Invalid(what, absl::StrCat("DLPack device type ", device_type,
                                   " (strata moves bytes to and from CPU and CUDA memory)"));
    }
    if (kind == MemoryKind::kDevice) {
      // strata's device copies run on their own streams: the producer's pending work on this
      // memory must be done first. For torch, wait for its current stream on that device.
      py::object torch = py::module_::import("sys").attr("modules").attr("get")("torch");
      if (!torch.is_none() && py::isinstance(object, torch.attr("Tensor"))) {
        torch.attr("cuda").attr("current_stream")(device_id).attr("synchronize")();
      }
    }
    py::object capsule = object.attr("__dlpack__")();
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (managed == nullptr) {
      Invalid(what, absl::StrCat("__dlpack__ gave no DLPack tensor (", TakePythonError(), ")"));
    }
    // Consumed: the capsule no longer deletes it; Release does.
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");
    out.dl_tensor_ = managed;
    out.owner_ = py::reinterpret_borrow<py::object>(object);
    const DLTensor& t = managed->dl_tensor;
    if (!IsCContiguous(t)) Invalid(what, "not contiguous (pass tensor.contiguous())");
    if (t.dtype.bits % 8 != 0 || t.dtype.lanes == 0) Invalid(what, "sub-byte element type");
    uint64_t elements = 1;
    for (int d = 0; d < t.ndim; ++d) elements *= static_cast<uint64_t>(t.shape[d]);
    const size_t element_bytes = size_t{t.dtype.bits} / 8 * t.dtype.lanes;
    out.memory_ = MemoryDescriptor{static_cast<char*>(t.data) + t.byte_offset,
                                   static_cast<size_t>(elements * element_bytes), kind,
                                   kind == MemoryKind::kDevice ? device_id : 0};
    out.element_bytes_ = element_bytes;
    out.element_kind_ = t.dtype.code == kDLInt     ? 'i'
                        : t.dtype.code == kDLUInt  ? 'u'
                        : t.dtype.code == kDLFloat ? 'f'
                                                   : 0;
    return out;
  }
  Invalid(what,
          absl::StrCat("a ", py::str(py::type::of(object).attr("__name__")).cast<std::string>(),
                       " has neither the buffer protocol nor __dlpack__ (pass a numpy "
                       "array, a torch tensor, a bytearray or a strata.DeviceMemory)"));
}

std::vector<TokenId> TokensFrom(py::handle object) {
  std::vector<TokenId> tokens;
  const bool array_like = PyObject_CheckBuffer(object.ptr()) ||
                          (py::hasattr(object, "__dlpack__") && !py::isinstance<py::list>(object));
  if (array_like && !py::isinstance<py::bytes>(object)) {
    BorrowedBuffer buffer = BorrowBuffer(object, Access::kRead, "tokens");
    const MemoryDescriptor& m = buffer.memory();
    if (m.kind == MemoryKind::kDevice) Invalid("tokens", "device memory (pass a CPU array)");
    const char kind = buffer.element_kind();
    const size_t width = buffer.element_bytes();
    if ((kind != 'i' && kind != 'u') || (width != 1 && width != 2 && width != 4 && width != 8)) {
      Invalid("tokens", "not an integer array");
    }
    const size_t n = m.bytes / width;
    tokens.resize(n);
    const auto* p = static_cast<const unsigned char*>(m.ptr);
    for (size_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (kind == 'i') {
        if (width == 1) v = reinterpret_cast<const int8_t*>(p)[i];
        if (width == 2) v = reinterpret_cast<const int16_t*>(p)[i];
        if (width == 4) v = reinterpret_cast<const int32_t*>(p)[i];
        if (width == 8) v = reinterpret_cast<const int64_t*>(p)[i];
      } else {
        uint64_t u = 0;
        if (width == 1) u = p[i];
        if (width == 2) u = reinterpret_cast<const uint16_t*>(p)[i];
        if (width == 4) u = reinterpret_cast<const uint32_t*>(p)[i];
        if (width == 8) u = reinterpret_cast<const uint64_t*>(p)[i];
        v = u > uint64_t{std::numeric_limits<TokenId>::max()} ? -1 : static_cast<int64_t>(u);
      }
      if (v < 0 || v > int64_t{std::numeric_limits<TokenId>::max()}) {
        Invalid("tokens", absl::StrCat("token ", i, " is outside 0..2^32-1"));
      }
      tokens[i] = static_cast<TokenId>(v);
    }
    return tokens;
  }
  if (py::isinstance<py::str>(object) || py::isinstance<py::bytes>(object)) {
    Invalid("tokens", "a string (pass token ids)");
  }
  for (py::handle item : py::iter(object)) {
    if (!PyLong_Check(item.ptr())) Invalid("tokens", "not an int");
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
    if (overflow != 0 || v < 0 || v > static_cast<long long>(std::numeric_limits<TokenId>::max())) {
      Invalid("tokens", absl::StrCat("token ", tokens.size(), " is outside 0..2^32-1"));
    }
    tokens.push_back(static_cast<TokenId>(v));
  }
  return tokens;
}

void BindBuffers(py::module_& m) {
  py::class_<DeviceMemory>(m, "DeviceMemory", R"doc(
A raw memory range the caller owns and vouches for, for buffers that neither the buffer
protocol nor DLPack describe (a KV cache's ``data_ptr()``, memory from another allocator).

``kind`` is ``"device"`` (CUDA device memory of ordinal ``device``), ``"host"`` or
``"pinned"`` (page-locked host memory). strata reads or writes exactly ``nbytes`` bytes at
``ptr`` during the call; nothing checks that the range is valid.)doc")
      .def(py::init([](uintptr_t ptr, size_t nbytes, const std::string& kind, int device) {
             DeviceMemory d;
             d.ptr = ptr;
             d.nbytes = nbytes;
             d.device = device;
             if (kind == "device") {
               d.kind = MemoryKind::kDevice;
             } else if (kind == "host") {
               d.kind = MemoryKind::kHost;
             } else if (kind == "pinned") {
               d.kind = MemoryKind::kPinnedHost;
             } else {
               Invalid("DeviceMemory", "kind must be \"device\", \"host\" or \"pinned\"");
             }
             if (ptr == 0) Invalid("DeviceMemory", "null pointer");
             if (device < 0) Invalid("DeviceMemory", "negative device");
             return d;
           }),
           py::arg("ptr"), py::arg("nbytes"), py::arg("kind") = "device", py::arg("device") = 0)
      .def_readonly("ptr", &DeviceMemory::ptr)
      .def_readonly("nbytes", &DeviceMemory::nbytes)
      .def_readonly("device", &DeviceMemory::device)
      .def_property_readonly("kind", [](const DeviceMemory& d) { return KindName(d.kind); })
      .def("__repr__", [](const DeviceMemory& d) {
        return absl::StrCat("DeviceMemory(ptr=0x", absl::Hex(d.ptr), ", nbytes=", d.nbytes,
                            ", kind='", KindName(d.kind), "', device=", d.device, ")");
      });
}

}  // namespace strata::python
