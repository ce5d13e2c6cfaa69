// The one way a backend module joins a table of _core's: executors (the executor registry), RRL's
// estimator backends, INFaaS's scaling solvers and the recommendation-model backends.
//
// Each module links its own copy of the static libraries, so the tables must be _core's, reached
// through a PyCapsule: _core publishes a PluginRecord (an ABI version, the sizes of the types the
// two sides share and the function that joins) under a module attribute; a backend module, in its
// PYBIND11_MODULE body, calls join_plugin(...), which finds the record, checks that it comes from
// the same build (version and sizes), and joins. A module from another build is refused with a
// clear ImportError instead of misreading memory.
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::bindings {

// `Join` is the signature of the joining function; `Shared...` the types both sides pass.
template <typename Join, typename... Shared>
struct PluginRecord {
  int abi_version = 0;
  std::array<std::size_t, sizeof...(Shared)> sizes{sizeof(Shared)...};
  Join* join = nullptr;
};

// What _core publishes: the record under `module.attr` in a capsule named `capsule` (the record
// must outlive the module: a static).
template <typename Record>
void publish_plugin_record(pybind11::module_& module, const char* attr, const Record& record, const char* capsule) {
  module.attr(attr) = pybind11::capsule(&record, capsule);
}

// What a backend module calls: finds _core's record at servelab._core[.submodule].attr, checks it
// against this module's (`mine`: same version and sizes) and joins with `args`. `what` names the
// interface in the ImportError ("executor", "RRL estimator"); `module` this module.
template <typename Record, typename... Args>
void join_plugin(const char* submodule, const char* attr, const char* capsule, const Record& mine,
                 const std::string& what, const std::string& module, Args&&... args) {
  namespace py = pybind11;
  py::object owner = py::module_::import("servelab._core");
  if (submodule != nullptr) owner = owner.attr(submodule);
  const py::object published = owner.attr(attr);
  const auto* record = static_cast<const Record*>(PyCapsule_GetPointer(published.ptr(), capsule));
  if (record == nullptr) throw py::error_already_set();
  if (record->abi_version != mine.abi_version || record->sizes != mine.sizes) {
    throw py::import_error(str("servelab._core's ", what, " interface (version ", record->abi_version,
                               ") differs from ", module, "'s (version ", mine.abi_version,
                               "): rebuild servelab so that every module comes from one build"));
  }
  record->join(std::forward<Args>(args)...);
}

}  // namespace servelab::bindings
