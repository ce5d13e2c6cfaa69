#include "linear.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::solvers::mdp::detail {

namespace {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

// Up to this many states a direct sparse LU is quick whatever the sparsity pattern; above it,
// fill-in can make LU slow, so BiCGSTAB goes first (LU remains the fallback).
constexpr std::int32_t kDirectUpTo = 2000;

// A = I - discount P_pi, with column `replace_column` (if >= 0) set to all ones: the average-reward
// system, where that column's unknown is the gain instead of h[reference] = 0.
SparseMatrix system_matrix(const Mdp& mdp, const Policy& policy, double discount, std::int32_t replace_column) {
  const std::int32_t n = mdp.num_states();
  std::vector<Eigen::Triplet<double, int>> entries;
  entries.reserve(static_cast<std::size_t>(n) * 2 + static_cast<std::size_t>(mdp.num_transitions() / 2));
  for (std::int32_t s = 0; s < n; ++s) {
    if (s != replace_column) entries.emplace_back(s, s, 1.0);
    if (replace_column >= 0) entries.emplace_back(s, replace_column, 1.0);
    const std::int64_t a = mdp.state_begin[s] + policy[s];
    for (std::int64_t t = mdp.pair_begin[a]; t < mdp.pair_begin[a + 1]; ++t) {
      if (mdp.next_state[t] == replace_column || mdp.probability[t] == 0.0) continue;
      entries.emplace_back(s, mdp.next_state[t], -discount * mdp.probability[t]);
    }
  }
  SparseMatrix m(n, n);
  m.setFromTriplets(entries.begin(), entries.end());  // duplicates (same next state twice) are summed
  m.makeCompressed();
  return m;
}

Eigen::VectorXd rewards_of(const Mdp& mdp, const Policy& policy) {
  Eigen::VectorXd r(mdp.num_states());
  for (std::int32_t s = 0; s < mdp.num_states(); ++s) r[s] = mdp.reward[mdp.state_begin[s] + policy[s]];
  return r;
}

// Largest |b - A x| relative to the size of the terms, so a tolerance means the same at any scale.
double relative_error(const SparseMatrix& a, const Eigen::VectorXd& x, const Eigen::VectorXd& b) {
  const double scale = 1.0 + b.lpNorm<Eigen::Infinity>() + 2.0 * x.lpNorm<Eigen::Infinity>();
  return (b - a * x).lpNorm<Eigen::Infinity>() / scale;
}

// x with A x = b, or false when A is (numerically) singular.
bool solve(const SparseMatrix& a, const Eigen::VectorXd& b, Eigen::VectorXd& x, double* max_error) {
  constexpr double kAccept = 1e-10;
  if (a.rows() > kDirectUpTo) {
    Eigen::BiCGSTAB<SparseMatrix, Eigen::DiagonalPreconditioner<double>> iterative;
    iterative.setTolerance(1e-14);
    iterative.setMaxIterations(static_cast<int>(std::min<Eigen::Index>(10 * a.rows(), 5000)));
    iterative.compute(a);
    if (iterative.info() == Eigen::Success) {
      x = iterative.solve(b);
      if (iterative.info() == Eigen::Success && x.allFinite()) {
        const double error = relative_error(a, x, b);
        if (error <= kAccept) {
          *max_error = (b - a * x).lpNorm<Eigen::Infinity>();
          return true;
        }
      }
    }
  }
  Eigen::SparseLU<SparseMatrix, Eigen::COLAMDOrdering<int>> direct;
  direct.compute(a);
  if (direct.info() != Eigen::Success) return false;
  x = direct.solve(b);
  if (direct.info() != Eigen::Success || !x.allFinite() || relative_error(a, x, b) > kAccept) return false;
  *max_error = (b - a * x).lpNorm<Eigen::Infinity>();
  return true;
}

}  // namespace

std::vector<double> solve_discounted(const Mdp& mdp, const Policy& policy, double discount, double* max_error) {
  const SparseMatrix a = system_matrix(mdp, policy, discount, -1);
  Eigen::VectorXd x;
  if (!solve(a, rewards_of(mdp, policy), x, max_error)) {
    // I - discount P is strictly diagonally dominant for discount < 1: only a numerical breakdown gets here.
    throw RuntimeError(str("policy evaluation: the linear solve failed for discount=", discount));
  }
  return {x.data(), x.data() + x.size()};
}

GainBias solve_average(const Mdp& mdp, const Policy& policy, std::int32_t reference, double* max_error,
                       const char* function) {
  const SparseMatrix a = system_matrix(mdp, policy, 1.0, reference);
  Eigen::VectorXd x;
  if (!solve(a, rewards_of(mdp, policy), x, max_error)) {
    throw ValueError(str(function,
                         ": the policy's Markov chain has more than one recurrent class (not unichain), so "
                         "its gain is not one number; use value_iteration (discount 1) or a discount < 1"));
  }
  GainBias out;
  out.gain = x[reference];
  out.bias.assign(x.data(), x.data() + x.size());
  out.bias[reference] = 0.0;
  return out;
}

}  // namespace servelab::solvers::mdp::detail
