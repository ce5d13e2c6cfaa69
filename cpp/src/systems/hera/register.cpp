#include "servelab/systems/hera/register.hpp"

#include "servelab/systems/hera/interference.hpp"
#include "servelab/systems/hera/rmu_scheduler.hpp"

namespace servelab::hera {
// Each file that defines a registered policy or model adds its register_<name>(registry) call here.
void register_schedulers(sched::SchedulerRegistry& registry) { register_rmu_schedulers(registry); }

void register_interference_models(cluster::InterferenceModelRegistry& registry) { register_contention_model(registry); }
}  // namespace servelab::hera
