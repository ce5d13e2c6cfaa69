// How a backend module adds an RRL estimator backend (estimator_backend.hpp) to _core's table.
//
// _core publishes `servelab._core.rrl._estimator_plugins`, a PyCapsule named kEstimatorPluginCapsule
// holding an EstimatorPluginTable. A backend module, in its PYBIND11_MODULE body:
//
//   servelab::bindings::join_estimator_registry("libtorch", make_torch_estimator, "servelab._torch");
//
// The module must not link the rrl area itself: its own copy of the table would be one _core never
// reads. The table carries a version and the sizes of the shared types, so a module from another
// build is refused with a clear ImportError (as executor_plugin.hpp does for executors).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "servelab/core/errors.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::bindings {

inline constexpr const char* kEstimatorPluginCapsule = "servelab._core.rrl.estimator_plugins";
inline constexpr int kEstimatorAbiVersion = 1;

struct EstimatorPluginTable {
  int abi_version = kEstimatorAbiVersion;
  std::size_t options_size = sizeof(rrl::EstimatorOptions);
  std::size_t shape_size = sizeof(rrl::EstimatorShape);
  std::size_t factory_size = sizeof(rrl::EstimatorBackendFactory);
  void (*join)(const std::string& name, rrl::EstimatorBackendFactory factory, const std::string& module) = nullptr;
};

inline void join_estimator_registry(const std::string& name, rrl::EstimatorBackendFactory factory,
                                    const std::string& module) {
  namespace py = pybind11;
  const py::object capsule = py::module_::import("servelab._core").attr("rrl").attr("_estimator_plugins");
  const auto* table =
      static_cast<const EstimatorPluginTable*>(PyCapsule_GetPointer(capsule.ptr(), kEstimatorPluginCapsule));
  if (table == nullptr) throw py::error_already_set();
  const EstimatorPluginTable mine;
  if (table->abi_version != mine.abi_version || table->options_size != mine.options_size ||
      table->shape_size != mine.shape_size || table->factory_size != mine.factory_size) {
    throw py::import_error(str("servelab._core's RRL estimator interface (version ", table->abi_version,
                               ") differs from ", module, "'s (version ", mine.abi_version,
                               "): rebuild servelab so that every module comes from one build"));
  }
  table->join(name, std::move(factory), module);
}

}  // namespace servelab::bindings
