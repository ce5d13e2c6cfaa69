// How a backend module (servelab._onednn, servelab._cuda) adds its recommendation-model backend to
// _core's table (servelab/exec/recsys/backends.hpp): each module links its own copy of the static
// libraries, so the table must be _core's, reached through a PyCapsule. The table carries the sizes
// of the shared types, so a module from another build is refused instead of misreading memory.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "servelab/core/errors.hpp"
#include "servelab/exec/recsys/backends.hpp"

namespace servelab::bindings {

inline constexpr const char* kRecsysBackendCapsule = "servelab._core.recsys_backends";

struct RecsysBackendTable {
  std::size_t spec_size = sizeof(exec::recsys::Spec);
  std::size_t weights_size = sizeof(exec::recsys::Weights);
  std::size_t model_size = sizeof(exec::recsys::RecsysModel);
  void (*add)(const std::string& name, exec::recsys::ModelMaker maker) = nullptr;
};

inline void join_recsys_backends(const std::string& name, exec::recsys::ModelMaker maker) {
  namespace py = pybind11;
  const py::object capsule = py::module_::import("servelab._core").attr("recsys").attr("_backends");
  const auto* table =
      static_cast<const RecsysBackendTable*>(PyCapsule_GetPointer(capsule.ptr(), kRecsysBackendCapsule));
  if (table == nullptr) throw py::error_already_set();
  const RecsysBackendTable mine;
  if (table->spec_size != mine.spec_size || table->weights_size != mine.weights_size ||
      table->model_size != mine.model_size) {
    throw py::import_error(
        "servelab._core's recsys types differ from this module's: rebuild servelab so that "
        "every module comes from one build");
  }
  table->add(name, maker);
}

}  // namespace servelab::bindings
