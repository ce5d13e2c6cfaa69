// The Model-Autoscaler's decision (Sec. 4.2.1): which scaling action delta_v (instances to load,
// > 0, or unload, < 0) to take for each variant so that the loaded instances carry the load at
// least cost. The same problem is solved exactly (solve_scaling_ilp, ilp_scaling.hpp, through the
// LP/MILP adapter) and by the greedy heuristic of Sec. 4.2.2 (greedy_scaling, here).
//
// Objective: sum_v C_v (delta_v + lambda T_v^load max(delta_v, 0)). Constraints:
//  (1) sum_v Q_v (N_v + delta_v) >= L + slack;
//  (2) delta_v > 0 only if T_v^inf <= S;
//  (3) sum_v R_v^type (N_v + delta_v) <= R_total^type for each resource type;
//  (4) N_v + delta_v >= 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servelab::infaas {

// The most instances a plan may need of the highest-throughput variant within the SLO (more than
// any cluster holds): validate() refuses a load beyond, since CBC loses integrality (and aborts
// on an assertion) as instance counts near 2^53, e.g. Table 2 at load_qps=1e20.
inline constexpr double kMaxPlannedInstances = 1e9;

struct ScalingProblem {
  std::vector<std::string> names;          // by variant (for messages)
  std::vector<std::int32_t> architecture;  // by variant: the greedy upgrades within one
  std::vector<double> saturation_qps;      // Q_v
  std::vector<double> cost_per_s;          // C_v
  std::vector<double> load_s;              // T_v^load
  std::vector<double> latency_ms;          // T_v^inf
  std::vector<std::int64_t> running;       // N_v
  std::vector<std::string> resource_types;
  std::vector<std::vector<double>> requirement;  // [type][variant]: R_v^type
  std::vector<double> capacity;                  // [type]: R_total^type
  double load_qps = 0.0;                         // L
  double slack_qps = 0.0;                        // slack
  double slo_ms = 0.0;                           // S
  double lambda = 0.0;                           // lambda, 1/s

  std::size_t size() const { return names.size(); }
  void validate() const;  // ValueError naming the field, index and value (and the load's limit)
};

struct ScalingPlan {
  std::vector<std::int64_t> delta;      // by variant
  std::vector<std::int64_t> instances;  // N_v + delta_v
  double objective = 0.0;               // the ILP's objective at delta
  double running_cost_per_s = 0.0;      // sum_v C_v (N_v + delta_v), Table 3's last column
  double capacity_qps = 0.0;            // sum_v Q_v (N_v + delta_v)
  bool feasible = false;
  std::string status;    // "optimal", "infeasible", ...; the greedy: "replicate", "upgrade", ...
  std::string strategy;  // the greedy's chosen strategy, or "ilp"
  double solve_s = 0.0;
  // How the policy acts on it, whichever solver made it (plan_scaling, model_autoscaler.hpp, sets
  // them from the problem and delta): a scale-down (the running instances already carried the load,
  // so the plan only saves cost: it waits for the removed variants' load time, Sec. 4.2.2), and
  // whether it only adds instances of running variants (may go ahead while loads are under way).
  bool scale_down = false;
  bool replicas_only = false;
};

double scaling_objective(const ScalingProblem& p, const std::vector<std::int64_t>& delta);
// Fills instances, objective, running cost and capacity from delta, and checks constraints 1-4.
void complete_plan(const ScalingProblem& p, ScalingPlan& plan);

// Sec. 4.2.2: when capacity is short, the cheaper of replicating a running variant and upgrading
// (every instance of the architecture replaced by one variant with a higher saturation QPS that
// meets the SLO); when there is headroom, the cheaper of removing instances and downgrading to one
// cheaper variant, or nothing. With nothing running, every variant is an upgrade candidate.
// Infeasible (status "needs_vm") when no option fits the resources: the VM-Autoscaler's case.
ScalingPlan greedy_scaling(const ScalingProblem& p);

}  // namespace servelab::infaas
