// CLKWRK: the central controller of Clockwork (OSDI'20) as Kairos compares with it (Sec. 7).
// Every instance has its own FCFS queue. The controller tracks when each instance will be free
// (its running batch by busy_until, plus the predicted latency of everything queued there) and
// sends each arriving query to the queue where it is predicted to finish first among those where
// it meets its QoS target (ties: lowest worker id). Kairos describes CLKWRK as guaranteeing QoS
// "unless none of the instances can meet the QoS target": such a query still joins the queue
// where it finishes first. With reject_late=True it is rejected instead (dropped, "would miss its
// QoS on every worker"), as Clockwork itself rejects requests it cannot serve in time.
// Predictions use the profile's decision statistic.
//
// The best worker meeting QoS, when there is one, is the one finishing first overall, so one
// argmin decides. It is indexed: workers with the same hardware and models form a class (same
// model, same latency); each class keeps its workers free by now keyed by backlog (a bitset of
// those with none before a heap of the rest), and those still busy in a heap keyed by
// busy_until + backlog. A busy worker whose batch is due moves to the free ones when it reaches
// the top of the busy heap: one lower in that heap can never win (it would finish at now +
// backlog >= its key >= the top's, ties going to the top's lower id). A query looks at the tops
// of each class: O(classes + log W), the same choice as a scan of every worker.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/sched/worker_classes.hpp"
#include "servelab/sched/worker_heap.hpp"
#include "servelab/sched/zero_first_heap.hpp"
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
    sync(view);
    const Nanos target = query.arrival + qos_target(qos_ms_, query);
    const Nanos now = view.now();
    WorkerId best = -1;
    Nanos best_finish = sched::kNever;
    const auto consider = [&](Nanos finish, WorkerId w) {
      if (finish < best_finish || (finish == best_finish && w < best)) best = w, best_finish = finish;
    };
    for (std::int32_t c = 0; c < classes_.size(); ++c) {
      if (free_[c].empty() && busy_[c].empty()) continue;
      const WorkerId rep = classes_.representative(c);
      const ModelId m = sched::pick_model(view, rep, query);
      if (m < 0) continue;
      const Nanos own = view.predicted_latency(rep, m, query.size);
      while (!busy_[c].empty()) {  // the top's batch is due: free from now on
        const auto [key, w] = busy_[c].top();
        if (key - backlog_[w] > now) break;  // key = busy_until + backlog
        busy_[c].erase(w);
        free_[c].set(w, backlog_[w]);
      }
      if (!free_[c].empty()) consider(now + free_[c].top().first + own, free_[c].top().second);
      if (!busy_[c].empty()) consider(busy_[c].top().first + own, busy_[c].top().second);
    }
    if (best < 0) {
      actions.drop(query.id, "no worker can serve it");
      return;
    }
    if (best_finish > target && reject_late_) {  // the first to finish is late: every worker is
      actions.drop(query.id, "would miss its QoS on every worker");
      return;
    }
    if (view.is_idle(best) && view.worker_queue_length(best) == 0) {
      start(best, query, view, actions);
    } else {
      actions.enqueue_to_worker(best, query.id);
      backlog_[best] += latency(best, query, view);
    }
    touched(best, view);
  }

  void on_batch_done(const sched::BatchDone& done, const ClusterView& view, sched::Actions& actions) override {
    serve_next(done.worker, view, actions);
  }
  void on_worker_ready(WorkerId worker, const ClusterView& view, sched::Actions& actions) override {
    serve_next(worker, view, actions);
  }

 private:
  // Re-keys the worker after its queue, batch or status changed. It can start something new at
  // max(now, busy_until) (an overrunning batch is still running) plus everything queued there.
  // Re-keyed in place when it stays on its side (a heap's top is the same whichever way it got
  // there: the order (key, id) is total), so only a side change erases.
  void touched(WorkerId w, const ClusterView& view) {
    if (w >= known_) return sync(view);
    const auto c = classes_.of(w);
    if (!sched::is_live(view, w)) {
      free_[c].erase(w);
      busy_[c].erase(w);
      return;
    }
    const Nanos until = view.busy_until(w);
    if (until > view.now()) {
      free_[c].erase(w);
      busy_[c].set(w, until + backlog_[w]);
    } else {
      busy_[c].erase(w);
      free_[c].set(w, backlog_[w]);
    }
  }
  // Indexes workers it has not seen yet (all of them on the first query).
  void sync(const ClusterView& view) {
    if (known_ == view.num_workers()) return;
    const WorkerId first = classes_.update(view);
    backlog_.resize(view.num_workers(), 0);
    free_.resize(static_cast<std::size_t>(classes_.size()));
    busy_.resize(static_cast<std::size_t>(classes_.size()));
    known_ = view.num_workers();
    for (WorkerId w = first; w < known_; ++w) touched(w, view);
  }
  // Every worker of a class has the same model and latency: ask the class's representative
  // (reading the worker's own model list misses the caches with thousands of workers).
  ModelId model_for(WorkerId w, const sched::Query& query, const ClusterView& view) const {
    return sched::pick_model(view, classes_.representative(classes_.of(w)), query);
  }
  Nanos latency(WorkerId w, const sched::Query& query, const ClusterView& view) const {
    const WorkerId rep = classes_.representative(classes_.of(w));
    return view.predicted_latency(rep, sched::pick_model(view, rep, query), query.size);
  }
  void serve_next(WorkerId w, const ClusterView& view, sched::Actions& actions) {
    sync(view);
    if (view.is_idle(w) && view.worker_queue_length(w) > 0) {
      const sched::Query query = view.query(view.worker_queue(w).front());
      backlog_[w] -= latency(w, query, view);
      start(w, query, view, actions);
    }
    touched(w, view);
  }
  void start(WorkerId w, const sched::Query& query, const ClusterView& view, sched::Actions& actions) const {
    const QueryId id = query.id;
    actions.dispatch(w, model_for(w, query, view), {&id, 1});
  }

  double qos_ms_;
  bool reject_late_;
  std::string description_;
  std::vector<Nanos> backlog_;  // predicted work waiting in each worker's queue
  sched::WorkerClasses classes_;
  // By class: workers free by now (key backlog: nearly always none, since a free worker starts
  // what is queued for it at once), still busy (busy_until + backlog).
  std::vector<sched::ZeroFirstWorkerHeap> free_;
  std::vector<sched::WorkerHeap> busy_;
  WorkerId known_ = 0;
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
