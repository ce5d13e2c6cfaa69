// How a backend module adds an RRL estimator backend (estimator_backend.hpp) to _core's table,
// through the capsule `servelab._core.rrl._estimator_plugins` (plugin_capsule.hpp). In its
// PYBIND11_MODULE body:
//
//   servelab::bindings::join_estimator_registry("libtorch", make_torch_estimator, "servelab._torch");
//
// The module must not link the rrl area itself: its own copy of the table would be one _core never
// reads.
#pragma once

#include <string>
#include <utility>

#include "plugin_capsule.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::bindings {

inline constexpr const char* kEstimatorPluginCapsule = "servelab._core.rrl.estimator_plugins";
inline constexpr int kEstimatorAbiVersion = 2;

using EstimatorJoin = void(const std::string& name, rrl::EstimatorBackendFactory factory, const std::string& module);
using EstimatorPluginRecord =
    PluginRecord<EstimatorJoin, rrl::EstimatorOptions, rrl::EstimatorShape, rrl::EstimatorBackendFactory>;

inline void join_estimator_registry(const std::string& name, rrl::EstimatorBackendFactory factory,
                                    const std::string& module) {
  join_plugin("rrl", "_estimator_plugins", kEstimatorPluginCapsule,
              EstimatorPluginRecord{.abi_version = kEstimatorAbiVersion}, "RRL estimator", module, name,
              std::move(factory), module);
}

}  // namespace servelab::bindings
