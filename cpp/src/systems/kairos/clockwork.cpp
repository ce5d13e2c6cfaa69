// CLKWRK: the central controller of Clockwork (OSDI'20) as Kairos compares with it (Sec. 7).
// Every instance has its own FCFS queue. The controller tracks when each instance will be free
// (its running batch by busy_until, plus the predicted latency of everything queued there) and
// sends each arriving query to the queue where it is predicted to finish first among those where
// it meets its QoS target (ties: lowest worker id). Kairos describes CLKWRK as guaranteeing QoS
// "unless none of the instances can meet the QoS target": such a query still joins the queue
// where it finishes first. With reject_late=True it is rejected instead (dropped, "would miss its
// QoS on every worker"), as Clockwork itself rejects requests it cannot serve in time.
// Predictions use the profile's decision statistic.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/kairos/baselines.hpp"
#include "servelab/systems/kairos/cluster_roles.hpp"

namespace servelab::kairos {
namespace {

class Clockwork final : public sched::Scheduler {
 public:
  Clockwork(double qos_ms, bool reject_late, std::string description)
      : qos_ms_(qos_ms), reject_late_(reject_late), description_(std::move(description)) {}

  std::string describe() const override { return description_; }

  void on_arrival(const sched::Query& query, const ClusterView& view, sched::Actions& actions) override {
    backlog_.resize(view.num_workers(), 0);
    const Nanos target = query.arrival + qos_target(qos_ms_, query);
    WorkerId best = -1, best_late = -1;
    Nanos best_finish = sched::kNever, best_late_finish = sched::kNever;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!sched::is_live(view, w)) continue;
      const ModelId m = sched::pick_model(view, w, query);
      if (m < 0) continue;
      const Nanos finish = free_at(w, view) + view.predicted_latency(w, m, query.size);
      if (finish <= target && finish < best_finish) best = w, best_finish = finish;
      if (finish < best_late_finish) best_late = w, best_late_finish = finish;
    }
    if (best_late < 0) {
      actions.drop(query.id, "no worker can serve it");
      return;
    }
    if (best < 0) {
      if (reject_late_) {
        actions.drop(query.id, "would miss its QoS on every worker");
        return;
      }
      best = best_late;
    }
    if (view.is_idle(best) && view.worker_queue(best).empty()) {
      start(best, query, view, actions);
    } else {
      actions.enqueue_to_worker(best, query.id);
      backlog_[best] += latency(best, query, view);
    }
  }

  void on_batch_done(const sched::BatchDone& done, const ClusterView& view, sched::Actions& actions) override {
    serve_next(done.worker, view, actions);
  }
  void on_worker_ready(WorkerId worker, const ClusterView& view, sched::Actions& actions) override {
    serve_next(worker, view, actions);
  }

 private:
  // When the worker can start something new: the end of its running batch (never in the past:
  // an overrunning batch is still running), plus everything queued there.
  Nanos free_at(WorkerId w, const ClusterView& view) const {
    return std::max(view.now(), view.busy_until(w)) + backlog_[w];
  }
  static Nanos latency(WorkerId w, const sched::Query& query, const ClusterView& view) {
    return view.predicted_latency(w, sched::pick_model(view, w, query), query.size);
  }
  void serve_next(WorkerId w, const ClusterView& view, sched::Actions& actions) {
    backlog_.resize(view.num_workers(), 0);
    if (!view.is_idle(w) || view.worker_queue(w).empty()) return;
    const sched::Query query = view.query(view.worker_queue(w).front());
    backlog_[w] -= latency(w, query, view);
    start(w, query, view, actions);
  }
  static void start(WorkerId w, const sched::Query& query, const ClusterView& view, sched::Actions& actions) {
    const QueryId id = query.id;
    actions.dispatch(w, sched::pick_model(view, w, query), {&id, 1});
  }

  double qos_ms_;
  bool reject_late_;
  std::string description_;
  std::vector<Nanos> backlog_;  // predicted work waiting in each worker's queue
};

}  // namespace

void register_clockwork(sched::SchedulerRegistry& registry) {
  registry.add(
      {"clockwork",
       "CLKWRK (Clockwork's controller, OSDI'20) as compared in Kairos: per-instance FCFS queues; each query joins "
       "the queue where it is predicted to finish first among those meeting its QoS.",
       {qos_ms_param(),
        ParamSpec{"reject_late",
                  ParamType::Bool,
                  false,
                  "drop a query that would miss QoS everywhere (Clockwork's admission control) instead of queueing "
                  "it where it finishes first",
                  {},
                  {},
                  false,
                  {}}},
       [](const Params& p) {
         return std::make_shared<Clockwork>(p.get_float("qos_ms"), p.get_bool("reject_late"), p.describe());
       }});
}

}  // namespace servelab::kairos
