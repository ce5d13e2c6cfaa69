#include "servelab/systems/kairos/cluster_roles.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"

namespace servelab::kairos {

using sched::HardwareId;

ClusterRoles find_roles(const sched::ClusterView& view, std::string_view base_name) {
  ClusterRoles roles;
  const HardwareId named = base_name.empty() ? -1 : view.profile().hardware_index(base_name);

  std::vector<std::int64_t> holders(view.profile().models().size(), 0);
  for (WorkerId w = 0; w < view.num_workers(); ++w) {
    if (!sched::is_live(view, w)) continue;
    for (const ModelId m : view.models(w)) ++holders[m];
  }
  const auto most = std::max_element(holders.begin(), holders.end());
  if (most == holders.end() || *most == 0) {
    roles.base = named;
    return roles;
  }
  roles.model = static_cast<ModelId>(most - holders.begin());

  roles.largest = std::numeric_limits<std::int64_t>::max();
  for (WorkerId w = 0; w < view.num_workers(); ++w) {
    if (sched::is_live(view, w) && view.has_model(w, roles.model)) {
      roles.largest = std::min(roles.largest, view.max_batch(w, roles.model));
    }
  }
  if (named >= 0) {
    roles.base = named;
    return roles;
  }
  Nanos best = sched::kNever;
  for (WorkerId w = 0; w < view.num_workers(); ++w) {
    if (!sched::is_live(view, w) || !view.has_model(w, roles.model) || roles.largest < 1) continue;
    const Nanos latency = view.predicted_latency(w, roles.model, roles.largest);
    const HardwareId hw = view.hardware(w);
    if (latency < best || (latency == best && hw < roles.base)) best = latency, roles.base = hw;
  }
  return roles;
}

ParamSpec base_type_param() {
  return ParamSpec{"base",
                   ParamType::String,
                   std::string(),
                   "base instance type (empty: the fastest type on the largest query)",
                   {},
                   {},
                   false,
                   {}};
}

ParamSpec qos_ms_param(std::string doc) { return ParamSpec::non_negative("qos_ms", 0.0, std::move(doc)); }

Nanos qos_target(double qos_ms, const sched::Query& query) {
  return qos_ms > 0 ? millis_to_nanos(qos_ms, "qos_ms") : query.deadline - query.arrival;
}

double qos_target_ms(double qos_ms, const sched::Query& query) {
  return qos_ms > 0 ? qos_ms : nanos_to_millis(query.deadline - query.arrival);
}

bool any_live_worker_serves(const ClusterView& view, const sched::Query& query) {
  for (WorkerId w = 0; w < view.num_workers(); ++w) {
    if (sched::is_live(view, w) && sched::pick_model(view, w, query) >= 0) return true;
  }
  return false;
}

}  // namespace servelab::kairos
