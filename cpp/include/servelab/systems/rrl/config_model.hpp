// RRL's parallelism performance model as a config model (cluster/config_model.hpp): in the
// simulator, a worker's "inter_op_threads" and "intra_op_threads" knobs (set by a policy with
// Actions::set_config) and the number of workers of its hardware running at the same time (request
// parallelism) scale the profile's service time by
//   CpuModel::service_ms(inter, intra, busy) / CpuModel::service_ms(reference_inter, reference_intra, 1)
// so a batch run at the reference configuration, alone, takes exactly the profiled time.
#pragma once

#include <cstdint>
#include <string>

#include "servelab/cluster/config_model.hpp"
#include "servelab/systems/rrl/perf_model.hpp"

namespace servelab::rrl {

struct CpuConfigModelOptions {
  CpuModel cpu;
  std::string intra_key = "intra_op_threads";
  std::string inter_key = "inter_op_threads";
  std::int64_t reference_intra = 1;  // the configuration the profile was measured at
  std::int64_t reference_inter = 1;
  bool request_parallelism = true;  // false: every request runs as if alone
};

class CpuConfigModel final : public cluster::ConfigModel {
 public:
  // ValueError naming the field for invalid options (CpuModel::validate, reference threads >= 1).
  explicit CpuConfigModel(CpuConfigModelOptions options);
  double scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
               std::int64_t items) const override;
  std::string describe() const override;
  const CpuConfigModelOptions& options() const { return options_; }

 private:
  std::int64_t knob(const sched::ClusterView& view, sched::WorkerId worker, const std::string& key,
                    std::int64_t fallback) const;
  CpuConfigModelOptions options_;
  double reference_ms_;
};

// Adds "rrl_cpu" (typed parameters: the CpuModel's fields, the knob names, the reference);
// register.cpp calls it.
void register_cpu_config_model(cluster::ConfigModelRegistry& registry);

}  // namespace servelab::rrl
