#include "servelab/systems/infaas/model_autoscaler.hpp"

#include <algorithm>
#include <map>

namespace servelab::infaas {

// A worker counts towards an application's capacity when other applications took less than
// this share of its last period: a batch of theirs ahead of a query delays it (a worker runs one
// batch at a time), which tight SLOs cannot absorb.
constexpr double kFreeShare = 0.95;

void LoadMeter::reset(std::int32_t buckets, double period_s) {
  apps_.clear();
  buckets_ = std::max(1, buckets);
  period_s_ = period_s;
}

void LoadMeter::add(std::int32_t app, std::int64_t items) {
  if (app < 0) return;
  if (app >= static_cast<std::int32_t>(apps_.size())) apps_.resize(static_cast<std::size_t>(app) + 1);
  apps_[app].current += items;
}

void LoadMeter::close_period() {
  for (App& a : apps_) {
    a.closed.push_back(a.current);
    a.in_window += a.current;
    a.current = 0;
    if (static_cast<std::int32_t>(a.closed.size()) > buckets_) {
      a.in_window -= a.closed.front();
      a.closed.pop_front();
    }
  }
}

double LoadMeter::qps(std::int32_t app) const {
  if (app < 0 || app >= static_cast<std::int32_t>(apps_.size()) || apps_[app].closed.empty()) return 0.0;
  const App& a = apps_[app];
  return static_cast<double>(a.in_window) / (static_cast<double>(a.closed.size()) * period_s_);
}

double LoadMeter::last_qps(std::int32_t app) const {
  if (app < 0 || app >= static_cast<std::int32_t>(apps_.size()) || apps_[app].closed.empty()) return 0.0;
  return static_cast<double>(apps_[app].closed.back()) / period_s_;
}

ScalingProblem application_problem(const MetadataStore& store, const AppGoals& goals, double load_qps, double slack,
                                   std::vector<VariantId>& ids, const std::vector<double>& availability) {
  const auto available = [&availability](WorkerId w) {
    return w >= 0 && w < static_cast<WorkerId>(availability.size()) ? availability[w] : 1.0;
  };
  ScalingProblem p;
  ids.clear();
  std::map<std::string, std::int32_t> type_of;  // hardware -> resource row
  // The greedy keeps the first of equally good plans: cheaper variants first, then the smaller
  // memory footprint (Sec. 6.2 prices an instance by its footprint; a profile prices hardware).
  std::vector<VariantId> order(static_cast<std::size_t>(store.num_variants()));
  for (VariantId v = 0; v < store.num_variants(); ++v) order[v] = v;
  std::stable_sort(order.begin(), order.end(), [&store](VariantId a, VariantId b) {
    const Variant &x = store.variant(a), &y = store.variant(b);
    return x.cost_per_s != y.cost_per_s ? x.cost_per_s < y.cost_per_s : x.memory_mb < y.memory_mb;
  });
  for (const VariantId v : order) {
    const Variant& var = store.variant(v);
    if (var.accuracy < goals.accuracy || store.workers_of(var.hardware).empty()) continue;
    if (!goals.task.empty() && var.task != goals.task) continue;
    std::int64_t running = 0;
    double share = 0.0;  // the holders' mean availability
    for (const Instance& i : store.instances(v)) {
      if (!store.alive(i.worker)) continue;
      ++running;
      share += available(i.worker);
    }
    share = running > 0 ? std::max(0.05, share / static_cast<double>(running)) : 1.0;
    ids.push_back(v);
    p.names.push_back(var.name);
    p.architecture.push_back(0);  // substitutes for one application: an upgrade replaces them all
    // Q_v within the SLO: a batch-4 CPU variant whose batch of 4 misses the SLO carries no more
    // than its batch-1 rate (else it looks like an upgrade it cannot deliver).
    const double within = goals.q_slo_ms > 0 ? goals.q_slo_ms : goals.slo_ms;
    const double q = within > 0 ? var.saturation_qps(within) : var.saturation_qps();
    p.saturation_qps.push_back((q > 0 ? q : var.saturation_qps()) * share);
    p.cost_per_s.push_back(var.cost_per_s);
    p.load_s.push_back(var.load_s);
    p.latency_ms.push_back(var.latency_at(1));
    p.running.push_back(running);
    if (!type_of.contains(var.hardware)) type_of.emplace(var.hardware, static_cast<std::int32_t>(type_of.size()));
  }
  if (ids.empty()) return p;
  p.resource_types.resize(type_of.size());
  p.requirement.assign(type_of.size(), std::vector<double>(ids.size(), 0.0));
  p.capacity.assign(type_of.size(), 0.0);
  for (const auto& [hw, t] : type_of) {
    p.resource_types[t] = hw + " workers";
    for (const auto& [util, w] : store.workers_of(hw)) p.capacity[t] += available(w) >= kFreeShare ? 1.0 : 0.0;
  }
  std::vector<double> held(type_of.size(), 0.0);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto t = type_of.at(store.variant(ids[i]).hardware);
    p.requirement[t][i] = 1.0;
    held[t] += static_cast<double>(p.running[i]);
  }
  // A worker may hold two candidates (loaded for queries before a decision): never infeasible as is.
  for (std::size_t t = 0; t < held.size(); ++t) p.capacity[t] = std::max(p.capacity[t], held[t]);
  p.load_qps = load_qps;
  p.slack_qps = load_qps * (slack - 1.0);
  p.slo_ms = goals.slo_ms;
  return p;
}

namespace {

// How the policy acts on a plan, from the problem it was solved for (not the solver's name, so that
// any solver's plan is read the same way). For the greedy, scale_down is exactly its "remove" and
// "downgrade" (chosen when capacity >= need) and replicas_only its "replicate".
void classify(const ScalingProblem& p, ScalingPlan& plan) {
  double capacity = 0;  // summed in the greedy's order: the same comparison to the bit
  for (std::size_t v = 0; v < p.size(); ++v) capacity += p.saturation_qps[v] * static_cast<double>(p.running[v]);
  bool added = false, removed = false, onto_running = true;
  for (std::size_t v = 0; v < plan.delta.size(); ++v) {
    added = added || plan.delta[v] > 0;
    removed = removed || plan.delta[v] < 0;
    onto_running = onto_running && (plan.delta[v] <= 0 || p.running[v] > 0);
  }
  plan.scale_down = (added || removed) && !(capacity < p.load_qps + p.slack_qps);
  plan.replicas_only = added && !removed && onto_running;
}

}  // namespace

ScalingPlan plan_scaling(const ScalingProblem& problem, const ScalingSolver& solve) {
  ScalingPlan plan = solve(problem);
  classify(problem, plan);
  if (plan.feasible) return plan;
  plan.status = "needs_vm";  // whatever the solver called it: the workers cannot carry the load
  // The most the workers can carry with one variant per worker of each hardware type.
  double most = 0;
  for (std::size_t i = 0; i < problem.size(); ++i) {
    if (problem.latency_ms[i] > problem.slo_ms) continue;
    for (std::size_t t = 0; t < problem.resource_types.size(); ++t) {
      if (problem.requirement[t][i] > 0) most = std::max(most, problem.saturation_qps[i] * problem.capacity[t]);
    }
  }
  if (most <= 0) return plan;
  ScalingProblem reduced = problem;
  reduced.load_qps = most * (1.0 - 1e-9);
  reduced.slack_qps = 0;
  ScalingPlan best = solve(reduced);
  classify(reduced, best);  // read as the greedy's strategy for the reduced load was
  if (!best.feasible) return plan;
  best.status = "needs_vm";  // the configuration carries what it can; more workers are needed
  return best;
}

ScalingPlan plan_scaling(const ScalingProblem& problem) { return plan_scaling(problem, &greedy_scaling); }

ScalingPlan replicas_part(const ScalingProblem& problem, const ScalingPlan& plan) {
  ScalingPlan out = plan;
  out.scale_down = out.replicas_only = false;
  for (std::size_t v = 0; v < out.delta.size(); ++v) {
    if (out.delta[v] < 0 || problem.running[v] == 0) out.delta[v] = 0;
    out.replicas_only = out.replicas_only || out.delta[v] > 0;
  }
  return out;
}

ScalingPlan while_loading(const ScalingProblem& problem, const ScalingPlan& plan) {
  if (plan.replicas_only) return plan;
  if (!plan.scale_down) return replicas_part(problem, plan);
  ScalingPlan none = plan;
  std::fill(none.delta.begin(), none.delta.end(), 0);
  none.scale_down = none.replicas_only = false;
  return none;
}

}  // namespace servelab::infaas
