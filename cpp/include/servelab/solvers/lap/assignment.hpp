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
  double cost = 0.0;  // sum of the chosen entries
};

// `cost` is row-major, rows x cols. Every row (rows <= cols) or every column (rows > cols) is
// assigned. Entries may be +inf (forbidden); ValueError when no full assignment avoids them, or
// on NaN / -inf entries or a size mismatch. maximize=true maximises the sum instead.
Assignment linear_sum_assignment(std::span<const double> cost, std::int64_t rows, std::int64_t cols,
                                 bool maximize = false);

// The same solver keeping its scratch buffers between calls (no allocation in a scheduler's
// hot loop once warmed up). Not thread-safe; one per thread.
class AssignmentSolver {
 public:
  const Assignment& solve(std::span<const double> cost, std::int64_t rows, std::int64_t cols,
                          bool maximize = false);

 private:
  Assignment result_;
  std::vector<double> u_, v_, shortest_, transposed_;
  std::vector<std::int32_t> path_, col4row_, row4col_, remaining_;
  std::vector<std::uint8_t> visited_rows_, visited_cols_;
};

}  // namespace servelab::solvers
