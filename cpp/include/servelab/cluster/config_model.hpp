// Config models: how a worker's current settings (the integer knobs a policy sets with
// Actions::set_config, e.g. "intra_op_threads") change its simulated service times.
//
// The profile gives a batch's service time at one reference configuration. A run may name a config
// model (RunSpec::config_model, chosen per run from the catalogue's config-model registry); the
// simulator then multiplies every service time it draws by the model's scale for the worker's
// settings at the moment the batch starts. Without one (the default) service times are the
// profile's, untouched: the hook is one pointer test, and records are bit-identical to a run
// without the hook. In the real serving loop the executors read the knobs themselves, so a config
// model is a simulator setting only.
#pragma once

#include <cstdint>
#include <string>

#include "servelab/core/registry.hpp"
#include "servelab/core/time.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

class ConfigModel {
 public:
  virtual ~ConfigModel() = default;
  // The factor (> 0, finite) applied to a service time drawn for `items` items of `model` on
  // `worker`, whose batch is starting now (the worker is already Busy in `view`).
  virtual double scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
                       std::int64_t items) const = 0;
  // The model and its parameters, e.g. "rrl_cpu(base_ms=5.2, ...)".
  virtual std::string describe() const = 0;
};

using ConfigModelRegistry = Registry<ConfigModel>;

// `drawn` scaled by `model` for the worker's settings, rounded to the nearest ns.
// ValueError naming the model, the worker and the value when the scale is not a finite positive
// number, or when the scaled time does not fit int64 ns.
Nanos scaled_service_time(const ConfigModel& model, const sched::ClusterView& view, sched::WorkerId worker,
                          sched::ModelId model_id, std::int64_t items, Nanos drawn);

// The number of workers on `hardware` that are running a batch now (Busy), the one asking
// included: "requests in service" for models of request parallelism. O(workers).
std::int64_t busy_workers(const sched::ClusterView& view, sched::HardwareId hardware);

}  // namespace servelab::cluster
