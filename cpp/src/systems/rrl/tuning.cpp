#include "servelab/systems/rrl/tuning.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/time.hpp"
#include "servelab/systems/rrl/deep_rl.hpp"

namespace servelab::rrl {
namespace {

// steps * episode_requests arrival times are held at once (8 bytes each).
constexpr std::int64_t kMaxArrivals = 50'000'000;

using Clock = std::chrono::steady_clock;

double episode_rate(const std::vector<double>& times_ms) {
  const double span_s = times_ms.back() / 1e3;
  const auto gaps = static_cast<double>(times_ms.size() - 1);
  return span_s > 0 ? gaps / span_s : 1e9;  // all at once: as fast as representable
}

std::vector<std::size_t> evenly_spaced(std::size_t total, std::size_t count) {
  count = std::min(count, total);
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = count == 1 ? 0 : (k * (total - 1) + (count - 1) / 2) / (count - 1);
    if (out.empty() || out.back() != i) out.push_back(i);
  }
  return out;
}

}  // namespace

void TuningOptions::validate() const {
  if (steps < 1 || steps > 10'000'000) throw ValueError(str("steps=", steps, " must be in 1..10000000"));
  if (episode_requests < 2 || episode_requests > 1'000'000) {
    throw ValueError(str("episode_requests=", episode_requests, " must be in 2..1000000"));
  }
  if (steps * episode_requests > kMaxArrivals) {
    throw ValueError(str("steps * episode_requests = ", steps * episode_requests, " arrivals is more than ",
                         kMaxArrivals, ": take fewer steps or smaller episodes"));
  }
  if (!(std::isfinite(state_width_qps) && state_width_qps >= 0)) {
    throw ValueError(str("state_width_qps=", state_width_qps, " must be >= 0 (0: automatic)"));
  }
  if (max_states < 1 || max_states > 4096) throw ValueError(str("max_states=", max_states, " must be in 1..4096"));
  if (oracle_episodes < 1) throw ValueError(str("oracle_episodes=", oracle_episodes, " must be >= 1"));
  if (!(std::isfinite(tolerance) && tolerance >= 0)) throw ValueError(str("tolerance=", tolerance, " must be >= 0"));
  if (window < 1) throw ValueError(str("window=", window, " must be >= 1"));
}

std::vector<std::vector<double>> draw_episodes(const workload::ArrivalProcess& arrivals, const TuningOptions& options) {
  options.validate();
  auto cursor = arrivals.start(Rng(options.seed, "arrivals"));
  std::vector<std::vector<double>> episodes(static_cast<std::size_t>(options.steps));
  std::int64_t drawn = 0;
  for (auto& episode : episodes) {
    core::check_interrupt();
    episode.resize(static_cast<std::size_t>(options.episode_requests));
    Nanos first = 0;
    for (std::size_t i = 0; i < episode.size(); ++i) {
      const auto t = cursor->next();
      if (!t) {
        throw ValueError(str("the arrival process ", arrivals.describe(), " ended after ", drawn,
                             " arrivals; steps=", options.steps, " x episode_requests=", options.episode_requests,
                             " need more (replay the trace cyclically or take fewer steps)"));
      }
      if (i == 0) first = *t;
      episode[i] = static_cast<double>(*t - first) / 1e6;
      ++drawn;
    }
  }
  return episodes;
}

Oracle find_oracle(const ConfigSpace& space, const PerfModel& model, const Objective& objective,
                   const std::vector<std::vector<double>>& episodes) {
  if (episodes.empty()) throw ValueError("the oracle needs at least one episode");
  const auto settings = settings_of(space, model);
  const bool slo = objective.kind == Objective::Kind::SloResources;
  std::vector<double> scratch, all;
  Oracle best;
  double best_key = std::numeric_limits<double>::infinity(), best_metric = best_key, best_p95 = best_key;
  Oracle fastest;  // SLO objective: the lowest p95 when nothing meets the SLO
  double fastest_p95 = std::numeric_limits<double>::infinity();
  bool any_feasible = false;
  for (std::size_t c = 0; c < space.size(); ++c) {
    core::check_interrupt();
    double cost = 0, metric = 0;
    all.clear();
    for (const auto& e : episodes) {
      const auto r = run_episode(model, settings[c], e, objective, nullptr, scratch);
      cost += r.cost;
      metric += r.metric_ms;
      if (slo) all.insert(all.end(), scratch.begin(), scratch.end());
    }
    const auto n = static_cast<double>(episodes.size());
    Oracle here{c, cost / n, metric / n, true, 0};
    if (!slo) {
      if (here.metric_ms < best_metric) {
        best = here;
        best_metric = here.metric_ms;
      }
      continue;
    }
    const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(all.size()))) - 1;
    std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(rank), all.end());
    const double p95 = all[rank];
    if (p95 < fastest_p95) {
      fastest = here;
      fastest_p95 = p95;
    }
    if (p95 <= objective.slo_ms) {
      const double share = settings[c].resource_share;
      if (!any_feasible || share < best_key || (share == best_key && p95 < best_p95)) {
        best = here;
        best_key = share;
        best_p95 = p95;
      }
      any_feasible = true;
    }
  }
  if (slo && !any_feasible) {
    best = fastest;
    best.feasible = false;
  }
  best.evaluated = space.size();
  return best;
}

std::int64_t convergence_step(const std::vector<double>& greedy, const std::vector<double>& oracle, double tolerance,
                              std::int64_t window) {
  if (greedy.size() != oracle.size()) throw ValueError("greedy and oracle costs differ in length");
  const auto t_max = static_cast<std::int64_t>(greedy.size());
  if (t_max == 0 || window < 1) return -1;
  window = std::min(window, t_max);
  std::vector<double> ratio(greedy.size()), scratch(static_cast<std::size_t>(window));
  for (std::size_t i = 0; i < ratio.size(); ++i) ratio[i] = oracle[i] > 0 ? greedy[i] / oracle[i] : 1.0;
  std::int64_t last_bad = -1;
  for (std::int64_t t = 0; t + window <= t_max; ++t) {
    std::copy_n(ratio.begin() + t, window, scratch.begin());
    const auto mid = scratch.begin() + (window - 1) / 2;
    std::nth_element(scratch.begin(), mid, scratch.end());
    if (*mid > 1 + tolerance) last_bad = t;
  }
  const std::int64_t first_good = last_bad + 1;
  return first_good + window <= t_max ? first_good : -1;
}

TuningResult run_tuning(const ConfigSpace& space, const PerfModel& model, const workload::ArrivalProcess& arrivals,
                        const Objective& objective, const std::string& method, LearnerOptions learner,
                        const TuningOptions& options) {
  if (method != "rrl" && method != "qlearning" && method != "capes" && method != "deeprm") {
    throw ValueError(str("method='", method, "' is not one of 'rrl', 'qlearning', 'capes', 'deeprm'"));
  }
  model.validate();
  objective.validate();
  options.validate();
  learner.region = method == "rrl";
  learner.validate();
  const auto settings = settings_of(space, model);
  const auto episodes = draw_episodes(arrivals, options);
  const auto steps = episodes.size();

  std::vector<double> rates(steps);
  for (std::size_t t = 0; t < steps; ++t) rates[t] = episode_rate(episodes[t]);
  // Load levels: the rate rounded to a multiple of the width, so that the mean rate sits at a level's
  // centre; automatic width: half the process's mean rate (known before the run), else the first
  // episode's: a 200-request episode measures a steady rate within +-7% (one sigma), so a steady
  // load stays in one level (+-25%, 3.5 sigma), while the dynamic workload's +-50% spans three.
  double width = options.state_width_qps;
  if (width == 0) {
    const double mean = arrivals.mean_rate();
    width = (std::isfinite(mean) && mean > 0 ? mean : rates[0]) / 2;
  }
  const auto states = static_cast<std::size_t>(options.max_states);
  const auto level = [&](double rate) {
    return static_cast<std::size_t>(std::min(std::round(rate / width), static_cast<double>(states - 1)));
  };

  std::unique_ptr<Tuner> tuner;
  if (method == "capes" || method == "deeprm") {
    tuner = make_deep_rl(method, space, settings, 8 * width, objective, learner.deep, options.seed);
  } else {
    tuner = std::make_unique<QLearner>(space, settings, states, 8 * width, objective, learner, options.seed);
  }
  Tuner& q = *tuner;
  std::vector<std::vector<double>> scored;
  for (std::size_t i : evenly_spaced(steps, static_cast<std::size_t>(options.oracle_episodes))) {
    scored.push_back(episodes[i]);
  }
  TuningResult r;
  r.method = method;
  r.oracle = find_oracle(space, model, objective, scored);
  r.states = states;
  r.state_width_qps = width;

  r.mean_region_size = q.mean_region_size();
  Rng noise(options.seed, "rrl/noise");
  std::vector<double> scratch;
  const auto reserve = [&](auto&... v) { (v.reserve(steps), ...); };
  reserve(r.config, r.greedy, r.state, r.rate_qps, r.metric_ms, r.cost, r.chosen_ms, r.greedy_ms, r.oracle_ms,
          r.chosen_cost, r.greedy_cost, r.oracle_cost, r.learn_ns);
  for (std::size_t t = 0; t < steps; ++t) {
    core::check_interrupt();
    const std::size_t s = level(t == 0 ? rates[0] : rates[t - 1]);
    const auto t0 = Clock::now();
    const std::size_t c = q.decide(s, t == 0 ? rates[0] : rates[t - 1]);
    const auto t1 = Clock::now();
    const auto seen = run_episode(model, settings[c], episodes[t], objective, &noise, scratch);
    const auto t2 = Clock::now();
    q.learn(s, c, rates[t], seen.metric_ms, level(rates[t]));
    const auto t3 = Clock::now();
    const std::size_t g = q.best(s);
    const auto chosen = run_episode(model, settings[c], episodes[t], objective, nullptr, scratch);
    const auto best = g == c ? chosen : run_episode(model, settings[g], episodes[t], objective, nullptr, scratch);
    const auto oracle = r.oracle.config == c ? chosen
                        : r.oracle.config == g
                            ? best
                            : run_episode(model, settings[r.oracle.config], episodes[t], objective, nullptr, scratch);
    r.config.push_back(static_cast<std::uint32_t>(c));
    r.greedy.push_back(static_cast<std::uint32_t>(g));
    r.state.push_back(static_cast<std::uint32_t>(s));
    r.rate_qps.push_back(rates[t]);
    r.metric_ms.push_back(seen.metric_ms);
    r.cost.push_back(seen.cost);
    r.chosen_ms.push_back(chosen.metric_ms);
    r.greedy_ms.push_back(best.metric_ms);
    r.oracle_ms.push_back(oracle.metric_ms);
    r.chosen_cost.push_back(chosen.cost);
    r.greedy_cost.push_back(best.cost);
    r.oracle_cost.push_back(oracle.cost);
    r.learn_ns.push_back(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count() +
                                             std::chrono::duration_cast<std::chrono::nanoseconds>(t3 - t2).count()));
  }
  const bool slo = objective.kind == Objective::Kind::SloResources;
  r.converged_step = convergence_step(slo ? r.greedy_cost : r.greedy_ms, slo ? r.oracle_cost : r.oracle_ms,
                                      options.tolerance, options.window);
  return r;
}

}  // namespace servelab::rrl
