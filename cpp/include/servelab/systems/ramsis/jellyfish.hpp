// The load-granular baselines of RAMSIS's evaluation (paper sec. 7): Jellyfish+ and ModelSwitching.
// Both pick one (model, largest batch) per load and serve an in-order central queue from which idle
// workers, lowest id first, take the oldest queries, as many as that batch allows (adaptive
// batching, no waiting for a fuller batch). They differ only in how the model is chosen, so this
// header holds what they share; model_switching.hpp adds the ModelSwitching choice table.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "servelab/sched/scheduler.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/ramsis/load_monitor.hpp"

namespace servelab::ramsis {

using sched::ModelId;
using sched::WorkerId;

// One model a worker can run: its accuracy (NaN: unknown) and decision latency per batch size.
struct ModelCurve {
  ModelId model = -1;
  double accuracy = 0;
  std::vector<Nanos> latency;  // latency[b - 1] for b = 1 .. latency.size()
};

// The (model, largest batch) a load-granular policy serves with at one load.
struct BatchRule {
  ModelId model = -1;
  std::int64_t max_batch = 0;
};

// Jellyfish's adaptive batching rule: for each model, the largest batch b whose throughput
// b / latency(b) is at least headroom x rate_per_worker and whose latency is at most slo / 2 (half
// the SLO is left for queueing); the most accurate model having such a batch wins (ties: the
// earlier curve; an unknown accuracy ranks last), with that batch. When no model qualifies, the
// fastest model at batch 1 with its largest batch. ValueError for empty `models`, slo <= 0 or a
// negative or NaN rate.
BatchRule adaptive_batch_rule(std::span<const ModelCurve> models, Nanos slo, double rate_per_worker_qps,
                              double headroom);

// The curves of every model loaded on `worker` that its hardware has a latency profile for.
std::vector<ModelCurve> model_curves(const sched::ClusterView& view, WorkerId worker);
// The curve of `model` on `hardware` from a profile: its accuracy and the `statistic` latency of
// every batch 1..max_batch (ValueError when the pair has no latency).
ModelCurve profile_curve(const profile::Profile& profile, sched::HardwareId hardware, ModelId model,
                         profile::Statistic statistic);

struct LoadGranularOptions {
  // The loads (queries/s, ascending) that rules are computed for: an estimate selects the smallest
  // one at or above it. Empty: the rule is computed for the estimate itself.
  std::vector<double> loads_qps;
  // > 0: the load is known and fixed (the paper's constant-load runs assume a perfect monitor).
  double fixed_load_qps = 0;
  // The SLO the rules use; 0: the first query's deadline - arrival.
  Nanos slo = 0;
  Nanos window = kDefaultLoadWindow;  // the load monitor's moving-average window
};

// The shared in-order central queue. A subclass only says which rule applies to a worker at a load.
class LoadGranularScheduler : public sched::Scheduler {
 public:
  explicit LoadGranularScheduler(LoadGranularOptions options);

  void on_start(const sched::ClusterView& view, sched::Actions& actions) override;
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override;
  void on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view, sched::Actions& actions) override;
  void on_worker_ready(WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) override;

  const LoadGranularOptions& options() const { return options_; }

 protected:
  // The rule of `worker` at `load_qps` (a grid load, the fixed load or the estimate) with `workers`
  // live workers sharing it. `curves` are the worker's models (never empty).
  virtual BatchRule rule(std::span<const ModelCurve> curves, double load_qps, Nanos slo, std::int32_t workers) = 0;
  // "loads=[...], load_qps=..., slo_ms=..., window_ms=..." for describe().
  std::string describe_options() const;

 private:
  void drain(const sched::ClusterView& view, sched::Actions& actions);
  bool serve_head(const sched::ClusterView& view, sched::Actions& actions);
  const BatchRule& rule_for(const sched::ClusterView& view, WorkerId worker);
  const std::vector<ModelCurve>& curves_for(const sched::ClusterView& view, WorkerId worker);
  void count_live_workers(const sched::ClusterView& view);

  LoadGranularOptions options_;
  LoadMonitor monitor_;
  Nanos slo_ = 0;
  std::int32_t live_workers_ = 0;
  std::vector<std::optional<std::vector<ModelCurve>>> curves_;  // per worker, built on first use
  std::vector<std::vector<std::optional<BatchRule>>> rules_;    // per worker, per grid load
  BatchRule scratch_rule_;                                      // without a grid
  std::vector<sched::QueryId> batch_;
};

}  // namespace servelab::ramsis

namespace servelab::ramsis {

// Jellyfish+ (Jellyfish extended to many workers per SLO, paper sec. 7): adaptive_batch_rule with
// 5% throughput headroom over the per-worker load (load / live workers), as the artifact does.
inline constexpr double kJellyfishHeadroom = 1.05;
std::shared_ptr<sched::Scheduler> make_jellyfish(LoadGranularOptions options);

// The registry parameters Jellyfish+ and ModelSwitching share (loads, load_qps, slo_ms,
// window_ms) and the options they give.
std::vector<ParamSpec> load_granular_params();
LoadGranularOptions load_granular_options(const Params& params);

// Registers "jellyfish".
void register_jellyfish(sched::SchedulerRegistry& registry);

}  // namespace servelab::ramsis
