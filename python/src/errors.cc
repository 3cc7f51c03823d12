// strata.Error and one subclass per status code (python/README.md, "Errors").
#include <array>
#include <string>

#include "absl/status/status.h"

#include "python/src/bindings.h"

namespace strata::python {
namespace {

struct ErrorClass {
  absl::StatusCode code;
  const char* name;        // the Python class
  PyObject* builtin_base;  // a built-in exception it also derives from, or null
  const char* doc;
};

// Filled in BindErrors (the built-in bases are not constants).
std::array<ErrorClass, 16> error_classes;
// strata.Error and the classes above, by absl::StatusCode value (0..16); owned by the module.
std::array<PyObject*, 17> classes_by_code{};
PyObject* base_error = nullptr;

}  // namespace

py::object StatusToException(const absl::Status& status) {
  const int code = static_cast<int>(status.code());
  PyObject* cls = (code > 0 && code < static_cast<int>(classes_by_code.size()) &&
                   classes_by_code[code] != nullptr)
                      ? classes_by_code[code]
                      : base_error;
  const std::string message(status.message());
  py::object exception = py::reinterpret_borrow<py::object>(cls)(message);
  exception.attr("code") = absl::StatusCodeToString(status.code());
  exception.attr("message") = message;
  return exception;
}

void BindErrors(py::module_& m) {
  error_classes = {{
      {absl::StatusCode::kCancelled, "Cancelled", nullptr,
       "CANCELLED: the call was cancelled (the client is closing)."},
      {absl::StatusCode::kUnknown, "UnknownError", nullptr, "UNKNOWN: an unclassified error."},
      {absl::StatusCode::kInvalidArgument, "InvalidArgument", PyExc_ValueError,
       "INVALID_ARGUMENT: a malformed request (sizes, layout, tokens, a buffer that cannot be "
       "used)."},
      {absl::StatusCode::kDeadlineExceeded, "DeadlineExceeded", PyExc_TimeoutError,
       "DEADLINE_EXCEEDED: the call's deadline passed."},
      {absl::StatusCode::kNotFound, "NotFound", PyExc_LookupError,
       "NOT_FOUND: a miss (the blob is no longer cached), an unknown key or namespace."},
      {absl::StatusCode::kAlreadyExists, "AlreadyExists", nullptr,
       "ALREADY_EXISTS: the thing to create exists."},
      {absl::StatusCode::kPermissionDenied, "PermissionDenied", PyExc_PermissionError,
       "PERMISSION_DENIED: the tenant's token does not allow the call."},
      {absl::StatusCode::kResourceExhausted, "ResourceExhausted", nullptr,
       "RESOURCE_EXHAUSTED: a tier, quota or queue is full."},
      {absl::StatusCode::kFailedPrecondition, "FailedPrecondition", nullptr,
       "FAILED_PRECONDITION: a layout mismatch, an unknown parent, a pinned blob."},
      {absl::StatusCode::kAborted, "Aborted", nullptr, "ABORTED: the call was aborted."},
      {absl::StatusCode::kOutOfRange, "OutOfRange", PyExc_IndexError,
       "OUT_OF_RANGE: pages past a blob's end."},
      {absl::StatusCode::kUnimplemented, "Unimplemented", PyExc_NotImplementedError,
       "UNIMPLEMENTED: not available here (e.g. a node's own call on a cluster client)."},
      {absl::StatusCode::kInternal, "InternalError", nullptr, "INTERNAL: a bug; please report."},
      {absl::StatusCode::kUnavailable, "Unavailable", PyExc_ConnectionError,
       "UNAVAILABLE: the node cannot be reached, or is draining for writes."},
      {absl::StatusCode::kDataLoss, "DataLoss", nullptr,
       "DATA_LOSS: bytes did not verify against their checksums; nothing corrupt was "
       "returned as good."},
      {absl::StatusCode::kUnauthenticated, "Unauthenticated", nullptr,
       "UNAUTHENTICATED: no token, or one the node does not know."},
  }};
  base_error = PyErr_NewExceptionWithDoc(
      "strata.Error",
      "Base of every error strata raises. `code` is the status code's name (\"NOT_FOUND\"), "
      "`message` the node's or library's text.",
      nullptr, nullptr);
  if (base_error == nullptr) throw py::error_already_set();
  m.attr("Error") = py::reinterpret_steal<py::object>(base_error);
  for (const ErrorClass& c : error_classes) {
    py::tuple bases = c.builtin_base != nullptr
                          ? py::make_tuple(py::handle(base_error), py::handle(c.builtin_base))
                          : py::make_tuple(py::handle(base_error));
    const std::string qualified = std::string("strata.") + c.name;
    PyObject* cls =
        PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases.ptr(), /*dict=*/nullptr);
    if (cls == nullptr) throw py::error_already_set();
    m.attr(c.name) = py::reinterpret_steal<py::object>(cls);
    classes_by_code[static_cast<int>(c.code)] = cls;
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      py::object exception = StatusToException(e.status());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
    }
  });
}

}  // namespace strata::python
