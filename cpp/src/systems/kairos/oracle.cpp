// ORCL's serving rule (Kairos, HPDC'23, Sec. 7) run online. ORCL itself knows every query in
// advance: it sorts them by size, an available base instance serves the largest remaining query
// and an auxiliary instance the smallest, no query waits and none runs where it would miss QoS
// (servelab.kairos.oracle_throughput computes that offline bound). Online, queries arrive over
// time and wait in the central queue; whenever an instance is idle:
//   - a base instance takes the largest pending query it can serve (ties: the oldest);
//   - an auxiliary instance takes the smallest pending query it can serve within the query's QoS
//     target (waiting included, by the profile's decision latency; ties: the oldest), or, when no
//     base instance could ever serve it, the smallest it can serve at all.
// Idle base instances choose first, then auxiliary ones, each in worker-id order.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/kairos/baselines.hpp"
#include "servelab/systems/kairos/cluster_roles.hpp"

namespace servelab::kairos {
namespace {

class Oracle final : public sched::Scheduler {
 public:
  Oracle(std::string base, double qos_ms, std::string description)
      : base_(std::move(base)), qos_ms_(qos_ms), description_(std::move(description)) {}

  std::string describe() const override { return description_; }

  void on_start(const ClusterView& view, sched::Actions&) override { refresh(view); }

  void on_arrival(const sched::Query& query, const ClusterView& view, sched::Actions& actions) override {
    refresh(view);
    if (!any_live_worker_serves(view, query)) {
      actions.drop(query.id, "no worker can serve it");
      return;
    }
    actions.enqueue(query.id);
    pending_.insert({query.size, query.id});
    step(view, actions);
  }
  void on_batch_done(const sched::BatchDone&, const ClusterView& view, sched::Actions& actions) override {
    refresh(view);
    step(view, actions);
  }
  void on_worker_ready(WorkerId, const ClusterView& view, sched::Actions& actions) override {
    refresh(view);
    step(view, actions);
  }

 private:
  void refresh(const ClusterView& view) {
    if (view.num_workers() == known_) return;
    known_ = view.num_workers();
    roles_ = find_roles(view, base_);
  }

  bool is_base(WorkerId w, const ClusterView& view) const { return view.hardware(w) == roles_.base; }

  bool base_can_serve(const sched::Query& query, const ClusterView& view) const {
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (sched::is_live(view, w) && is_base(w, view) && sched::pick_model(view, w, query) >= 0) return true;
    }
    return false;
  }

  void step(const ClusterView& view, sched::Actions& actions) {
    if (pending_.empty() || view.idle_workers().empty()) return;
    idle_.assign(view.idle_workers().begin(), view.idle_workers().end());
    // Base instances first, then auxiliary ones, each by id.
    std::sort(idle_.begin(), idle_.end(), [&](WorkerId a, WorkerId b) {
      const bool ba = is_base(a, view), bb = is_base(b, view);
      return ba != bb ? ba : a < b;
    });
    for (const WorkerId w : idle_) {
      if (pending_.empty()) return;
      if (is_base(w, view)) {
        take_largest(w, view, actions);
      } else {
        take_smallest(w, view, actions);
      }
    }
  }

  void take_largest(WorkerId w, const ClusterView& view, sched::Actions& actions) {
    // Largest size first; within a size the oldest (smallest id): walk sizes down, ids up.
    auto it = pending_.end();
    while (it != pending_.begin()) {
      --it;
      const std::int32_t size = it->first;
      auto first = pending_.lower_bound({size, 0});
      const sched::Query q = view.query(first->second);
      if (sched::pick_model(view, w, q) >= 0) {
        dispatch(w, first, view, actions);
        return;
      }
      it = first;  // every query of this size is too large for w as well
    }
  }

  void take_smallest(WorkerId w, const ClusterView& view, sched::Actions& actions) {
    const Nanos now = view.now();
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      const sched::Query q = view.query(it->second);
      const ModelId m = sched::pick_model(view, w, q);
      if (m < 0) continue;
      const Nanos latency = view.predicted_latency(w, m, q.size);
      const Nanos qos = qos_target(qos_ms_, q);
      if (now + latency - q.arrival <= qos || !base_can_serve(q, view)) {
        dispatch(w, it, view, actions);
        return;
      }
      // Larger queries take longer still: stop at the first whose service alone misses QoS.
      if (latency > qos) return;
    }
  }

  void dispatch(WorkerId w, std::set<std::pair<std::int32_t, QueryId>>::iterator it, const ClusterView& view,
                sched::Actions& actions) {
    const QueryId id = it->second;
    const sched::Query q = view.query(id);
    pending_.erase(it);
    actions.dispatch(w, sched::pick_model(view, w, q), {&id, 1});
  }

  std::string base_;
  double qos_ms_;
  std::string description_;
  WorkerId known_ = -1;
  ClusterRoles roles_;
  std::set<std::pair<std::int32_t, QueryId>> pending_;  // (size, id)
  std::vector<WorkerId> idle_;
};

}  // namespace

void register_oracle(sched::SchedulerRegistry& registry) {
  registry.add(
      {"oracle",
       "ORCL's rule (Kairos, Sec. 7) online: an idle base instance takes the largest pending query, an idle "
       "auxiliary instance the smallest it serves within QoS (the offline bound: servelab.kairos.oracle_throughput).",
       {base_type_param(), qos_ms_param()},
       [](const Params& p) {
         return std::make_shared<Oracle>(p.get_string("base"), p.get_float("qos_ms"), p.describe());
       }});
}

}  // namespace servelab::kairos
