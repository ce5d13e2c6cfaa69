// How a backend module adds an INFaaS scaling solver (scaling_solvers.hpp) to _core's table.
//
// _core publishes `servelab._core.infaas._scaling_solver_plugins`, a PyCapsule named
// kScalingSolverCapsule holding a ScalingSolverPluginTable. A backend module, in its
// PYBIND11_MODULE body (after importing servelab._core):
//
//   servelab::bindings::join_scaling_solvers("ilp", solve, "servelab._lp");
//
// The module links its own copy of the infaas area (for the problem and plan types), whose table
// _core never reads: it must join through the capsule. The table carries a version and the sizes
// of the shared types, so a module from another build is refused with a clear ImportError.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "servelab/core/errors.hpp"
#include "servelab/systems/infaas/scaling_solvers.hpp"

namespace servelab::bindings {

inline constexpr const char* kScalingSolverCapsule = "servelab._core.infaas.scaling_solver_plugins";
inline constexpr int kScalingSolverAbiVersion = 1;

struct ScalingSolverPluginTable {
  int abi_version = kScalingSolverAbiVersion;
  std::size_t problem_size = sizeof(infaas::ScalingProblem);
  std::size_t plan_size = sizeof(infaas::ScalingPlan);
  std::size_t solver_size = sizeof(infaas::ScalingSolver);
  void (*join)(const std::string& name, infaas::ScalingSolver solver, const std::string& module) = nullptr;
};

inline void join_scaling_solvers(const std::string& name, infaas::ScalingSolver solver, const std::string& module) {
  namespace py = pybind11;
  const py::object capsule = py::module_::import("servelab._core").attr("infaas").attr("_scaling_solver_plugins");
  const auto* table =
      static_cast<const ScalingSolverPluginTable*>(PyCapsule_GetPointer(capsule.ptr(), kScalingSolverCapsule));
  if (table == nullptr) throw py::error_already_set();
  const ScalingSolverPluginTable mine;
  if (table->abi_version != mine.abi_version || table->problem_size != mine.problem_size ||
      table->plan_size != mine.plan_size || table->solver_size != mine.solver_size) {
    throw py::import_error(str("servelab._core's INFaaS scaling-solver interface (version ", table->abi_version,
                               ") differs from ", module, "'s (version ", mine.abi_version,
                               "): rebuild servelab so that every module comes from one build"));
  }
  table->join(name, std::move(solver), module);
}

}  // namespace servelab::bindings
