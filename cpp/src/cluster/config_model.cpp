#include "servelab/cluster/config_model.hpp"

#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"

namespace servelab::cluster {

Nanos scaled_service_time(const ConfigModel& model, const sched::ClusterView& view, sched::WorkerId worker,
                          sched::ModelId model_id, std::int64_t items, Nanos drawn) {
  const double scale = model.scale(view, worker, model_id, items);
  if (!std::isfinite(scale) || scale <= 0) {
    throw ValueError(str("config model ", model.describe(), ": scale=", scale, " for worker=", worker,
                         " must be a finite positive number"));
  }
  const double scaled = std::round(static_cast<double>(drawn) * scale);
  // Beyond 2^63 ns (292 years) the cast would be undefined; say so instead.
  if (scaled >= static_cast<double>(std::numeric_limits<Nanos>::max())) {
    throw ValueError(str("config model ", model.describe(), ": service time ", drawn, " ns x scale=", scale,
                         " for worker=", worker, " overflows int64 nanoseconds"));
  }
  return static_cast<Nanos>(scaled);
}

std::int64_t busy_workers(const sched::ClusterView& view, sched::HardwareId hardware) {
  std::int64_t busy = 0;
  for (sched::WorkerId w = 0; w < view.num_workers(); ++w) {
    if (view.hardware(w) == hardware && view.status(w) == sched::WorkerStatus::Busy) ++busy;
  }
  return busy;
}

}  // namespace servelab::cluster
