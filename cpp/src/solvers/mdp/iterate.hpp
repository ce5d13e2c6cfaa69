// The sweep loop behind value iteration and iterative policy evaluation.
#pragma once

#include "servelab/solvers/mdp/solve.hpp"

namespace servelab::solvers::mdp::detail {

// Sweeps until the residual falls below the tolerance (after min_iterations) or max_iterations;
// maximising, or evaluating `fixed` when it is not null. Options must be checked already.
Solution iterate(const Mdp& mdp, const SolveOptions& options, const Policy* fixed, const char* function);

}  // namespace servelab::solvers::mdp::detail
