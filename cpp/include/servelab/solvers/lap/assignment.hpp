// Rectangular minimum-cost linear assignment (Jonker-Volgenant shortest augmenting path).
// Kairos's query distributor solves one per scheduling step; the solver is generic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace servelab::solvers {

struct Assignment {
  // For each row, the column it is assigned to, or -1 when rows > cols and the row is left out.
  std::vector<std::int32_t> row_to_col;
  double cost = 0.0;  // sum of the chosen entries (of the matrix as given, also when maximizing)
};

// `cost` is row-major, rows x cols. Every row (rows <= cols) or every column (rows > cols) is
// assigned. Minimising, +inf entries are forbidden; maximising, -inf entries are (scipy's
// convention). ValueError "cost matrix is infeasible" when no full assignment avoids them; on NaN
// or the other infinity (naming row, column and value); or on a size mismatch.
Assignment linear_sum_assignment(std::span<const double> cost, std::int64_t rows, std::int64_t cols,
                                 bool maximize = false);

// The same solver keeping its scratch buffers between calls (no allocation in a scheduler's
// hot loop once warmed up). Not thread-safe; one per thread.
//
// Method: Jonker-Volgenant. An initial dual solution (column reduction with reduction transfer
// for square matrices, rows taken from scratch for rectangular ones) and two rounds of augmenting
// row reduction assign most rows cheaply; each row still free is then assigned by a shortest
// augmenting path (Dijkstra on reduced costs, as in Crouse 2016 and scipy). Rows > cols is solved
// on the transpose.
class AssignmentSolver {
 public:
  const Assignment& solve(std::span<const double> cost, std::int64_t rows, std::int64_t cols, bool maximize = false);

 private:
  // Minimises over the n x m row-major matrix c (n <= m, no NaN, no -inf); fills col4row_.
  void solve_min(const double* c, std::int32_t n, std::int32_t m);
  void column_reduction(const double* c, std::int32_t n);
  void augmenting_row_reduction(const double* c, std::int32_t m);
  // Shortest augmenting path from free row `start`; false when every path is blocked (+inf).
  bool augment(const double* c, std::int32_t m, std::int32_t start);

  Assignment result_;
  std::vector<double> u_, v_, dist_, retired_dist_, retired_v_, work_;
  std::vector<std::int64_t> pred_;
  std::vector<std::int32_t> col4row_, row4col_, free_rows_, free_cols_, free_pos_, visited_rows_, visited_cols_;
};

}  // namespace servelab::solvers
