#include "servelab/systems/ramsis/register.hpp"

#include "servelab/systems/ramsis/jellyfish.hpp"
#include "servelab/systems/ramsis/model_switching.hpp"
#include "servelab/systems/ramsis/scheduler.hpp"

namespace servelab::ramsis {
// Each scheduler file adds a register_<name>(registry) call here.
void register_schedulers(sched::SchedulerRegistry& registry) {
  register_ramsis(registry);
  register_jellyfish(registry);
  register_model_switching(registry);
}
}  // namespace servelab::ramsis
