// Which instances of a cluster are the "base" and which are "auxiliary" (Kairos, HPDC'23, Sec. 4):
// the base type is the one that serves the largest queries fastest (the GPU in the paper), every
// other type is auxiliary. Kairos's distributor and the baselines it is compared with (Ribbon,
// DRS, the oracle) all start from this split.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "servelab/core/params.hpp"
#include "servelab/core/time.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::kairos {

// The scheduling names the distributor and the baselines all work with.
using sched::ClusterView;
using sched::ModelId;
using sched::QueryId;
using sched::WorkerId;

struct ClusterRoles {
  // The model the roles are judged on: the one loaded on the most live workers (ties: lowest id).
  sched::ModelId model = -1;
  // The largest query size every live worker holding `model` covers: Kairos's "largest query"
  // (1000 items in the paper), at which the heterogeneity coefficients are measured.
  std::int64_t largest = 0;
  // The base hardware: `base_name` when given (KeyError when the profile does not know it, even
  // if no worker has it), otherwise the present hardware with the lowest decision latency at
  // `largest` (ties: lowest hardware id). -1 when no live worker holds a model.
  sched::HardwareId base = -1;
};

// The roles of the live workers now (stopped ones are ignored).
ClusterRoles find_roles(const sched::ClusterView& view, std::string_view base_name);

// The `base` parameter of every distributor that splits base and auxiliary instances.
ParamSpec base_type_param();
// The `qos_ms` parameter: 0 (the default) means each query's own deadline - arrival.
ParamSpec qos_ms_param(std::string doc = "QoS target, ms (0: each query's deadline - arrival)");

// A query's QoS target: `qos_ms` when > 0, else its own deadline - arrival; in ns, or in ms.
Nanos qos_target(double qos_ms, const sched::Query& query);
double qos_target_ms(double qos_ms, const sched::Query& query);

// Whether some live worker can serve `query` at all (a model for it, its size within range).
bool any_live_worker_serves(const ClusterView& view, const sched::Query& query);

}  // namespace servelab::kairos
