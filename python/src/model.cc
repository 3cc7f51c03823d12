// strata.ReferenceModel: libstrata's deterministic reference model (client/worker), so that
// Python programs and tests can compute KV bytes a node can verify, and Python rebuild
// workers can recompute evicted blobs (python/README.md, "Rebuild workers").
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/tools/rebuild_worker.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "strata/worker/reference_model.h"

namespace strata::python {
namespace {

using worker::ReferenceModel;

py::bytearray NewByteArray(size_t bytes) {
  return py::reinterpret_steal<py::bytearray>(
      PyByteArray_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(bytes)));
}

}  // namespace

void BindModel(py::module_& m) {
  py::class_<ReferenceModel>(m, "ReferenceModel", R"doc(
strata's reference model: a small deterministic transformer stand-in whose KV bytes depend
on every earlier token (as a real model's do), in any KvLayout. The same (layout, seed)
gives the same bytes in C++, on the device and here, so a node can check a rebuilt blob
against the original's checksums.)doc")
      .def(py::init([](const KvLayout& layout, uint64_t seed) {
             return ValueOrThrow(ReferenceModel::Create(layout, seed));
           }),
           py::arg("layout"), py::arg("seed") = 1)
      .def_property_readonly("layout", &ReferenceModel::layout)
      .def_property_readonly("seed", &ReferenceModel::seed)
      .def(
          "compute_blob",
          [](const ReferenceModel& model, py::handle tokens, uint32_t first_page,
             uint32_t num_pages, py::handle out) -> py::object {
            std::vector<TokenId> ids = TokensFrom(tokens);
            const uint64_t bytes = PagesBytes(model.layout(), num_pages);
            py::object result = py::none();
            BorrowedBuffer dest;
            if (out.is_none()) {
              result = NewByteArray(bytes);
              dest = BorrowBuffer(result, Access::kWrite, "out");
            } else {
              dest = BorrowBuffer(out, Access::kWrite, "out");
            }
            const MemoryDescriptor& d = dest.memory();
            if (d.kind == MemoryKind::kDevice || d.bytes != bytes) {
              throw StatusError(absl::InvalidArgumentError(
                  absl::StrCat("out: needs ", bytes, " bytes of host memory, got ", d.bytes)));
            }
            absl::Status status;
            {
              py::gil_scoped_release release;
              status = model.ComputeBlob(ids, first_page, num_pages,
                                         absl::MakeSpan(static_cast<std::byte*>(d.ptr), d.bytes));
            }
            ThrowIfError(status);
            return result;
          },
          py::arg("tokens"), py::arg("first_page"), py::arg("num_pages"),
          py::arg("out") = py::none(),
          R"doc(The KV of pages [first_page, first_page + num_pages) of the sequence `tokens`
(whole pages, at least through the blob's last page), as one blob: into `out` (exactly
layout.pages_bytes(num_pages) bytes of host memory), else into a new bytearray returned.)doc")
      .def(
          "compute_rebuild",
          [](const ReferenceModel& model, const RebuildTask& task) {
            absl::StatusOr<std::vector<std::byte>> bytes;
            {
              py::gil_scoped_release release;
              bytes = tools::ComputeRebuild(task, model);
            }
            ThrowIfError(bytes.status());
            py::bytearray out = NewByteArray(bytes->size());
            std::copy(bytes->begin(), bytes->end(),
                      reinterpret_cast<std::byte*>(PyByteArray_AsString(out.ptr())));
            return out;
          },
          py::arg("task"),
          R"doc(Recomputes a rebuild task's blob and checks it against the task's chunk checksums:
the bytes to write (a bytearray). FailedPrecondition the task's layout is not the model's,
DataLoss the bytes differ from the original's (naming the first chunk).)doc");
}

}  // namespace strata::python
