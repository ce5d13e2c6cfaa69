#include "servelab/systems/kairos/register.hpp"

namespace servelab::kairos {
// Each scheduler file adds a register_<name>(registry) call here.
void register_schedulers(sched::SchedulerRegistry& registry) {}
}  // namespace servelab::kairos
