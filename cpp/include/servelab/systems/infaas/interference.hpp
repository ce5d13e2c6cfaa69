// Interference between co-located variants in the simulator (INFaaS Sec. 4.1's Interfered state,
// Sec. 6.3.1), as a config model: workers that share a machine (the same value of the worker knob
// `key`, set in the scenario's worker config, e.g. {"machine": 0}) slow each other down. A batch
// starting on worker w takes
//     service time x (1 + alpha x u),
// u = the share of w's co-located workers (same machine, w excluded) that are busy at that moment:
// the other variants' load on the machine. Workers without the knob (or with a negative value)
// never interfere. alpha is an assumption unless fitted to co-located executors (docs/infaas.md).
#pragma once

#include <string>

#include "servelab/cluster/config_model.hpp"

namespace servelab::infaas {

class InterferenceModel final : public cluster::ConfigModel {
 public:
  InterferenceModel(double alpha, std::string key);  // ValueError naming a bad alpha or key
  double scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
               std::int64_t items) const override;
  std::string describe() const override;

 private:
  double alpha_;
  std::string key_;
};

// Adds "infaas_interference(alpha=..., key='machine')" to the config-model registry.
void register_config_models(cluster::ConfigModelRegistry& registry);

}  // namespace servelab::infaas
