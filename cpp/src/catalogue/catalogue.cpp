#include "servelab/catalogue/catalogue.hpp"

#include "servelab/systems/hera/register.hpp"
#include "servelab/systems/infaas/interference.hpp"
#include "servelab/systems/infaas/register.hpp"
#include "servelab/systems/kairos/register.hpp"
#include "servelab/systems/ramsis/register.hpp"
#include "servelab/systems/rrl/register.hpp"

namespace servelab::catalogue {

const sched::SchedulerRegistry& schedulers() {
  static const sched::SchedulerRegistry registry = [] {  // thread-safe initialisation
    sched::SchedulerRegistry r("scheduler");
    sched::register_generic_schedulers(r);
    kairos::register_schedulers(r);
    ramsis::register_schedulers(r);
    hera::register_schedulers(r);
    infaas::register_schedulers(r);
    return std::move(r).freeze();
  }();
  return registry;
}

const cluster::ConfigModelRegistry& config_models() {
  static const cluster::ConfigModelRegistry registry = [] {  // thread-safe initialisation
    cluster::ConfigModelRegistry r("config model");
    rrl::register_config_models(r);
    infaas::register_config_models(r);
    return std::move(r).freeze();
  }();
  return registry;
}

const cluster::LoopModelRegistry& loop_models() {
  static const cluster::LoopModelRegistry registry = [] {  // thread-safe initialisation
    cluster::LoopModelRegistry r("loop model");
    cluster::register_loop_models(r);
    return std::move(r).freeze();
  }();
  return registry;
}

const cluster::InterferenceModelRegistry& interference_models() {
  static const cluster::InterferenceModelRegistry registry = [] {  // thread-safe initialisation
    cluster::InterferenceModelRegistry r("interference model");
    cluster::register_interference_models(r);
    infaas::register_interference_models(r);
    hera::register_interference_models(r);
    return std::move(r).freeze();
  }();
  return registry;
}

}  // namespace servelab::catalogue
