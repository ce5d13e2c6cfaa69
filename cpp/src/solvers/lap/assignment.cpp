// Placeholder: the Jonker-Volgenant implementation replaces this file.
#include "servelab/solvers/lap/assignment.hpp"

#include "servelab/core/errors.hpp"

namespace servelab::solvers {

const Assignment& AssignmentSolver::solve(std::span<const double>, std::int64_t, std::int64_t, bool) {
  throw ValueError("linear_sum_assignment: not implemented yet");
}

Assignment linear_sum_assignment(std::span<const double> cost, std::int64_t rows, std::int64_t cols,
                                 bool maximize) {
  AssignmentSolver solver;
  return solver.solve(cost, rows, cols, maximize);
}

}  // namespace servelab::solvers
