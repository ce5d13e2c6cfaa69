#include "servelab/systems/ramsis/register.hpp"

namespace servelab::ramsis {
// Each scheduler file adds a register_<name>(registry) call here.
void register_schedulers(sched::SchedulerRegistry& registry) {}
}  // namespace servelab::ramsis
