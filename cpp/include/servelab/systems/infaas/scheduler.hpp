// INFaaS's registered policies: `infaas` (per-query getVariant + model autoscaling) and the
// Clipper+ baseline (fixed pre-loaded variants). See infaas_scheduler.cpp for what each does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/sched/scheduler.hpp"

namespace servelab::infaas {
// The VM-Autoscaler's settings (Sec. 4.2.3, 5); max_workers = 0 turns it off.
struct VmScaling {
  std::int64_t max_workers = 0;
  double startup_s = 20.0;  // "the time to instantiate VMs (20-30 seconds)"
  double poll_s = 2.0;      // the controller's polling period
  double threshold = 0.8;   // utilisation and overloaded-worker share
  double idle_s = 60.0;     // a started worker idle this long is stopped (our choice)
};

// models: the registered models queries may be served by (empty: every model of the profile).
std::shared_ptr<sched::Scheduler> make_infaas_scheduler(std::vector<std::string> models = {}, VmScaling vm = {});
std::shared_ptr<sched::Scheduler> make_clipper_plus();
// SM+: one fixed variant scaled horizontally (replicas, then new workers of its hardware).
std::shared_ptr<sched::Scheduler> make_sm_plus(double startup_s = 20.0, double idle_s = 60.0,
                                               std::int64_t max_workers = 16);
}  // namespace servelab::infaas
