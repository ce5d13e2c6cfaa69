#include "servelab/systems/kairos/register.hpp"

#include "servelab/systems/kairos/baselines.hpp"
#include "servelab/systems/kairos/distributor.hpp"

namespace servelab::kairos {
// Each scheduler file adds a register_<name>(registry) call here.
void register_schedulers(sched::SchedulerRegistry& registry) {
  register_kairos(registry);
  register_ribbon(registry);
  register_drs(registry);
  register_clockwork(registry);
  register_oracle(registry);
}
}  // namespace servelab::kairos
