// The solver library behind lp::solve (compiled only when SERVELAB_HAS_LP).
#pragma once

#include <string>

#include "servelab/solvers/lp/lp.hpp"

namespace servelab::solvers::lp::backend {

// The model is validated and non-empty; options are validated.
Solution solve_lp(const Model& model, const Options& options);   // CLP: no integer variables
Solution solve_mip(const Model& model, const Options& options);  // CBC
std::string version();

}  // namespace servelab::solvers::lp::backend
