// ModelSwitching (Zhang et al., the RAMSIS paper's second baseline): for each load, the most
// accurate single model whose simulated response latency meets the SLO for all but a target fraction
// of queries (p99 within the SLO for a 1% target). The choice table is generated offline by
// simulating each model at each load of a grid on the in-order central queue it is then served
// with; online, the scheduler switches to the model of the load the monitor estimates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/profile/profile.hpp"
#include "servelab/sched/scheduler.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/ramsis/jellyfish.hpp"

namespace servelab::ramsis {

// loads_qps[i] -> models[i]: ascending loads, one model name each.
struct ModelSwitchingTable {
  std::vector<double> loads_qps;
  std::vector<std::string> models;
  void validate() const;  // ValueError naming the field and index
};

// The batch cap is the artifact's adaptive batching at the table load (adaptive_batch_rule without
// headroom; its batch, whichever model it picks), limited to what the profile covers for the chosen
// model. A worker without the chosen model serves with its fastest one. options.loads_qps is
// replaced by the table's loads.
std::shared_ptr<sched::Scheduler> make_model_switching(ModelSwitchingTable table, LoadGranularOptions options);

// Registers "model_switching" (table given as loads + comma-separated model names).
void register_model_switching(sched::SchedulerRegistry& registry);

}  // namespace servelab::ramsis
