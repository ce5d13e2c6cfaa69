// Exact evaluation of one policy by a sparse linear solve (Eigen).
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/solvers/mdp/solve.hpp"

namespace servelab::solvers::mdp::detail {

// v with (I - discount P_pi) v = r_pi, discount < 1. `max_error` receives the largest equation error.
std::vector<double> solve_discounted(const Mdp& mdp, const Policy& policy, double discount, double* max_error);

// Gain and bias with h + g = r_pi + P_pi h, h[reference] = 0; ValueError when the policy's
// chain has several recurrent classes (the system is then singular).
GainBias solve_average(const Mdp& mdp, const Policy& policy, std::int32_t reference, double* max_error,
                       const char* function);

}  // namespace servelab::solvers::mdp::detail
