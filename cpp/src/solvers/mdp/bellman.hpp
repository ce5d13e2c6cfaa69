// The inner loop every solver shares: the expected next value of a pair,
// sum_t probability[t] * values[next_state[t]], summed over the pair's transitions in order from
// 0.0. The fixed order makes results bit-identical for any thread count (and to a plain
// sequential loop, such as the numpy reference). The loop is kept plain on purpose: out-of-order
// execution already overlaps consecutive rows' dependency chains, and measured, interleaving
// rows by hand or reordering them by length was no faster (and slower on large MDPs).
#pragma once

#include <cstdint>

#include "servelab/solvers/mdp/mdp.hpp"

namespace servelab::solvers::mdp::detail {

// Transition arrays of one sparse stochastic matrix (an MDP's pairs, or a policy's chain
// transposed): row r owns entries [begin[r], begin[r + 1]).
struct SparseRows {
  const std::int64_t* begin;
  const std::int32_t* column;
  const double* weight;
};

inline SparseRows pair_rows(const Mdp& mdp) {
  return {mdp.pair_begin.data(), mdp.next_state.data(), mdp.probability.data()};
}

inline double row_dot(const SparseRows& m, std::int64_t row, const double* x) {
  double acc = 0.0;
  for (std::int64_t t = m.begin[row]; t < m.begin[row + 1]; ++t) acc += m.weight[t] * x[m.column[t]];
  return acc;
}

// out[i] = row_dot(row_of(i)) for i in [first, last). `row_of(i)` names the row of item i (the
// identity, or the pair a policy picks in state i).
template <typename RowOf>
void row_dots(const SparseRows& m, const double* x, RowOf row_of, std::int64_t first, std::int64_t last,
              double* out) {
  for (std::int64_t i = first; i < last; ++i) out[i] = row_dot(m, row_of(i), x);
}

}  // namespace servelab::solvers::mdp::detail
