// lp::solve: checks the options, handles the trivial model, and hands the rest to the backend.
#include <cmath>

#include "backend.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/solvers/lp/lp.hpp"

namespace servelab::solvers::lp {

bool available() { return SERVELAB_HAS_LP != 0; }

std::string backend_version() {
#if SERVELAB_HAS_LP
  return backend::version();
#else
  return {};
#endif
}

Solution solve(const Model& model, const Options& options) {
  if (std::isnan(options.time_limit_s) || options.time_limit_s <= 0)
    throw ValueError(str("time_limit_s=", options.time_limit_s, " must be > 0 (inf for none)"));
  if (!(options.mip_relative_gap >= 0 && options.mip_relative_gap < 1))
    throw ValueError(str("mip_relative_gap=", options.mip_relative_gap, " must be in [0, 1)"));
#if SERVELAB_HAS_LP
  if (model.num_variables() == 0) {
    // Nothing to decide; the solvers reject empty models, but the answer is clear.
    Solution s;
    bool feasible = true;
    for (std::int32_t r = 0; r < model.num_constraints(); ++r)
      feasible &= model.row_lower()[r] <= 0.0 && 0.0 <= model.row_upper()[r];
    s.status = feasible ? Status::Optimal : Status::Infeasible;
    s.has_solution = feasible;
    s.objective = s.best_bound = model.objective_offset();
    if (feasible) s.duals.assign(model.num_constraints(), 0.0);
    s.solver = "none (empty model)";
    s.message = feasible ? "no variables" : "no variables, and a constraint excludes 0";
    return s;
  }
  return model.has_integers() ? backend::solve_mip(model, options) : backend::solve_lp(model, options);
#else
  throw RuntimeError("servelab was built without an LP solver (install coinor-libcbc-dev and rebuild)");
#endif
}

}  // namespace servelab::solvers::lp
