// The Model-Autoscaler's solvers by name (the `infaas` policy's autoscaler= parameter): each
// turns a ScalingProblem into a ScalingPlan. "greedy" (Sec. 4.2.2) is built in; the exact
// integer program of Sec. 4.2.1 ("ilp") needs the LP solver, which _core does not link, so
// servelab._lp registers it when it loads (bindings/scaling_solver_plugin.hpp).
//
// A solver's contract: a plan with delta for every variant, feasible when it meets constraints
// 1-4 (complete_plan); an infeasible plan means the workers cannot carry the load (plan_scaling,
// model_autoscaler.hpp, then asks the same solver for the most they can carry). The policy reads
// every plan the same way, from its delta and problem, never from the solver's name or strategy
// words. Solvers must be deterministic: the same problem gives the same plan.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "servelab/systems/infaas/scaling.hpp"

namespace servelab::infaas {

using ScalingSolver = std::function<ScalingPlan(const ScalingProblem&)>;

// Adds a solver; `origin` names the module it came from. ValueError if the name is taken by
// another origin (the built-in "greedy" is never replaced).
void register_scaling_solver(const std::string& name, ScalingSolver solver, const std::string& origin);
bool has_scaling_solver(const std::string& name);
std::vector<std::string> scaling_solvers();                  // registered names, sorted
std::string scaling_solver_origin(const std::string& name);  // "" for an unknown name

// Called for a name not registered yet, to load the module that registers it (the bindings
// set one: "ilp" imports servelab._lp). It returns "" when it loaded the module or knows no
// module for the name, else why the module is not usable.
using ScalingSolverLoader = std::function<std::string(const std::string& name)>;
void set_scaling_solver_loader(ScalingSolverLoader loader);

// The solver registered as `name`, trying the loader first for an unknown name. RuntimeError
// "<field>='ilp' needs ...: <reason>" when its module does not load; ValueError naming `field`,
// the value and the registered names when the name is still unknown.
ScalingSolver scaling_solver(const std::string& name, const std::string& field = "autoscaler");

}  // namespace servelab::infaas
