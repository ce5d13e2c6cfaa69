// How a backend module adds an INFaaS scaling solver (scaling_solvers.hpp) to _core's table,
// through the capsule `servelab._core.infaas._scaling_solver_plugins` (plugin_capsule.hpp). In its
// PYBIND11_MODULE body (after importing servelab._core):
//
//   servelab::bindings::join_scaling_solvers("ilp", solve, "servelab._lp");
//
// The module links its own copy of the infaas area (for the problem and plan types), whose table
// _core never reads: it must join through the capsule.
#pragma once

#include <string>
#include <utility>

#include "plugin_capsule.hpp"
#include "servelab/systems/infaas/scaling_solvers.hpp"

namespace servelab::bindings {

inline constexpr const char* kScalingSolverCapsule = "servelab._core.infaas.scaling_solver_plugins";
inline constexpr int kScalingSolverAbiVersion = 2;

using ScalingSolverJoin = void(const std::string& name, infaas::ScalingSolver solver, const std::string& module);
using ScalingSolverPluginRecord =
    PluginRecord<ScalingSolverJoin, infaas::ScalingProblem, infaas::ScalingPlan, infaas::ScalingSolver>;

inline void join_scaling_solvers(const std::string& name, infaas::ScalingSolver solver, const std::string& module) {
  join_plugin("infaas", "_scaling_solver_plugins", kScalingSolverCapsule,
              ScalingSolverPluginRecord{.abi_version = kScalingSolverAbiVersion}, "INFaaS scaling-solver", module, name,
              std::move(solver), module);
}

}  // namespace servelab::bindings
