#include "servelab/systems/infaas/interference.hpp"

#include <cmath>
#include <memory>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/params.hpp"

namespace servelab::infaas {

InterferenceModel::InterferenceModel(double alpha, std::string key) : alpha_(alpha), key_(std::move(key)) {
  if (!(std::isfinite(alpha_) && alpha_ >= 0)) {
    throw ValueError(str("infaas_interference: alpha=", alpha_, " must be >= 0 and finite"));
  }
  if (key_.empty()) throw ValueError("infaas_interference: key='' must name a worker knob");
}

double InterferenceModel::scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId,
                                std::int64_t) const {
  const std::int64_t machine = view.config(worker, key_, -1);
  if (machine < 0 || alpha_ == 0) return 1.0;
  std::int64_t others = 0, busy = 0;
  for (sched::WorkerId w = 0; w < view.num_workers(); ++w) {
    if (w == worker || view.status(w) == sched::WorkerStatus::Stopped || view.config(w, key_, -1) != machine) {
      continue;
    }
    ++others;
    busy += view.status(w) == sched::WorkerStatus::Busy ? 1 : 0;
  }
  return others == 0 ? 1.0 : 1.0 + alpha_ * static_cast<double>(busy) / static_cast<double>(others);
}

std::string InterferenceModel::describe() const {
  return str("infaas_interference(alpha=", format_param_value(ParamValue{alpha_}), ", key='", key_, "')");
}

void register_config_models(cluster::ConfigModelRegistry& registry) {
  ParamSpec alpha;
  alpha.name = "alpha";
  alpha.type = ParamType::Float;
  alpha.default_value = 0.5;
  alpha.doc = "slowdown when every co-located worker is busy: service time x (1 + alpha x busy share)";
  alpha.min = 0.0;
  alpha.max = 100.0;
  ParamSpec key;
  key.name = "key";
  key.type = ParamType::String;
  key.default_value = std::string("machine");
  key.doc = "the worker knob naming the machine a worker runs on (same value: co-located)";
  registry.add(
      {"infaas_interference",
       "INFaaS co-location interference: a batch's service time grows by alpha x the busy share of "
       "the other workers on its machine (the worker knob `key`).",
       {alpha, key},
       [](const Params& p) { return std::make_shared<InterferenceModel>(p.get_float("alpha"), p.get_string("key")); }});
}

}  // namespace servelab::infaas
