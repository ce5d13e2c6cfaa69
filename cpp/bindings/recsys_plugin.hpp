// How a backend module (servelab._onednn, servelab._cuda) adds its recommendation-model backend to
// _core's table (servelab/exec/recsys/backends.hpp), through the capsule
// `servelab._core.recsys._backends` (plugin_capsule.hpp). In its PYBIND11_MODULE body:
//
//   servelab::bindings::join_recsys_backends("onednn", &make_onednn_recsys, "servelab._onednn");
#pragma once

#include <string>

#include "plugin_capsule.hpp"
#include "servelab/exec/recsys/backends.hpp"

namespace servelab::bindings {

inline constexpr const char* kRecsysBackendCapsule = "servelab._core.recsys_backends";
inline constexpr int kRecsysBackendAbiVersion = 1;

using RecsysJoin = void(const std::string& name, exec::recsys::ModelMaker maker, const std::string& module);
using RecsysPluginRecord =
    PluginRecord<RecsysJoin, exec::recsys::Spec, exec::recsys::Weights, exec::recsys::RecsysModel>;

inline void join_recsys_backends(const std::string& name, exec::recsys::ModelMaker maker, const std::string& module) {
  join_plugin("recsys", "_backends", kRecsysBackendCapsule, RecsysPluginRecord{.abi_version = kRecsysBackendAbiVersion},
              "recommendation-model backend", module, name, maker, module);
}

}  // namespace servelab::bindings
