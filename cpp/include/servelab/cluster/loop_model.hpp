// Loop models: the serving loop's own time, so that the simulator predicts a served run.
//
// In the real serving loop a batch does not start the instant the scheduler dispatches it, and the
// scheduler does not learn of its end the instant it ends: the worker's thread must wake up and
// take the batch (dispatch -> start, "wake"), and the controller must take up the completion
// (finish -> noticed, "notice"); an arrival, too, is taken up a little after its time
// ("arrival"). A run may name a loop model (RunSpec::loop_model, chosen per run from the
// catalogue's loop-model registry; servelab.calibrate fits one from a served run's stage stamps).
// The simulator then, for every batch, draws a wake and a notice delay: the batch starts `wake`
// after its dispatch and runs its service time, and its worker is free to the scheduler `notice`
// after it ends; an arrival that finds a worker free reaches the scheduler `arrival` after its
// time, never before an earlier one (one that finds every worker busy is seen at its time: in the
// real loop its lateness holds nobody up, and the largest take-ups, those of a controller sharing
// its core with a busy worker, happen then). The records keep the query's workload arrival and
// the batch's own start and finish, as the serving loop's records do. Draws come from the run's
// stream "loop", so a run stays deterministic. Without a loop model (the default) the loop is
// instantaneous: one pointer test, and records are bit-identical to a run without the hook.
#pragma once

#include <string>
#include <vector>

#include "servelab/core/registry.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/core/time.hpp"

namespace servelab::cluster {

// The three delays of the loop, each a distribution over non-negative nanoseconds.
class LoopModel {
 public:
  virtual ~LoopModel() = default;
  // Dispatch -> the batch starts on its worker.
  virtual Nanos wake(Rng& rng) const = 0;
  // The batch ends -> the scheduler sees its worker free.
  virtual Nanos notice(Rng& rng) const = 0;
  // A query's arrival time -> the scheduler's on_arrival (when it finds a worker free).
  virtual Nanos arrival(Rng& rng) const = 0;
  // The model and its parameters, e.g. "fixed_loop(wake_us=40, notice_us=20, arrival_us=0)".
  virtual std::string describe() const = 0;
};

using LoopModelRegistry = Registry<LoopModel>;

// An empirical distribution given by its quantiles at evenly spaced probabilities 0, 1/(n-1), ...,
// 1 (non-decreasing, >= 0, in ns); a draw interpolates linearly between neighbours (inverse CDF).
// One value: a constant. ValueError naming `field` and the offending value otherwise.
class QuantileDelay {
 public:
  QuantileDelay() = default;
  QuantileDelay(std::string_view field, const std::vector<double>& quantiles_us);
  Nanos draw(Rng& rng) const;
  bool zero() const { return quantiles_.empty(); }

 private:
  std::vector<double> quantiles_;  // ns; empty: always 0
};

// The built-in entries: "fixed_loop" (constant delays) and "measured_loop" (quantile tables).
void register_loop_models(LoopModelRegistry& registry);

}  // namespace servelab::cluster
