// Jonker-Volgenant for the rectangular linear assignment problem.
//
// Duals: reduced cost c[i][j] - u[i] - v[j] >= 0 everywhere and 0 on assigned pairs. For n < m
// (every row assigned, some columns left free) optimality also needs every free column to keep the
// largest v, so rectangular problems start from v = 0 and v only ever decreases on columns that
// are (and stay) assigned. Square problems may start from the column minima instead.
#include "servelab/solvers/lap/assignment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::solvers {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();

[[noreturn]] void throw_infeasible() {
  throw ValueError("cost matrix is infeasible: no assignment of every row (or column) avoids the forbidden entries");
}

// NaN, and the infinity that would make the optimum unbounded (-inf minimising, +inf maximising),
// have no meaning as a cost. One branch-free pass finds whether there is one; a second names it.
void check_entries(std::span<const double> cost, std::int64_t cols, bool maximize) {
  const double sign = maximize ? -1.0 : 1.0;
  if (lap_kernels::all_valid(cost.data(), static_cast<std::int64_t>(cost.size()), sign)) return;
  for (std::size_t k = 0; k < cost.size(); ++k) {
    if (!(sign * cost[k] > -kInf)) {
      const auto row = static_cast<std::int64_t>(k) / cols, col = static_cast<std::int64_t>(k) % cols;
      throw ValueError(str("cost matrix contains an invalid entry at row ", row, ", column ", col, ": ", cost[k],
                           std::isnan(cost[k]) ? " (NaN is not a cost)"
                           : maximize          ? " (+inf cannot be maximised; use -inf to forbid a pair)"
                                               : " (-inf cannot be minimised; use +inf to forbid a pair)"));
    }
  }
}

// Each kernel in its vectorised or scalar version by row length (same results either way).
namespace kernels {
namespace vec = lap_kernels;
namespace sca = lap_kernels::scalar;
inline bool short_row(std::int32_t m) { return m < vec::kVectorMinLength; }
inline void column_min(const double* row, std::int64_t i, double* col_min, std::int64_t* argmin, std::int32_t m) {
  short_row(m) ? sca::column_min(row, i, col_min, argmin, m) : vec::column_min(row, i, col_min, argmin, m);
}
inline vec::TwoSmallest two_smallest(const double* row, const double* v, std::int32_t m) {
  return short_row(m) ? sca::two_smallest(row, v, m) : vec::two_smallest(row, v, m);
}
inline std::int32_t find_reduced(const double* row, const double* v, std::int32_t m, double value, std::int32_t from) {
  return short_row(m) ? sca::find_reduced(row, v, m, value, from) : vec::find_reduced(row, v, m, value, from);
}
inline vec::Relaxed relax(const double* row, const double* v, double h, double* dist, std::int64_t* pred,
                          std::int64_t i, std::int32_t m) {
  return short_row(m) ? sca::relax(row, v, h, dist, pred, i, m) : vec::relax(row, v, h, dist, pred, i, m);
}
}  // namespace kernels

}  // namespace

const Assignment& AssignmentSolver::solve(std::span<const double> cost, std::int64_t rows, std::int64_t cols,
                                          bool maximize) {
  if (rows < 0 || cols < 0 || rows > kMaxDim || cols > kMaxDim)
    throw ValueError(str("cost matrix shape (", rows, ", ", cols, ") is not valid"));
  if (static_cast<std::int64_t>(cost.size()) != rows * cols)
    throw ValueError(
        str("cost matrix has ", cost.size(), " entries, expected rows*cols = ", rows, "*", cols, " = ", rows * cols));
  result_.row_to_col.assign(static_cast<std::size_t>(rows), -1);
  result_.cost = 0.0;
  if (rows == 0 || cols == 0) return result_;
  check_entries(cost, cols, maximize);

  // Work on an n x m matrix with n <= m, minimising: transpose and/or negate into a scratch copy.
  const bool transpose = rows > cols;
  const auto n = static_cast<std::int32_t>(transpose ? cols : rows);
  const auto m = static_cast<std::int32_t>(transpose ? rows : cols);
  const double* c = cost.data();
  if (transpose || maximize) {
    work_.resize(cost.size());
    const double sign = maximize ? -1.0 : 1.0;
    if (transpose) {
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) work_[j * rows + i] = sign * cost[i * cols + j];
    } else {
      for (std::size_t k = 0; k < cost.size(); ++k) work_[k] = -cost[k];
    }
    c = work_.data();
  }

  solve_min(c, n, m);

  if (transpose) {
    // Working row r is original column r, assigned to working column col4row_[r] = an original row.
    for (std::int32_t r = 0; r < n; ++r) result_.row_to_col[col4row_[r]] = r;
  } else {
    std::copy(col4row_.begin(), col4row_.end(), result_.row_to_col.begin());
  }
  double total = 0.0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto j = result_.row_to_col[i];
    if (j >= 0) total += cost[i * cols + j];
  }
  result_.cost = total;
  return result_;
}

void AssignmentSolver::solve_min(const double* c, std::int32_t n, std::int32_t m) {
  // Only what is read before being written is reset: small problems are dominated by fixed costs.
  u_.resize(n);
  v_.resize(m);
  col4row_.assign(n, -1);
  row4col_.assign(m, -1);
  free_cols_.resize(m);
  free_pos_.resize(m);
  dist_.resize(m);
  pred_.resize(m);
  retired_dist_.resize(n);
  retired_v_.resize(n);
  visited_rows_.resize(n);
  visited_cols_.resize(n);
  free_rows_.clear();

  if (n == m) {
    column_reduction(c, n);
  } else {
    std::fill(v_.begin(), v_.end(), 0.0);
    for (std::int32_t i = 0; i < n; ++i) free_rows_.push_back(i);
  }
  // Augmenting row reduction assigns most free rows at O(m) each, but its tail is slow (rows
  // bouncing between near-equal columns): one round, cut off after a few reductions per free row,
  // leaves the rest to the shortest-path phase.
  if (!free_rows_.empty()) augmenting_row_reduction(c, m);

  // The reduction phases keep u implicit (u[i] = c[i][j] - v[j] on the assigned pair).
  for (std::int32_t i = 0; i < n; ++i) {
    const auto j = col4row_[i];
    u_[i] = j >= 0 ? c[static_cast<std::int64_t>(i) * m + j] - v_[j] : 0.0;
  }
  std::int32_t num_free = 0;
  for (std::int32_t j = 0; j < m; ++j) {  // without branches: free or not is a coin toss
    const bool free = row4col_[j] < 0;
    free_cols_[num_free] = j;
    free_pos_[j] = free ? num_free : -1;
    num_free += free;
  }
  free_cols_.resize(num_free);
  for (const auto row : free_rows_) {
    core::check_interrupt();
    if (!augment(c, m, row)) throw_infeasible();
  }
}

void AssignmentSolver::column_reduction(const double* c, std::int32_t n) {
  // v[j] = min over rows of column j, scanned row by row (contiguous reads); pred_ holds the argmin.
  std::fill(v_.begin(), v_.end(), kInf);
  for (std::int32_t i = 0; i < n; ++i)
    kernels::column_min(c + static_cast<std::int64_t>(i) * n, i, v_.data(), pred_.data(), n);
  for (std::int32_t j = 0; j < n; ++j)
    if (v_[j] == kInf) throw_infeasible();  // a column nobody may take
  // A row that is the minimum of several columns keeps the last of them. Without branches: which
  // row wins a column is random.
  auto& matches = visited_rows_;
  std::fill(matches.begin(), matches.end(), 0);
  for (std::int32_t j = 0; j < n; ++j) {
    const auto i = pred_[j];
    col4row_[i] = j;
    ++matches[i];
  }
  for (std::int32_t j = 0; j < n; ++j) {
    const auto i = static_cast<std::int32_t>(pred_[j]);
    row4col_[j] = col4row_[i] == j ? i : -1;
  }
  // Reduction transfer: a row that won exactly one column lowers that column's v by its slack to
  // its second-best column, making the column cheaper for other rows.
  for (std::int32_t i = 0; i < n; ++i) {
    if (matches[i] == 0) {
      free_rows_.push_back(i);
    } else if (matches[i] == 1) {
      // Its own column has reduced cost 0 and all others >= 0, so the second smallest is the slack.
      const auto best = kernels::two_smallest(c + static_cast<std::int64_t>(i) * n, v_.data(), n);
      if (best.second < kInf) v_[col4row_[i]] -= best.second;
    }
  }
}

void AssignmentSolver::augmenting_row_reduction(const double* c, std::int32_t m) {
  const auto n_free = static_cast<std::int32_t>(free_rows_.size());
  // Jonker and Volgenant bound a round by current * m; far fewer is faster overall (see solve_min).
  const std::int64_t budget = 2 * static_cast<std::int64_t>(n_free);
  std::int32_t current = 0, new_free = 0;
  std::int64_t reductions = 0;
  while (current < n_free) {
    ++reductions;
    const auto i = free_rows_[current++];
    const double* row = c + static_cast<std::int64_t>(i) * m;
    const auto best = kernels::two_smallest(row, v_.data(), m);
    const double u1 = best.first, u2 = best.second;
    if (u1 == kInf) throw_infeasible();  // every entry of the row is forbidden
    auto j1 = best.first_index;
    auto i0 = row4col_[j1];
    const bool lowers = u1 < u2 && u2 < kInf;
    if (reductions < budget) {
      if (lowers) {
        v_[j1] -= u2 - u1;
      } else if (i0 >= 0 && u2 == u1) {
        // A tie: take the other best column rather than displacing the owner of this one.
        j1 = kernels::find_reduced(row, v_.data(), m, u1, j1 + 1);
        i0 = row4col_[j1];
      }
      if (i0 >= 0) {
        col4row_[i0] = -1;
        if (lowers) {
          free_rows_[--current] = i0;  // reassign the displaced row right away
        } else {
          free_rows_[new_free++] = i0;
        }
      }
    } else if (i0 >= 0) {
      col4row_[i0] = -1;
      free_rows_[new_free++] = i0;
    }
    col4row_[i] = j1;
    row4col_[j1] = i;
  }
  free_rows_.resize(new_free);
}

bool AssignmentSolver::augment(const double* c, std::int32_t m, std::int32_t start) {
  std::fill(dist_.begin(), dist_.end(), kInf);
  std::int32_t num_rows = 0, num_cols = 0, sink = -1, i = start;
  double min_val = 0.0;
  // Dijkstra over the columns: reach the closest free column through alternating paths. A column
  // leaves the search (is retired) once its distance is final: v = -inf and dist = +inf then keep
  // it out of the vectorised scans, and its distance and v are kept aside.
  while (sink < 0) {
    visited_rows_[num_rows++] = i;
    const auto step = kernels::relax(c + static_cast<std::int64_t>(i) * m, v_.data(), min_val - u_[i], dist_.data(),
                                     pred_.data(), i, m);
    if (step.lowest == kInf) {
      for (std::int32_t k = 0; k < num_cols; ++k) v_[visited_cols_[k]] = retired_v_[k];
      return false;
    }
    auto j = step.index;
    if (step.tied && row4col_[j] >= 0) {
      // Among equals prefer a free column: the path ends there.
      for (const auto f : free_cols_) {
        if (dist_[f] == step.lowest) {
          j = f;
          break;
        }
      }
    }
    min_val = step.lowest;
    if (row4col_[j] < 0) {
      sink = j;
    } else {
      visited_cols_[num_cols] = j;
      retired_dist_[num_cols] = min_val;
      retired_v_[num_cols] = v_[j];
      ++num_cols;
      v_[j] = -kInf;
      dist_[j] = kInf;
      i = row4col_[j];
    }
  }
  // Update the duals so that the reduced costs stay >= 0 and 0 along the new matching. Row k was
  // reached through retired column k - 1.
  u_[start] += min_val;
  for (std::int32_t k = 1; k < num_rows; ++k) u_[visited_rows_[k]] += min_val - retired_dist_[k - 1];
  for (std::int32_t k = 0; k < num_cols; ++k) v_[visited_cols_[k]] = retired_v_[k] - (min_val - retired_dist_[k]);
  // The sink is no longer free.
  const auto pos = free_pos_[sink];
  free_cols_[pos] = free_cols_.back();
  free_pos_[free_cols_[pos]] = pos;
  free_cols_.pop_back();
  free_pos_[sink] = -1;
  // Flip the alternating path.
  for (std::int32_t j = sink;;) {
    const auto r = static_cast<std::int32_t>(pred_[j]);
    row4col_[j] = r;
    std::swap(col4row_[r], j);
    if (r == start) break;
  }
  return true;
}

Assignment linear_sum_assignment(std::span<const double> cost, std::int64_t rows, std::int64_t cols, bool maximize) {
  AssignmentSolver solver;
  return solver.solve(cost, rows, cols, maximize);
}

}  // namespace servelab::solvers
