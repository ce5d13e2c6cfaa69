// The inner loop every solver shares: the expected next value of a pair,
// sum_t probability[t] * values[next_state[t]], summed over the pair's transitions in order from
// 0.0. The fixed order makes results bit-identical for any thread count (and to a plain
// sequential loop, such as the numpy reference).
//
// The loop is plain on purpose. Measured on RAMSIS's own MDPs (about 0.45 ns per transition),
// these were no faster or slower: unrolling, summing four rows side by side (also with rows
// grouped by length), and storing columns as runs of consecutive states (short runs cost branch
// mispredictions).
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

  double dot(std::int64_t row, const double* x) const {
    double acc = 0.0;
    for (std::int64_t t = begin[row]; t < begin[row + 1]; ++t) acc += weight[t] * x[column[t]];
    return acc;
  }
};

inline SparseRows pair_rows(const Mdp& mdp) {
  return {mdp.pair_begin.data(), mdp.next_state.data(), mdp.probability.data()};
}

}  // namespace servelab::solvers::mdp::detail
