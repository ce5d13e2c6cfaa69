// The periodic Model-Autoscaler inside the `infaas` policy (Sec. 4.2.2), per application:
//  - a load meter: the items each application sent over a sliding window of periods;
//  - every period, the application's candidate variants (accuracy >= its floor) become a
//    ScalingProblem (N_v: the live workers holding v; Q_v: its saturation QPS over the batches
//    meeting the SLO; L: the measured load; slack: L x (slack-threshold - 1); one instance per
//    worker, as a servelab worker runs one batch at a time, so each hardware type's live
//    workers are constraint (3)'s capacity) solved by the policy's scaling solver: the
//    Sec. 4.2.2 greedy (replicate vs upgrade, remove vs downgrade) or the exact Sec. 4.2.1 ILP.
// The caller applies the plan to the metadata store (scale-up at once, scale-down after the
// removed variants' load time T_v, Sec. 4.2.2's wait).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/systems/infaas/metadata_store.hpp"
#include "servelab/systems/infaas/scaling.hpp"
#include "servelab/systems/infaas/scaling_solvers.hpp"

namespace servelab::infaas {

// Items per application over the last `buckets` closed periods.
class LoadMeter {
 public:
  void reset(std::int32_t buckets, double period_s);
  void add(std::int32_t app, std::int64_t items);
  void close_period();  // the current period's counts join the window
  // Items/s of the application over the closed periods of the window (0 before the first).
  double qps(std::int32_t app) const;
  // Items/s of the application over the last closed period alone (0 before the first).
  double last_qps(std::int32_t app) const;

 private:
  struct App {
    std::int64_t current = 0, in_window = 0;
    std::deque<std::int64_t> closed;
  };
  std::vector<App> apps_;
  std::int32_t buckets_ = 1;
  double period_s_ = 1.0;
};

// An application's goals as the policy saw them: the tightest SLO and highest floor.
struct AppGoals {
  bool seen = false;
  double slo_ms = 0.0;
  double accuracy = 0.0;
  std::string task;  // its variants' task (empty: any)
  // Q_v is the saturation over the batches whose latency is within this (0: slo_ms). The `infaas`
  // policy's q_wait sets it to slo_ms / 2: a query may wait for a batch as long as its own.
  double q_slo_ms = 0.0;
};

// The ScalingProblem for one application; `ids[i]` is the store's variant of problem index i.
// Empty (ids empty) when no variant meets the floor or none has a live worker of its hardware.
// Candidates are ordered by cost, then memory footprint: the greedy keeps the first of ties.
// availability (by worker, optional): the share of each worker's time not taken by other
// applications' variants over the last period. A worker under half available does not count
// towards its hardware's capacity (unless it already holds a candidate), and a held candidate's
// saturation QPS is scaled by the mean availability of its holders: other applications' work on
// a shared worker is capacity this application does not have.
ScalingProblem application_problem(const MetadataStore& store, const AppGoals& goals, double load_qps, double slack,
                                   std::vector<VariantId>& ids, const std::vector<double>& availability = {});

// The solver's plan for the problem (default: the Sec. 4.2.2 greedy; the policy's autoscaler=
// picks one from scaling_solvers.hpp). When no plan fits the workers, the same solver's plan for
// the most load they can carry with one variant per worker of a hardware type (status
// "needs_vm": the VM-Autoscaler is asked for more workers); when even that does not fit, the
// solver's infeasible plan with status "needs_vm". Sets the plan's scale_down and replicas_only.
ScalingPlan plan_scaling(const ScalingProblem& problem);
ScalingPlan plan_scaling(const ScalingProblem& problem, const ScalingSolver& solve);

// The plan's additions to variants already running (its removals and new variants dropped): what
// may go ahead while an application's loads are under way. A scale-up that is not replicas only
// (the greedy's upgrade, an exact plan that also swaps variants) then still adds capacity.
ScalingPlan replicas_part(const ScalingProblem& problem, const ScalingPlan& plan);

// What of a plan goes ahead while the application's loads are under way (both worlds' rule): a
// plan of replicas only as it is; a scale-down nothing (no delta, replicas_only false: skip the
// period); any other scale-up its replicas_part (replicas_only false when it has none).
ScalingPlan while_loading(const ScalingProblem& problem, const ScalingPlan& plan);

}  // namespace servelab::infaas
