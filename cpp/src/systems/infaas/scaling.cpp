#include "servelab/systems/infaas/scaling.hpp"

#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::infaas {

void ScalingProblem::validate() const {
  const std::size_t n = size();
  if (n == 0) throw ValueError("the scaling problem has no variant");
  const auto same = [n](const char* field, std::size_t got) {
    if (got != n) throw ValueError(str(field, " has ", got, " entries for ", n, " variants"));
  };
  same("architecture", architecture.size());
  same("saturation_qps", saturation_qps.size());
  same("cost_per_s", cost_per_s.size());
  same("load_s", load_s.size());
  same("latency_ms", latency_ms.size());
  same("running", running.size());
  for (std::size_t v = 0; v < n; ++v) {
    const auto positive = [v](const char* field, double x) {
      if (!(std::isfinite(x) && x > 0)) throw ValueError(str(field, "[", v, "]=", x, " must be positive and finite"));
    };
    const auto non_negative = [v](const char* field, double x) {
      if (!(std::isfinite(x) && x >= 0)) throw ValueError(str(field, "[", v, "]=", x, " must be >= 0 and finite"));
    };
    positive("saturation_qps", saturation_qps[v]);
    positive("latency_ms", latency_ms[v]);
    non_negative("cost_per_s", cost_per_s[v]);
    non_negative("load_s", load_s[v]);
    if (running[v] < 0) throw ValueError(str("running[", v, "]=", running[v], " must be >= 0"));
  }
  if (requirement.size() != resource_types.size() || capacity.size() != resource_types.size()) {
    throw ValueError(str("resource_types has ", resource_types.size(), " entries but requirement has ",
                         requirement.size(), " and capacity ", capacity.size()));
  }
  for (std::size_t t = 0; t < resource_types.size(); ++t) {
    same("requirement[type]", requirement[t].size());
    if (!(std::isfinite(capacity[t]) && capacity[t] >= 0)) {
      throw ValueError(str("capacity[", t, "] (", resource_types[t], ")=", capacity[t], " must be >= 0 and finite"));
    }
    for (std::size_t v = 0; v < n; ++v) {
      if (!(std::isfinite(requirement[t][v]) && requirement[t][v] >= 0)) {
        throw ValueError(str("requirement[", t, "][", v, "]=", requirement[t][v], " must be >= 0 and finite"));
      }
    }
  }
  if (!(std::isfinite(load_qps) && load_qps >= 0)) throw ValueError(str("load_qps=", load_qps, " must be >= 0"));
  if (!(std::isfinite(slack_qps) && slack_qps >= 0)) throw ValueError(str("slack_qps=", slack_qps, " must be >= 0"));
  if (!(std::isfinite(slo_ms) && slo_ms > 0)) throw ValueError(str("slo_ms=", slo_ms, " must be positive"));
  if (!(std::isfinite(lambda) && lambda >= 0)) throw ValueError(str("lambda=", lambda, " must be >= 0"));
  std::size_t fastest = n;
  for (std::size_t v = 0; v < n; ++v) {
    if (latency_ms[v] <= slo_ms && (fastest == n || saturation_qps[v] > saturation_qps[fastest])) fastest = v;
  }
  if (fastest == n) return;  // no variant meets the SLO: nothing can be loaded
  const double needed = (load_qps + slack_qps) / saturation_qps[fastest];
  if (needed > kMaxPlannedInstances) {
    throw ValueError(
        str("load_qps=", load_qps, " (+ slack_qps=", slack_qps, ") needs ", needed,
            " instances of the highest-throughput variant within slo_ms=", slo_ms, " ('", names[fastest], "', ",
            saturation_qps[fastest], " qps); plans have at most ", kMaxPlannedInstances,
            " instances: load_qps + slack_qps must be <= ", kMaxPlannedInstances * saturation_qps[fastest]));
  }
}

double scaling_objective(const ScalingProblem& p, const std::vector<std::int64_t>& delta) {
  double total = 0;
  for (std::size_t v = 0; v < p.size(); ++v) {
    const auto d = static_cast<double>(delta[v]);
    total += p.cost_per_s[v] * (d + p.lambda * p.load_s[v] * std::max(d, 0.0));
  }
  return total;
}

void complete_plan(const ScalingProblem& p, ScalingPlan& plan) {
  const std::size_t n = p.size();
  plan.instances.assign(n, 0);
  plan.running_cost_per_s = plan.capacity_qps = 0;
  bool ok = plan.delta.size() == n;
  for (std::size_t v = 0; ok && v < n; ++v) {
    plan.instances[v] = p.running[v] + plan.delta[v];
    ok = plan.instances[v] >= 0 && (plan.delta[v] <= 0 || p.latency_ms[v] <= p.slo_ms);
    plan.running_cost_per_s += p.cost_per_s[v] * static_cast<double>(plan.instances[v]);
    plan.capacity_qps += p.saturation_qps[v] * static_cast<double>(plan.instances[v]);
  }
  // A relative tolerance: the solver works in floating point.
  const double need = p.load_qps + p.slack_qps;
  ok = ok && plan.capacity_qps >= need - 1e-9 * std::max(1.0, need);
  for (std::size_t t = 0; ok && t < p.resource_types.size(); ++t) {
    double used = 0;
    for (std::size_t v = 0; v < n; ++v) used += p.requirement[t][v] * static_cast<double>(plan.instances[v]);
    ok = used <= p.capacity[t] + 1e-9 * std::max(1.0, p.capacity[t]);
  }
  plan.feasible = ok;
  plan.objective = ok ? scaling_objective(p, plan.delta) : 0.0;
}

}  // namespace servelab::infaas
