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

struct ModelSwitchingSearch {
  std::shared_ptr<const profile::Profile> profile;
  std::string hardware;             // the workers' hardware type
  std::vector<std::string> models;  // candidates (empty: every model with a latency on `hardware`)
  std::int32_t workers = 1;
  Nanos slo = 0;
  std::vector<double> loads_qps;           // ascending
  Nanos duration = 300 * kNanosPerSecond;  // of each simulation at a constant Poisson load
  double target_violation = 0.01;          // a model qualifies with a violation rate strictly below it
  std::uint64_t seed = 0;                  // every (load, model) run uses it: common random numbers
  // Runs per (load, model), with seeds seed, seed + 1, ...; the violation rate pools them. More
  // than one steadies the choice where a model runs close to its capacity (one run is luck).
  std::int32_t replications = 1;
  // Decision latency and the fixed simulated service time (the artifact uses the p95 for both).
  profile::Statistic statistic = profile::Statistic::P95;
  std::int32_t threads = 1;  // loads are searched in parallel; the result does not depend on it
};

struct ModelSwitchingResult {
  ModelSwitchingTable table;
  std::vector<std::string> candidates;  // the models searched, in candidate order
  // [load][candidate]: the simulated violation rate (late served queries / served queries); 1 for a
  // model whose throughput cannot sustain the load at all (not simulated: its queue grows without
  // bound); NaN where not needed (a more accurate model already qualified).
  std::vector<std::vector<double>> violation;
  std::vector<std::vector<std::uint8_t>> simulated;  // [load][candidate]: 1 where a simulation ran
};

// Models are tried from the most accurate down; the first that qualifies is the load's choice. When
// none does, the fastest model (at batch 1). Calls check_interrupt().
ModelSwitchingResult generate_model_switching_table(const ModelSwitchingSearch& search);

// Registers "model_switching" (table given as loads + comma-separated model names).
void register_model_switching(sched::SchedulerRegistry& registry);

}  // namespace servelab::ramsis
