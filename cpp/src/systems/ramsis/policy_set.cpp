// WorkerPolicy / PolicySet: decisions, lookups and validation (policy.hpp), and policy sets
// generated across loads (policy_set.hpp).
#include "servelab/systems/ramsis/policy_set.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <string>
#include <thread>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/systems/ramsis/arrivals.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

std::int32_t WorkerPolicy::level_of(Nanos slack) const {
  // upper_bound - 1: the largest level <= slack; below T_0 = 0 (a missed deadline) -> level 0.
  const auto it = std::upper_bound(slack_levels.begin(), slack_levels.end(), slack);
  if (it == slack_levels.begin()) return 0;
  return static_cast<std::int32_t>(it - slack_levels.begin()) - 1;
}

Action WorkerPolicy::decide(std::int32_t queue_length, Nanos earliest_slack) const {
  if (queue_length <= 0) return {kWaitModel, 0};
  if (queue_length > max_queue) {
    const std::int32_t s = overflow_state();
    return {action_model[s], std::min(queue_length, action_batch[s])};
  }
  const std::int32_t s = queue_length * num_levels() + level_of(earliest_slack);
  return {action_model[s], std::min(queue_length, action_batch[s])};
}

namespace {

// "poisson" or "erlang<r>" with an integer r in 1..kMaxErlangShape, as to_worker_policy names them.
void check_arrivals_name(const std::string& arrivals) {
  if (arrivals == "poisson") return;
  const std::string prefix = "erlang";
  if (arrivals.rfind(prefix, 0) == 0) {
    const std::string digits = arrivals.substr(prefix.size());
    const bool integer = !digits.empty() && digits.size() <= 9 &&
                         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (integer && std::stol(digits) >= 1 && std::stol(digits) <= kMaxErlangShape) return;
  }
  throw ValueError(
      str("arrivals='", arrivals, "' is not 'poisson' or 'erlang<r>' with an integer r in 1..", kMaxErlangShape));
}

// Discretisation and intervals agree: FLD has D in 1..kMaxIntervals and at most D + 1 levels (equal
// levels of a short SLO merge); MD takes its levels from the latencies and records D = 0.
void check_intervals(Discretisation discretisation, std::int32_t intervals, std::size_t levels) {
  if (discretisation == Discretisation::ModelBased) {
    if (intervals != 0) throw ValueError(str("intervals=", intervals, " must be 0 for discretisation='md'"));
    return;
  }
  if (intervals < 1 || intervals > kMaxIntervals) {
    throw ValueError(str("intervals=", intervals, " must be in 1..", kMaxIntervals, " for discretisation='fld'"));
  }
  if (levels > static_cast<std::size_t>(intervals) + 1) {
    throw ValueError(
        str("slack_levels has ", levels, " entries but intervals=", intervals, " makes at most ", intervals + 1));
  }
}

// (max_queue + 1) x levels + 1 states must fit the int32 state indices.
void check_state_count(std::int32_t max_queue, std::size_t levels) {
  const auto states = (static_cast<std::int64_t>(max_queue) + 1) * static_cast<std::int64_t>(levels) + 1;
  if (states > std::numeric_limits<std::int32_t>::max()) {
    throw ValueError(str("(max_queue + 1) x slack levels + 1 = (", max_queue, " + 1) x ", levels, " + 1 = ", states,
                         " states is more than 2**31 - 1"));
  }
}

}  // namespace

void WorkerPolicy::validate() const {
  const auto num_models = static_cast<std::int32_t>(models.size());
  if (num_models == 0) throw ValueError("models is empty: a policy needs at least one model");
  if (accuracy.size() != models.size()) {
    throw ValueError(str("accuracy has ", accuracy.size(), " entries for ", models.size(), " models"));
  }
  for (std::size_t i = 0; i < accuracy.size(); ++i) {
    if (!std::isfinite(accuracy[i])) throw ValueError(str("accuracy[", models[i], "]=", accuracy[i], " is not finite"));
  }
  if (slo <= 0) throw ValueError(str("slo=", slo, " ns must be positive"));
  if (!(load_qps >= 0.0) || !std::isfinite(load_qps)) throw ValueError(str("load_qps=", load_qps, " must be >= 0"));
  if (workers < 1) throw ValueError(str("workers=", workers, " must be >= 1"));
  parse_balancer(balancer);  // ValueError naming it and the known ones
  check_arrivals_name(arrivals);
  if (max_queue < 1 || max_queue > kMaxQueueLength) {
    throw ValueError(str("max_queue=", max_queue, " must be in 1..", kMaxQueueLength));
  }
  if (slack_levels.size() < 2) throw ValueError(str("slack_levels has ", slack_levels.size(), " entries (needs >= 2)"));
  check_intervals(discretisation, intervals, slack_levels.size());
  check_state_count(max_queue, slack_levels.size());
  if (slack_levels.front() != 0) throw ValueError(str("slack_levels[0]=", slack_levels.front(), " must be 0"));
  for (std::size_t j = 1; j < slack_levels.size(); ++j) {
    if (slack_levels[j] <= slack_levels[j - 1]) {
      throw ValueError(
          str("slack_levels must increase: [", j - 1, "]=", slack_levels[j - 1], " [", j, "]=", slack_levels[j]));
    }
  }
  const auto states = static_cast<std::size_t>(num_states());
  if (action_model.size() != states || action_batch.size() != states) {
    throw ValueError(
        str("action tables have ", action_model.size(), "/", action_batch.size(), " entries for ", states, " states"));
  }
  for (std::int32_t s = 0; s < num_states(); ++s) {
    const std::int32_t n = s == overflow_state() ? max_queue + 1 : s / num_levels();
    const std::int32_t m = action_model[s], b = action_batch[s];
    if (n == 0) {
      if (m != kWaitModel || b != 0) throw ValueError(str("state ", s, " (empty queue) must wait, has model=", m));
      continue;
    }
    if (m < 0 || m >= num_models) throw ValueError(str("action_model[", s, "]=", m, " is not a model index"));
    if (b < 1 || b > n) throw ValueError(str("action_batch[", s, "]=", b, " is not in 1..", n));
  }
}

std::int32_t PolicySet::lookup_index(double load_qps) const {
  if (policies.empty()) throw ValueError("the policy set is empty");
  if (std::isnan(load_qps)) throw ValueError("load_qps=nan");
  const auto it = std::lower_bound(policies.begin(), policies.end(), load_qps,
                                   [](const WorkerPolicy& p, double load) { return p.load_qps < load; });
  if (it == policies.end()) return static_cast<std::int32_t>(policies.size()) - 1;
  return static_cast<std::int32_t>(it - policies.begin());
}

PolicySet policy_set_of(WorkerPolicy policy) {
  PolicySet set;
  set.models = policy.models;
  set.accuracy = policy.accuracy;
  set.slo = policy.slo;
  set.workers = policy.workers;
  set.policies.push_back(std::move(policy));
  return set;
}

void PolicySet::validate() const {
  if (policies.empty()) throw ValueError("policies is empty");
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const WorkerPolicy& p = policies[i];
    p.validate();
    if (p.models != models) throw ValueError(str("policies[", i, "].models differ from the set's models"));
    if (p.slo != slo) throw ValueError(str("policies[", i, "].slo=", p.slo, " differs from slo=", slo));
    if (p.workers != workers) {
      throw ValueError(str("policies[", i, "].workers=", p.workers, " differs from workers=", workers));
    }
    if (i > 0 && !(p.load_qps > policies[i - 1].load_qps)) {
      throw ValueError(str("policies must have ascending loads: [", i - 1, "]=", policies[i - 1].load_qps, " [", i,
                           "]=", p.load_qps));
    }
  }
}

std::string discretisation_name(Discretisation d) { return d == Discretisation::FixedLength ? "fld" : "md"; }
Discretisation parse_discretisation(const std::string& name) {
  if (name == "fld") return Discretisation::FixedLength;
  if (name == "md") return Discretisation::ModelBased;
  throw ValueError(str("discretisation='", name, "' is not one of 'fld', 'md'"));
}
std::string batching_name(Batching b) { return b == Batching::Maximal ? "maximal" : "variable"; }
Batching parse_batching(const std::string& name) {
  if (name == "maximal") return Batching::Maximal;
  if (name == "variable") return Batching::Variable;
  throw ValueError(str("batching='", name, "' is not one of 'maximal', 'variable'"));
}

}  // namespace servelab::ramsis

// ---- generation across loads ----
namespace servelab::ramsis {

namespace {

// Generates the policies of `loads` (in parallel when threads > 1); same order. The calling
// thread takes its share too and watches for Ctrl-C (interrupt scopes are per thread); on one it
// stops handing out loads, waits for the running ones and rethrows.
std::vector<WorkerPolicy> generate_all(const LatencyTable& table, const GenerateOptions& base,
                                       const std::vector<double>& loads, std::int32_t threads) {
  std::vector<WorkerPolicy> out(loads.size());
  std::vector<std::exception_ptr> errors(loads.size());
  std::atomic<std::size_t> next{0}, finished{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (std::size_t i; !stop && (i = next++) < loads.size();) {
      try {
        GenerateOptions o = base;
        o.mdp.load_qps = loads[i];
        out[i] = generate_policy(table, o).policy;
      } catch (...) {
        errors[i] = std::current_exception();
        stop = true;
      }
      ++finished;
    }
  };
  const std::size_t helpers = std::min<std::size_t>(std::max(threads, 1), loads.size()) - 1;
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < helpers; ++w) pool.emplace_back(work);
  std::exception_ptr interrupted;
  try {
    for (std::size_t i; !stop && (i = next++) < loads.size();) {
      core::check_interrupt();
      try {
        GenerateOptions o = base;
        o.mdp.load_qps = loads[i];
        out[i] = generate_policy(table, o).policy;
      } catch (const Interrupted&) {
        throw;
      } catch (...) {
        errors[i] = std::current_exception();
        stop = true;
      }
      ++finished;
    }
    while (!pool.empty() && finished < std::min(next.load(), loads.size()) && !stop) {
      core::check_interrupt();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } catch (...) {
    interrupted = std::current_exception();
    stop = true;
  }
  for (auto& t : pool) t.join();
  if (interrupted) std::rethrow_exception(interrupted);
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

}  // namespace

PolicySet generate_policy_set(const LatencyTable& table, const PolicySetOptions& o) {
  if (o.loads_qps.empty()) throw ValueError("loads_qps is empty: give at least one load");
  for (const double l : o.loads_qps) {
    if (!(l > 0) || !std::isfinite(l)) throw ValueError(str("loads_qps contains ", l, ": loads must be > 0"));
  }
  if (o.max_policies < 1) throw ValueError(str("max_policies=", o.max_policies, " must be >= 1"));
  if (!(o.min_load_step_qps > 0)) throw ValueError(str("min_load_step_qps=", o.min_load_step_qps, " must be > 0"));
  std::vector<double> grid = o.loads_qps;
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  if (static_cast<std::int32_t>(grid.size()) > o.max_policies) {
    throw ValueError(str("loads_qps has ", grid.size(), " loads, more than max_policies=", o.max_policies));
  }
  std::map<double, WorkerPolicy> made;
  std::vector<double> todo = grid;
  while (!todo.empty()) {
    auto policies = generate_all(table, o.generate, todo, o.threads);
    for (std::size_t i = 0; i < todo.size(); ++i) made.emplace(todo[i], std::move(policies[i]));
    todo.clear();
    if (!(o.max_accuracy_gap > 0)) break;
    std::vector<std::pair<double, const WorkerPolicy*>> sorted;
    for (const auto& [load, p] : made) sorted.emplace_back(load, &p);
    for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
      if (static_cast<std::int32_t>(made.size() + todo.size()) >= o.max_policies) break;
      // Between two loads nothing can serve, a finer grid tells nothing new.
      if (!sorted[i].second->feasible && !sorted[i + 1].second->feasible) continue;
      const double gap = std::abs(sorted[i].second->expected_accuracy - sorted[i + 1].second->expected_accuracy);
      const double mid = 0.5 * (sorted[i].first + sorted[i + 1].first);
      if (gap >= o.max_accuracy_gap && sorted[i + 1].first - sorted[i].first >= 2 * o.min_load_step_qps) {
        todo.push_back(mid);
      }
    }
  }
  PolicySet set;
  for (auto& [load, p] : made) set.policies.push_back(std::move(p));
  set.models = set.policies.front().models;
  set.accuracy = set.policies.front().accuracy;
  set.slo = set.policies.front().slo;
  set.workers = set.policies.front().workers;
  set.validate();
  return set;
}

}  // namespace servelab::ramsis
