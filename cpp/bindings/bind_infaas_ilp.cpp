// _lp.infaas: the Model-Autoscaler's integer program solved exactly (CBC).
#include <pybind11/pybind11.h>

#include "bind_infaas_args.hpp"
#include "long_call.hpp"
#include "scaling_solver_plugin.hpp"
#include "servelab/systems/infaas/ilp_scaling.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_infaas_ilp(py::module_& m) {
  // The infaas policy's autoscaler='ilp': no time limit, so that a decision is deterministic.
  join_scaling_solvers(
      "ilp", [](const infaas::ScalingProblem& p) { return infaas::solve_scaling_ilp(p); }, "servelab._lp");
  m.def(
      "solve_scaling_ilp",
      [](const py::dict& problem, double time_limit_s) {
        const auto p = infaas_problem(problem);
        solvers::lp::Options options;
        options.time_limit_s = time_limit_s;
        const auto plan = run_long([&] { return infaas::solve_scaling_ilp(p, options); });
        return infaas_plan_dict(plan);
      },
      py::arg("problem"), py::arg("time_limit_s") = solvers::lp::kInf,
      "Sec. 4.2.1's integer program on a scaling problem (dict), solved exactly.");
}

}  // namespace servelab::bindings
