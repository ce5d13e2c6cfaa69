// Argument checks shared by the solvers; each names the function, the field and the value.
#pragma once

#include <span>

#include "servelab/solvers/mdp/solve.hpp"

namespace servelab::solvers::mdp::detail {

// O(1) consistency of the CSR arrays' sizes; the solvers expect a validated MDP (Mdp::validate,
// MdpBuilder::finish, or the Python constructor) and check only this much on every call.
void check_shape(const Mdp& mdp, const char* function);
void check_solve_options(const Mdp& mdp, const SolveOptions& options, const char* function);
void check_stationary_options(const StationaryOptions& options);
// A per-state (or per-pair) vector of finite numbers of the expected size.
void check_vector(std::span<const double> values, std::int64_t expected, const char* name, const char* per);
void check_discount(double discount, const char* function);

}  // namespace servelab::solvers::mdp::detail
