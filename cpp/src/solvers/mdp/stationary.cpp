// Stationary distribution of a policy's Markov chain by power iteration, and expectations under it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "bellman.hpp"
#include "checks.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/solvers/mdp/solve.hpp"
#include "team.hpp"

namespace servelab::solvers::mdp {

namespace {

// The policy's chain transposed: row d lists the transitions into state d, ordered by source
// state and then by position within the source's pair, i.e. the order a sequential scatter
// x P would add them in. Gathering per destination keeps that order on any number of threads.
struct IncomingChain {
  std::vector<std::int64_t> begin;
  std::vector<std::int32_t> source;
  std::vector<double> probability;
};

IncomingChain incoming(const Mdp& mdp, const Policy& policy) {
  const std::int32_t n = mdp.num_states();
  IncomingChain in;
  in.begin.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int32_t s = 0; s < n; ++s) {
    const std::int64_t a = mdp.state_begin[s] + policy[s];
    for (std::int64_t t = mdp.pair_begin[a]; t < mdp.pair_begin[a + 1]; ++t) {
      if (mdp.probability[t] != 0.0) ++in.begin[mdp.next_state[t] + 1];
    }
  }
  for (std::int32_t d = 0; d < n; ++d) in.begin[d + 1] += in.begin[d];
  in.source.resize(static_cast<std::size_t>(in.begin.back()));
  in.probability.resize(in.source.size());
  std::vector<std::int64_t> cursor(in.begin.begin(), in.begin.end() - 1);
  for (std::int32_t s = 0; s < n; ++s) {
    const std::int64_t a = mdp.state_begin[s] + policy[s];
    for (std::int64_t t = mdp.pair_begin[a]; t < mdp.pair_begin[a + 1]; ++t) {
      if (mdp.probability[t] == 0.0) continue;
      const std::int64_t slot = cursor[mdp.next_state[t]]++;
      in.source[slot] = s;
      in.probability[slot] = mdp.probability[t];
    }
  }
  return in;
}

std::vector<double> starting_distribution(std::int32_t n, std::span<const double> start) {
  if (start.empty()) return std::vector<double>(static_cast<std::size_t>(n), 1.0 / n);
  detail::check_vector(start, n, "start", "state");
  double total = 0.0;
  for (std::size_t s = 0; s < start.size(); ++s) {
    if (start[s] < 0) throw ValueError(str("start[", s, "]=", start[s], " is negative"));
    total += start[s];
  }
  if (!(total > 0)) throw ValueError("start sums to 0: it needs some positive mass");
  std::vector<double> x(start.begin(), start.end());
  for (auto& p : x) p /= total;
  return x;
}

}  // namespace

Stationary stationary_distribution(const Mdp& mdp, const Policy& policy, const StationaryOptions& o,
                                   std::span<const double> start) {
  detail::check_shape(mdp, "stationary_distribution");
  detail::check_stationary_options(o);
  validate_policy(mdp, policy);
  const std::int32_t n = mdp.num_states();
  std::vector<double> x = starting_distribution(n, start);
  std::vector<double> y(static_cast<std::size_t>(n));
  const IncomingChain in = incoming(mdp, policy);
  const detail::SparseRows rows{in.begin.data(), in.source.data(), in.probability.data()};

  detail::Team team(detail::choose_threads(o.threads, in.begin.back(), n));
  const auto bounds = detail::balanced_ranges(in.begin, team.size());
  const auto step = [&](int member) {
    const std::int32_t d0 = bounds[member], d1 = bounds[member + 1];
    for (std::int32_t d = d0; d < d1; ++d) y[d] = rows.dot(d, x.data());
    if (o.lazy) {
      for (std::int32_t d = d0; d < d1; ++d) y[d] = 0.5 * (x[d] + y[d]);
    }
  };

  // Floating-point power iteration ends, after enough steps, in a cycle of iterates that repeat
  // bit for bit (period 1 is an exact fixed point; rounding makes longer ones common). Brent's
  // method finds the cycle with one saved iterate; the loop then skips whole periods, so the
  // result is still bit-identical to running every step.
  std::vector<double> saved = x;
  std::int32_t saved_at = 0;
  std::int64_t window = 1;
  bool skipped = false;
  std::vector<double> changes;  // per step until the skip, to see if a step in the cycle would stop the loop
  Stationary out;
  while (out.iterations < o.max_iterations) {
    core::check_interrupt();
    team.run(step);
    ++out.iterations;
    double total = 0.0;  // sums in state order, on one thread: the same for any thread count
    for (const double p : y) total += p;
    if (!(total > 0) || !std::isfinite(total)) {
      throw ValueError(str("stationary_distribution: the probability mass became ", total, " after ", out.iterations,
                           " steps (is the MDP valid?)"));
    }
    double change = 0.0;
    for (std::int32_t s = 0; s < n; ++s) {
      y[s] /= total;
      change += std::abs(y[s] - x[s]);
    }
    out.residual = change;
    std::swap(x, y);
    if (change < o.tolerance && out.iterations >= o.min_iterations) break;
    if (skipped) continue;
    changes.push_back(change);
    if (std::memcmp(x.data(), saved.data(), x.size() * sizeof(double)) == 0) {
      skipped = true;
      const std::int32_t period = out.iterations - saved_at;
      const bool stops_in_cycle =
          std::any_of(changes.end() - period, changes.end(), [&](double c) { return c < o.tolerance; });
      if (!stops_in_cycle) out.iterations = o.max_iterations - (o.max_iterations - out.iterations) % period;
    } else if (out.iterations - saved_at == window) {
      saved = x;
      saved_at = out.iterations;
      window *= 2;
    }
  }
  out.converged = out.residual < o.tolerance || (out.iterations > 0 && out.residual == 0.0);
  out.distribution = std::move(x);
  return out;
}

double expectation(const Mdp& mdp, const Policy& policy, std::span<const double> distribution,
                   std::span<const double> per_pair) {
  detail::check_shape(mdp, "expectation");
  validate_policy(mdp, policy);
  detail::check_vector(distribution, mdp.num_states(), "distribution", "state");
  detail::check_vector(per_pair, mdp.num_pairs(), "per_pair", "pair");
  double total = 0.0;
  for (std::int32_t s = 0; s < mdp.num_states(); ++s) {
    total += distribution[s] * per_pair[mdp.state_begin[s] + policy[s]];
  }
  return total;
}

}  // namespace servelab::solvers::mdp
