#include "servelab/systems/infaas/ilp_scaling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "servelab/core/errors.hpp"

namespace servelab::infaas {

namespace lp = solvers::lp;

namespace {

// Q_v towards constraint 1: a running instance slower than the SLO carries none of the load
// within it (constraint 2 keeps new ones out, but without this the optimum may keep cheap slow
// instances, e.g. 3 x Table 2's A at a 50 ms SLO, where the greedy keeps one B).
double within_slo(const ScalingProblem& p, std::size_t v) {
  return p.latency_ms[v] <= p.slo_ms ? p.saturation_qps[v] : 0.0;
}

}  // namespace

ScalingPlan solve_scaling_ilp(const ScalingProblem& p, const lp::Options& options) {
  p.validate();
  const auto started = std::chrono::steady_clock::now();
  const std::size_t n = p.size();
  lp::Model model(lp::Sense::Minimize);
  std::vector<std::int32_t> load(n), unload(n);
  double capacity = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const double c = p.cost_per_s[v];
    // Constraint 2: a variant slower than the SLO gets no new instance.
    const double load_upper = p.latency_ms[v] <= p.slo_ms ? lp::kInf : 0.0;
    load[v] = model.add_variable("load_" + std::to_string(v), 0.0, load_upper, lp::VarType::Integer,
                                 c * (1.0 + p.lambda * p.load_s[v]));
    // Constraint 4: never unload more than are running.
    unload[v] = model.add_variable("unload_" + std::to_string(v), 0.0, static_cast<double>(p.running[v]),
                                   lp::VarType::Integer, -c);
    capacity += within_slo(p, v) * static_cast<double>(p.running[v]);
  }
  // Constraint 1: the instances carry the load plus the slack.
  std::vector<lp::Term> terms;
  for (std::size_t v = 0; v < n; ++v) {
    terms.push_back({load[v], within_slo(p, v)});
    terms.push_back({unload[v], -within_slo(p, v)});
  }
  model.add_constraint("load", terms, p.load_qps + p.slack_qps - capacity, lp::kInf);
  // Constraint 3: each resource type's total.
  for (std::size_t t = 0; t < p.resource_types.size(); ++t) {
    terms.clear();
    double used = 0;
    for (std::size_t v = 0; v < n; ++v) {
      if (p.requirement[t][v] == 0) continue;
      terms.push_back({load[v], p.requirement[t][v]});
      terms.push_back({unload[v], -p.requirement[t][v]});
      used += p.requirement[t][v] * static_cast<double>(p.running[v]);
    }
    model.add_constraint("resource_" + std::to_string(t), terms, -lp::kInf, p.capacity[t] - used);
  }
  lp::Solution solution = lp::solve(model, options);  // RuntimeError without a solver
  // Among the optimal plans, the one that loads and unloads the fewest instances: with equal costs
  // (lambda = 0, variants priced by hardware) the optimum is not unique, and a periodic policy must
  // not swap equally good variants back and forth. A second solve keeps the objective at its
  // optimum (within the MIP gap) and minimises the changes; both solves are deterministic.
  if (solution.status == lp::Status::Optimal) {
    terms.clear();
    for (std::int32_t j = 0; j < model.num_variables(); ++j) {
      terms.push_back({j, model.objective()[j]});
      model.set_objective(j, 1.0);
    }
    const double z = solution.objective;
    model.add_constraint("optimal", terms, -lp::kInf, z + 1e-7 * std::max(1.0, std::abs(z)));
    lp::Solution fewest = lp::solve(model, options);
    if (fewest.status == lp::Status::Optimal) solution = std::move(fewest);
  }
  ScalingPlan plan;
  plan.strategy = "ilp";
  plan.status = std::string(lp::status_name(solution.status));
  if (solution.has_solution) {
    plan.delta.resize(n);
    for (std::size_t v = 0; v < n; ++v) {
      plan.delta[v] = std::llround(solution.values[load[v]]) - std::llround(solution.values[unload[v]]);
    }
    complete_plan(p, plan);
  } else {
    plan.delta.assign(n, 0);
    complete_plan(p, plan);
    plan.feasible = false;
  }
  plan.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return plan;
}

}  // namespace servelab::infaas
