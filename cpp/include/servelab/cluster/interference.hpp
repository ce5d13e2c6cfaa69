// Interference models: how model instances running at the same time on one machine slow each
// other down, in the simulator.
//
// A run may name an interference model (RunSpec::interference, chosen per run from the
// catalogue's interference-model registry). The simulator then times every batch by progress
// rate: a batch holds `work`, its service time alone (the profile's, after the config model),
// and progresses at 1 / slowdown, where the slowdown is the model's answer for its instance and
// the instances running a batch on its machine now. Whenever that set changes (a batch starts or
// ends on the machine) or an instance's knobs change (a partition, set_config), every running
// batch on the machine is re-timed from that moment: the work done so far is kept, the rest runs
// at the new rate. The finish is rounded to the nearest ns once per re-timing; everything else is
// exact and deterministic. Without a model (the default) batches run at their profile time:
// one pointer test, records bit-identical to a run without the hook. Under a loop model a batch
// counts as running from its dispatch until its end is noticed, and progresses from its start.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "servelab/core/registry.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

class InterferenceModel {
 public:
  virtual ~InterferenceModel() = default;
  // The factor (finite, > 0; 1 = as fast as alone) by which the batch running on `worker` is slowed
  // now, with `co_runners` the other instances of its machine running a batch now (ascending
  // ids). The view answers the rest: the batches' models (running_model), the instances'
  // knobs (config: "cores", "llc_ways", ...), the machine's resources.
  virtual double slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                          std::span<const sched::WorkerId> co_runners) const = 0;
  // The slowdown of every batch running on one machine at once: out[i] for running[i], each
  // with the others as its co-runners (running: the machine's busy instances, ascending). The
  // engine calls this; the default asks slowdown() for each, a model may answer all in one go.
  virtual void slowdowns(const sched::ClusterView& view, std::span<const sched::WorkerId> running,
                         std::span<double> out) const;
  // The model and its parameters, e.g. "per_corunner(slowdown=0.2)".
  virtual std::string describe() const = 0;
};

using InterferenceModelRegistry = Registry<InterferenceModel>;

// The built-in entries: "none", "per_corunner" (a fixed slowdown per co-runner), "cpu_share"
// (busy threads sharing the machine's cores) and "measured" (a table of slowdowns by co-runner
// models, as servelab.profile measures it).
void register_interference_models(InterferenceModelRegistry& registry);

// A slowdown beyond this is a unit or sign mistake, not interference.
inline constexpr double kMaxSlowdown = 1e6;

// Throws the ValueError for out[i], a slowdown outside (0, kMaxSlowdown], naming the model, the
// worker and the value.
[[noreturn]] void bad_slowdown(const InterferenceModel& model, std::span<const sched::WorkerId> running,
                               std::span<const double> out, std::size_t i);

// model.slowdowns(...), checked (bad_slowdown). Inline: the simulator calls it at every re-timing.
inline void checked_slowdowns(const InterferenceModel& model, const sched::ClusterView& view,
                              std::span<const sched::WorkerId> running, std::span<double> out) {
  model.slowdowns(view, running, out);
  for (std::size_t i = 0; i < running.size(); ++i) {
    if (!(out[i] > 0 && out[i] <= kMaxSlowdown)) [[unlikely]]  // (NaN fails too)
      bad_slowdown(model, running, out, i);
  }
}

}  // namespace servelab::cluster
