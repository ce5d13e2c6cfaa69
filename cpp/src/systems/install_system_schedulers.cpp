#include "servelab/systems/install_system_schedulers.hpp"

#include <mutex>

#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/kairos/register.hpp"
#include "servelab/systems/ramsis/register.hpp"

namespace servelab::systems {

void install_system_schedulers() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& registry = sched::scheduler_registry();
    kairos::register_schedulers(registry);
    ramsis::register_schedulers(registry);
  });
}

}  // namespace servelab::systems
