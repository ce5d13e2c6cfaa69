// The inner loops of the assignment solver: straight passes over one row of the cost matrix and
// the column arrays, written with vector types so that each is compiled for AVX2 as well as for
// the baseline (chosen at load time where the compiler supports function multi-versioning).
// Every variant performs the same IEEE operations in the same order (no FMA), so results do not
// depend on the machine.
#pragma once

#include <cstdint>
#include <limits>

namespace servelab::solvers::lap_kernels {

// Running column minima: for j < m, where row[j] < col_min[j], col_min[j] = row[j] and
// argmin[j] = i (so the first row attaining a column's minimum is kept).
void column_min(const double* row, std::int64_t i, double* col_min, std::int64_t* argmin, std::int32_t m);

struct TwoSmallest {
  double first, second;      // the two smallest values of row[j] - v[j] (equal when the minimum repeats)
  std::int32_t first_index;  // the first j attaining `first` (-1 when all are +inf)
};
TwoSmallest two_smallest(const double* row, const double* v, std::int32_t m);

// Whether every sign * x[k] is > -inf (no NaN, no -inf after the sign).
bool all_valid(const double* x, std::int64_t count, double sign);

// The first j >= from with row[j] - v[j] == value (computed exactly as two_smallest does), or -1.
std::int32_t find_reduced(const double* row, const double* v, std::int32_t m, double value, std::int32_t from);

struct Relaxed {
  double lowest;       // min over j of dist[j] after the update (+inf when all are +inf)
  std::int32_t index;  // the first j attaining it (-1 when lowest is +inf)
  bool tied;           // another j attains it too
};
// One Dijkstra step from row i: dist[j] = min(dist[j], h + row[j] - v[j]), pred[j] = i where it
// improves. Retired columns carry v[j] = -inf and dist[j] = +inf, so they never change or win.
Relaxed relax(const double* row, const double* v, double h, double* dist, std::int64_t* pred, std::int64_t i,
              std::int32_t m);

// Scalar versions with identical results, inlined: for short rows a call through the dispatcher
// and the lane bookkeeping cost more than the loop itself.
namespace scalar {

inline void column_min(const double* row, std::int64_t i, double* col_min, std::int64_t* argmin, std::int32_t m) {
  for (std::int32_t j = 0; j < m; ++j) {
    if (row[j] < col_min[j]) {
      col_min[j] = row[j];
      argmin[j] = i;
    }
  }
}

// Folds the reduced cost x of column j into the two smallest seen so far (the first wins ties).
inline void take(TwoSmallest& out, double x, std::int32_t j) {
  if (x < out.second) {
    if (x < out.first) {
      out.second = out.first;
      out.first = x;
      out.first_index = j;
    } else {
      out.second = x;
    }
  }
}

inline TwoSmallest two_smallest(const double* row, const double* v, std::int32_t m) {
  TwoSmallest out{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), -1};
  for (std::int32_t j = 0; j < m; ++j) take(out, row[j] - v[j], j);
  return out;
}

inline std::int32_t find_reduced(const double* row, const double* v, std::int32_t m, double value, std::int32_t from) {
  for (std::int32_t j = from; j < m; ++j)
    if (row[j] - v[j] == value) return j;
  return -1;
}

inline Relaxed relax(const double* row, const double* v, double h, double* dist, std::int64_t* pred, std::int64_t i,
                     std::int32_t m) {
  Relaxed out{std::numeric_limits<double>::infinity(), -1, false};
  std::int32_t attained = 0;
  for (std::int32_t j = 0; j < m; ++j) {
    const double t = (h + row[j]) - v[j];
    if (t < dist[j]) {
      dist[j] = t;
      pred[j] = i;
    }
    if (dist[j] < out.lowest) {
      out.lowest = dist[j];
      out.index = j;
      attained = 1;
    } else if (dist[j] == out.lowest) {
      ++attained;
    }
  }
  out.tied = attained > 1 && out.lowest < std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace scalar

// Rows shorter than this use the scalar versions.
inline constexpr std::int32_t kVectorMinLength = 4;

}  // namespace servelab::solvers::lap_kernels
