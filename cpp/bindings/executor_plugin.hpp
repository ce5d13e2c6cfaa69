// How a backend module (servelab._torch, _onednn, _cuda) adds executors to _core's registry, through
// the capsule `servelab._core._executor_plugins` (plugin_capsule.hpp). In its PYBIND11_MODULE body:
//
//   servelab::bindings::join_executor_registry(
//       {"torchscript", "A TorchScript module ...", {ParamSpec...}, factory}, "servelab._torch");
//
// The entry joins _core's registry (as an extension, so it cannot shadow a built-in name) and
// servelab.list_executors() reports the module it came from. Exceptions from the entry's factory,
// builders and executors cross back into _core and reach Python as the matching Python exception
// (the error types are the same classes in every module of one build).
#pragma once

#include <string>
#include <utility>

#include "plugin_capsule.hpp"
#include "servelab/serve/executor_registry.hpp"

namespace servelab::bindings {

inline constexpr const char* kExecutorPluginCapsule = "servelab._core.executor_plugins";

using ExecutorJoin = void(serve::ExecutorRegistry::Entry entry, const std::string& module);
using ExecutorPluginRecord =
    PluginRecord<ExecutorJoin, serve::ExecutorRegistry::Entry, serve::ExecRequest, serve::ExecutorContext>;

inline void join_executor_registry(serve::ExecutorRegistry::Entry entry, const std::string& module) {
  join_plugin(nullptr, "_executor_plugins", kExecutorPluginCapsule,
              ExecutorPluginRecord{.abi_version = serve::kExecutorAbiVersion}, "executor", module, std::move(entry),
              module);
}

}  // namespace servelab::bindings
