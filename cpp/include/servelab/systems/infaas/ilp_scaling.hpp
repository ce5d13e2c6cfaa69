// The Model-Autoscaler's integer program (Sec. 4.2.1) solved exactly through servelab's LP/MILP
// adapter (CBC). Linked only into servelab._lp, like every user of the solver library.
//
// delta_v = p_v - m_v with integers p_v in [0, inf) (0 when T_v^inf > S: constraint 2) and
// m_v in [0, N_v] (constraint 4), which makes the objective's max(delta_v, 0) linear:
// C_v (1 + lambda T_v^load) p_v - C_v m_v. Loading and unloading the same variant never pays.
// Constraint 1 counts only variants meeting the SLO (T_v^inf <= S): running instances slower
// than it carry none of the load within it, so the optimum never keeps them instead of a
// variant that meets it.
// Of equally cheap plans, the one with the fewest loads and unloads (a second solve). Infeasible
// (no plan fits constraints 1-4): feasible = false, status "infeasible", delta all 0.
#pragma once

#include "servelab/solvers/lp/lp.hpp"
#include "servelab/systems/infaas/scaling.hpp"

namespace servelab::infaas {

ScalingPlan solve_scaling_ilp(const ScalingProblem& p, const solvers::lp::Options& options = {});

}  // namespace servelab::infaas
