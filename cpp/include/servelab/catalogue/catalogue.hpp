// The catalogue: every registry of named parts, each built once on first use and read-only
// thereafter (see servelab/core/registry.hpp). Code that builds a part from a name goes through
// here, so a policy of any system, or one registered from Python, is found the same way.
//
// The scheduler registry lives here, above every area, because it lists the generic policies
// (sched) and each system's (systems/<paper>), which depend on sched.
#pragma once

#include "servelab/cluster/config_model.hpp"
#include "servelab/cluster/interference.hpp"
#include "servelab/cluster/loop_model.hpp"
#include "servelab/core/registry.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/solvers/search/search.hpp"
#include "servelab/workload/arrival_registry.hpp"
#include "servelab/workload/size_registry.hpp"

namespace servelab::catalogue {

// Generic policies, then Kairos's and RAMSIS's (and their baselines). Python policies join it as
// extensions (Registry::extend).
const sched::SchedulerRegistry& schedulers();
inline const Registry<workload::ArrivalProcess>& arrival_processes() { return workload::arrival_registry(); }
inline const Registry<workload::SizeDistribution>& size_distributions() { return workload::size_registry(); }
inline const Registry<solvers::search::Searcher>& search_methods() { return solvers::search::searcher_registry(); }
// Config models (cluster/config_model.hpp): how set_config knobs scale simulated service times;
// RRL's parallelism performance model.
const cluster::ConfigModelRegistry& config_models();
// Loop models (cluster/loop_model.hpp): the serving loop's own delays, for the simulator.
const cluster::LoopModelRegistry& loop_models();
// Interference models (cluster/interference.hpp): co-located instances slowing each other down.
const cluster::InterferenceModelRegistry& interference_models();

}  // namespace servelab::catalogue
