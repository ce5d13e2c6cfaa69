// Sec. 4.2.2's greedy Model-Autoscaler over the ILP's problem (see scaling.hpp). Each candidate
// strategy is a full delta vector; the one with the lowest ILP objective that satisfies the
// constraints wins. The paper replicates "the running variant" and upgrades within the running
// variant's architecture; with several architectures running, each is a candidate on its own.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "servelab/core/errors.hpp"
#include "servelab/systems/infaas/scaling.hpp"

namespace servelab::infaas {
namespace {

std::int64_t instances_for(double qps, double per_instance) {
  return qps <= 0 ? 0 : static_cast<std::int64_t>(std::ceil(qps / per_instance - 1e-12));
}

struct Best {
  ScalingPlan plan;
  bool found = false;
  void offer(const ScalingProblem& p, std::vector<std::int64_t> delta, const char* strategy) {
    ScalingPlan candidate;
    candidate.delta = std::move(delta);
    complete_plan(p, candidate);
    if (!candidate.feasible) return;
    if (found && !(candidate.objective < plan.objective)) return;  // first strategy wins ties
    candidate.strategy = strategy;
    candidate.status = strategy;
    plan = std::move(candidate);
    found = true;
  }
};

}  // namespace

ScalingPlan greedy_scaling(const ScalingProblem& p) {
  const auto started = std::chrono::steady_clock::now();
  p.validate();
  const std::size_t n = p.size();
  const double need = p.load_qps + p.slack_qps;
  double capacity = 0;
  double top_qps = 0;  // the highest saturation QPS among running variants
  for (std::size_t v = 0; v < n; ++v) {
    capacity += p.saturation_qps[v] * static_cast<double>(p.running[v]);
    if (p.running[v] > 0) top_qps = std::max(top_qps, p.saturation_qps[v]);
  }
  const bool anything_running = capacity > 0;
  std::set<std::int32_t> running_archs;
  for (std::size_t v = 0; v < n; ++v) {
    if (p.running[v] > 0) running_archs.insert(p.architecture[v]);
  }
  Best best;
  const std::vector<std::int64_t> none(n, 0);
  // One variant v carries the whole load: every other running instance (of the replaced
  // architectures, or all of them when `all`) is unloaded.
  const auto single = [&](std::size_t v) {
    std::vector<std::int64_t> delta(n, 0);
    for (std::size_t u = 0; u < n; ++u) {
      if (u != v && (p.running[u] > 0) && (running_archs.size() <= 1 || p.architecture[u] == p.architecture[v])) {
        delta[u] = -p.running[u];
      }
    }
    double rest = 0;  // capacity left by the architectures not replaced
    for (std::size_t u = 0; u < n; ++u) {
      if (u != v) rest += p.saturation_qps[u] * static_cast<double>(p.running[u] + delta[u]);
    }
    delta[v] = instances_for(need - rest, p.saturation_qps[v]) - p.running[v];
    return delta;
  };
  if (capacity < need) {
    // Replicate a running variant (constraints 1, 4).
    for (std::size_t v = 0; v < n; ++v) {
      if (p.running[v] == 0 || p.latency_ms[v] > p.slo_ms) continue;
      std::vector<std::int64_t> delta(n, 0);
      delta[v] = instances_for(need - capacity, p.saturation_qps[v]);
      best.offer(p, std::move(delta), "replicate");
    }
    // Upgrade: a variant with a higher saturation QPS meeting the SLO (constraint 2); with nothing
    // running, any variant meeting the SLO.
    for (std::size_t v = 0; v < n; ++v) {
      if (p.latency_ms[v] > p.slo_ms) continue;
      if (anything_running && !(p.saturation_qps[v] > top_qps)) continue;
      if (anything_running && running_archs.size() > 1 && !running_archs.contains(p.architecture[v])) continue;
      best.offer(p, single(v), "upgrade");
    }
    if (!best.found) {
      ScalingPlan out;
      out.delta = none;
      complete_plan(p, out);
      out.feasible = false;
      out.status = out.strategy = "needs_vm";
      out.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return out;
    }
  } else {
    best.offer(p, none, "keep");
    // Remove instances of the running variant whose capacity is cheapest to give up.
    for (std::size_t v = 0; v < n; ++v) {
      if (p.running[v] == 0) continue;
      const auto spare = static_cast<std::int64_t>(std::floor((capacity - need) / p.saturation_qps[v] + 1e-12));
      const std::int64_t k = std::min(spare, p.running[v]);
      if (k <= 0) continue;
      std::vector<std::int64_t> delta(n, 0);
      delta[v] = -k;
      best.offer(p, std::move(delta), "remove");
    }
    // Downgrade to a cheaper variant meeting the SLO.
    for (std::size_t v = 0; v < n; ++v) {
      if (p.latency_ms[v] > p.slo_ms) continue;
      best.offer(p, single(v), "downgrade");
    }
  }
  best.plan.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return best.plan;
}

}  // namespace servelab::infaas
