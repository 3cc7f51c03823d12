// strata._strata: the extension module behind the `strata` Python package (python/README.md).
#include "python/src/bindings.h"

PYBIND11_MODULE(_strata, m) {
  m.doc() = "strata: a tiered, distributed KV-cache store for LLM inference (libstrata bindings).";
  strata::python::BindErrors(m);
  strata::python::BindBuffers(m);
  strata::python::BindTypes(m);
  strata::python::BindClient(m);
  strata::python::BindModel(m);
}
