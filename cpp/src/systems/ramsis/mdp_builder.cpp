// RAMSIS's per-worker MDP: states, actions, rewards; rows from mdp_transitions.cpp.
#include "servelab/systems/ramsis/mdp_builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "mdp_transitions.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::ramsis {

void MdpOptions::validate() const {
  if (slo <= 0) throw ValueError(str("slo=", slo, " ns must be > 0"));
  if (!(load_qps > 0) || !std::isfinite(load_qps)) throw ValueError(str("load_qps=", load_qps, " must be > 0"));
  if (workers < 1 || workers > 100000) throw ValueError(str("workers=", workers, " must be in 1..100000"));
  if (max_queue < 1 || max_queue > kMaxQueueLength) {
    throw ValueError(str("max_queue=", max_queue, " must be in 1..", kMaxQueueLength));
  }
  if (discretisation == Discretisation::FixedLength && (intervals < 1 || intervals > kMaxIntervals)) {
    throw ValueError(str("intervals (D)=", intervals, " must be in 1..", kMaxIntervals));
  }
  if (!(prune >= 0) || !(prune < 1e-3)) throw ValueError(str("prune=", prune, " must be in [0, 1e-3)"));
  const std::int64_t events = static_cast<std::int64_t>(workers) * erlang_shape(arrivals) * (max_queue + 2);
  if (events > 50'000'000) {
    throw ValueError(str("workers x arrivals shape x (max_queue + 2)=", events, " is too large (at most 5e7)"));
  }
}

std::vector<Nanos> slack_levels(const LatencyTable& table, const MdpOptions& o) {
  std::vector<Nanos> levels;
  if (o.discretisation == Discretisation::FixedLength) {
    for (std::int32_t i = 0; i <= o.intervals; ++i) {
      // Whole ns, rounded down so that a level never overstates the slack it stands for.
      levels.push_back(static_cast<Nanos>((static_cast<__int128>(o.slo) * i) / o.intervals));
    }
  } else {
    levels.push_back(0);
    for (std::int32_t m = 0; m < table.num_models(); ++m) {
      for (std::int32_t b = 1; b <= std::min(o.max_queue, table.max_batch()); ++b) {
        if (table.at(m, b) <= o.slo) levels.push_back(table.at(m, b));
      }
    }
    levels.push_back(o.slo);
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

namespace {

// The worker's service rate for shortest-queue-first (Appendix I): the throughput of the most
// accurate model that still keeps up with the per-worker load within the SLO (the fastest model
// when none does), at its largest batch within the SLO.
double service_rate_qps(const LatencyTable& table, const MdpOptions& o) {
  const double per_worker = o.load_qps / o.workers;
  double fallback = 0, chosen = 0, chosen_acc = -1;
  for (std::int32_t m = 0; m < table.num_models(); ++m) {
    double best = 0;
    for (std::int32_t b = 1; b <= std::min(o.max_queue, table.max_batch()); ++b) {
      if (table.at(m, b) <= o.slo) best = std::max(best, b / nanos_to_seconds(table.at(m, b)));
    }
    if (best == 0) best = 1 / nanos_to_seconds(table.at(m, 1));
    fallback = std::max(fallback, best);
    if (best >= per_worker && table.accuracy[m] > chosen_acc) {
      chosen = best;
      chosen_acc = table.accuracy[m];
    }
  }
  return chosen > 0 ? chosen : fallback;
}

struct PairSpec {
  std::int32_t state, model, batch;
};

}  // namespace

RamsisMdp build_mdp(const LatencyTable& input, const MdpOptions& o) {
  o.validate();
  input.validate();
  if (input.max_batch() < o.max_queue) {
    throw ValueError(str("the latency table covers batches 1..", input.max_batch(), " but max_queue=", o.max_queue,
                         " needs 1..", o.max_queue,
                         ": lower max_queue, or fill the table (fill='ols' from a profile)"));
  }
  RamsisMdp out;
  out.options = o;
  out.table = (o.pareto ? input.pareto_front(1) : input).extended_to(o.max_queue + 1);
  const LatencyTable& table = out.table;
  const std::int32_t M = table.num_models(), N = o.max_queue;

  Nanos fastest = std::numeric_limits<Nanos>::max();
  std::int32_t fastest_model = 0;
  for (std::int32_t m = 0; m < M; ++m) {
    if (table.at(m, 1) < fastest) fastest = table.at(m, 1), fastest_model = m;
  }
  if (fastest > o.slo) {
    throw ValueError(str("slo=", nanos_to_millis(o.slo), " ms is below every model's batch-1 latency (the fastest, '",
                         table.models[fastest_model], "', needs ", nanos_to_millis(fastest), " ms)"));
  }

  out.slack_levels = slack_levels(table, o);
  const auto& T = out.slack_levels;
  const std::int32_t L = static_cast<std::int32_t>(T.size());
  const std::int32_t num_states = (N + 1) * L + 1;
  const std::int32_t overflow = (N + 1) * L;

  // The default action of a queue of n: the fastest model at batch n (ties: the earlier model).
  std::vector<std::int32_t> default_model(static_cast<std::size_t>(N + 2));
  for (std::int32_t n = 1; n <= N + 1; ++n) {
    std::int32_t best = 0;
    for (std::int32_t m = 1; m < M; ++m) {
      if (table.at(m, n) < table.at(best, n)) best = m;
    }
    default_model[n] = best;
  }

  // States and actions, in state order (the CSR layout).
  std::vector<PairSpec> specs;
  auto& mdp = out.mdp;
  mdp.state_begin.assign(1, 0);
  for (std::int32_t s = 0; s < num_states; ++s) {
    const std::int32_t n = s == overflow ? N + 1 : s / L;
    const std::int32_t j = s == overflow ? 0 : s % L;
    if (n == 0) {
      specs.push_back({s, kWaitModel, 0});
      out.pairs.push_back({kWaitModel, 0, false});
      mdp.reward.push_back(0.0);
    } else {
      const std::size_t first = specs.size();
      if (n <= N) {
        const std::int32_t smallest = o.batching == Batching::Maximal ? n : 1;
        for (std::int32_t b = n; b >= smallest; --b) {
          for (std::int32_t m = 0; m < M; ++m) {
            if (table.at(m, b) > T[j]) continue;
            specs.push_back({s, m, b});
            out.pairs.push_back({m, b, false});
            mdp.reward.push_back(table.accuracy[m] * b / n);
          }
        }
      }
      const std::int32_t d = default_model[n];
      const bool has_default = std::any_of(specs.begin() + static_cast<std::ptrdiff_t>(first), specs.end(),
                                           [&](const PairSpec& p) { return p.model == d && p.batch == n; });
      if (!has_default) {
        specs.push_back({s, d, n});
        const bool violates = n > N || table.at(d, n) > T[j];
        out.pairs.push_back({d, n, violates});
        mdp.reward.push_back(violates ? 0.0 : table.accuracy[d]);
      }
    }
    mdp.state_begin.push_back(static_cast<std::int64_t>(specs.size()));
  }

  // Transition rows, grouped by (queue length, model) for maximal batches: one kernel each.
  detail::Grid grid;
  grid.slo = static_cast<double>(o.slo);
  for (const Nanos t : T) grid.levels.push_back(static_cast<double>(t));
  grid.max_queue = N;
  const double mu = o.balancer == Balancer::ShortestQueue ? service_rate_qps(table, o) : 0.0;
  std::map<std::int32_t, std::unique_ptr<detail::LevelCdfs>> cdfs_by_n;  // key: n (shortest-queue) or 0
  auto arrivals_for = [&](std::int32_t n) {
    return worker_arrivals(o.arrivals, o.balancer, o.load_qps, o.workers, n, mu);
  };
  auto cdfs_for = [&](std::int32_t n, const WorkerArrivals& a) -> const detail::LevelCdfs& {
    const std::int32_t key = o.balancer == Balancer::ShortestQueue ? std::min(n, 3) : 0;
    auto& slot = cdfs_by_n[key];
    if (!slot) slot = std::make_unique<detail::LevelCdfs>(grid, a.event_rate_per_ns, a.stride);
    return *slot;
  };

  std::vector<detail::Row> rows(specs.size());
  detail::PhaseWeights weights(grid);
  // By (model, batch, rate): what the variable-batch rows of one action duration share.
  std::map<std::tuple<std::int32_t, std::int32_t, double>, std::unique_ptr<detail::NewArrivals>> new_arrivals;
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::size_t>> maximal_groups;
  for (std::size_t p = 0; p < specs.size(); ++p) {
    const PairSpec& spec = specs[p];
    const std::int32_t n = spec.state == overflow ? N + 1 : spec.state / L;
    if (n == 0) {
      rows[p].next = {L + L - 1};  // Eq. 1: the next query arrives with slack SLO
      rows[p].prob = {1.0};
    } else if (spec.batch == n) {
      maximal_groups[{n, spec.model}].push_back(p);
    } else {
      core::check_interrupt();
      const WorkerArrivals a = arrivals_for(n);
      const double tau = static_cast<double>(table.at(spec.model, spec.batch));
      auto& counts = new_arrivals[{spec.model, spec.batch, a.event_rate_per_ns}];
      if (!counts) counts = std::make_unique<detail::NewArrivals>(a.event_rate_per_ns, a.stride, tau, N);
      rows[p] = detail::variable_row(grid, a.event_rate_per_ns, a.stride, weights, n, spec.state % L, spec.batch, tau,
                                     *counts, o.prune);
    }
  }
  for (const auto& [key, members] : maximal_groups) {
    core::check_interrupt();
    const auto [n, model] = key;
    const WorkerArrivals a = arrivals_for(n);
    std::vector<std::int32_t> js;
    for (const std::size_t p : members) js.push_back(specs[p].state == overflow ? 0 : specs[p].state % L);
    auto group_rows = detail::maximal_rows(grid, a.event_rate_per_ns, a.stride, cdfs_for(n, a), weights, n,
                                           static_cast<double>(table.at(model, n)), js, o.prune);
    for (std::size_t i = 0; i < members.size(); ++i) rows[members[i]] = std::move(group_rows[i]);
  }

  mdp.pair_begin.assign(1, 0);
  std::size_t total = 0;
  for (const auto& r : rows) total += r.next.size();
  mdp.next_state.reserve(total);
  mdp.probability.reserve(total);
  for (auto& r : rows) {
    mdp.next_state.insert(mdp.next_state.end(), r.next.begin(), r.next.end());
    mdp.probability.insert(mdp.probability.end(), r.prob.begin(), r.prob.end());
    mdp.pair_begin.push_back(static_cast<std::int64_t>(mdp.next_state.size()));
  }
  for (std::size_t p = 0; p < specs.size(); ++p) {
    const PairSpec& spec = specs[p];
    if (spec.model == kWaitModel) continue;
    const std::int32_t j = spec.state == overflow ? 0 : spec.state % L;
    if (spec.state == overflow || table.at(spec.model, spec.batch) > T[j]) out.pairs[p].violates = true;
  }
  return out;
}

WorkerPolicy to_worker_policy(const RamsisMdp& r, const solvers::mdp::Policy& choice) {
  const auto& mdp = r.mdp;
  if (static_cast<std::int32_t>(choice.size()) != mdp.num_states()) {
    throw ValueError(str("policy has ", choice.size(), " entries for ", mdp.num_states(), " states"));
  }
  WorkerPolicy p;
  p.models = r.table.models;
  p.accuracy = r.table.accuracy;
  p.slo = r.options.slo;
  p.load_qps = r.options.load_qps;
  p.workers = r.options.workers;
  p.balancer = balancer_name(r.options.balancer);
  p.arrivals = r.options.arrivals.kind == "poisson" ? "poisson" : str("erlang", erlang_shape(r.options.arrivals));
  p.discretisation = r.options.discretisation;
  p.intervals = r.options.discretisation == Discretisation::FixedLength ? r.options.intervals : 0;
  p.batching = r.options.batching;
  p.slack_levels = r.slack_levels;
  p.max_queue = r.options.max_queue;
  p.action_model.resize(choice.size());
  p.action_batch.resize(choice.size());
  for (std::int32_t s = 0; s < mdp.num_states(); ++s) {
    if (choice[s] < 0 || choice[s] >= mdp.num_actions(s)) {
      throw ValueError(
          str("policy[", s, "]=", choice[s], " is not an action of state ", s, " (it has ", mdp.num_actions(s), ")"));
    }
    const PairInfo& info = r.pairs[static_cast<std::size_t>(mdp.state_begin[s] + choice[s])];
    p.action_model[s] = info.model;
    p.action_batch[s] = info.batch;
  }
  return p;
}

}  // namespace servelab::ramsis
