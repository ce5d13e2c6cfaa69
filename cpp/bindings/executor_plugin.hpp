// How a backend module (servelab._torch, _onednn, _cuda) adds executors to _core's registry.
//
// _core publishes `servelab._core._executor_plugins`, a PyCapsule named kExecutorPluginCapsule
// holding an ExecutorPluginTable. A backend module, in its PYBIND11_MODULE body:
//
//   servelab::bindings::join_executor_registry(
//       {"torchscript", "A TorchScript module ...", {ParamSpec...}, factory}, "servelab._torch");
//
// The entry joins _core's registry (as an extension, so it cannot shadow a built-in name) and
// servelab.list_executors() reports the module it came from. The table carries the ABI version and
// the sizes of the shared types, so a module from another build is refused with a clear ImportError
// instead of misreading memory. Exceptions from the entry's factory, builders and executors cross
// back into _core and reach Python as the matching Python exception (the error types are the same
// classes in every module of one build).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "servelab/core/errors.hpp"
#include "servelab/serve/executor_registry.hpp"

namespace servelab::bindings {

inline constexpr const char* kExecutorPluginCapsule = "servelab._core.executor_plugins";

struct ExecutorPluginTable {
  int abi_version = serve::kExecutorAbiVersion;
  std::size_t entry_size = sizeof(serve::ExecutorRegistry::Entry);
  std::size_t request_size = sizeof(serve::ExecRequest);
  std::size_t context_size = sizeof(serve::ExecutorContext);
  // Adds `entry` to _core's registry, remembering `module` as its origin.
  void (*join)(serve::ExecutorRegistry::Entry entry, const std::string& module) = nullptr;
};

// Finds _core's table (importing servelab._core) and checks it matches this module's build.
inline const ExecutorPluginTable& core_executor_plugins() {
  namespace py = pybind11;
  const py::object capsule = py::module_::import("servelab._core").attr("_executor_plugins");
  const auto* table =
      static_cast<const ExecutorPluginTable*>(PyCapsule_GetPointer(capsule.ptr(), kExecutorPluginCapsule));
  if (table == nullptr) throw py::error_already_set();
  const ExecutorPluginTable mine;
  if (table->abi_version != mine.abi_version || table->entry_size != mine.entry_size ||
      table->request_size != mine.request_size || table->context_size != mine.context_size) {
    throw py::import_error(str("servelab._core's executor interface (version ", table->abi_version,
                               ") differs from this module's (version ", mine.abi_version,
                               "): rebuild servelab so that every module comes from one build"));
  }
  return *table;
}

inline void join_executor_registry(serve::ExecutorRegistry::Entry entry, const std::string& module) {
  core_executor_plugins().join(std::move(entry), module);
}

}  // namespace servelab::bindings
