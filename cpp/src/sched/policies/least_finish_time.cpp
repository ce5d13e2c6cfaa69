// Least predicted finish time: each query joins the worker on which it is predicted to finish
// first, counting the batch the worker is running (busy_until), the predicted latency of what is
// already queued there, and its own latency on that worker's hardware. Heterogeneity-aware: a
// fast GPU with a short queue beats an idle slow CPU when it would finish sooner.
//
// Indexed: workers with the same hardware and models form a class (same model choice, same
// latency); each class keeps its busy workers in a heap keyed by busy_until + backlog and its
// idle ones keyed by backlog (their finish moves with now; an idle worker has nothing queued but
// for a moment, so that index is a bitset of those with no backlog before a heap of the rest).
// A query looks at the tops of each class that can serve it: O(classes + log W), the same choice
// as a scan (ties: lowest id).
#include <limits>
#include <memory>
#include <vector>

#include "per_worker_queue.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/sched/worker_classes.hpp"
#include "servelab/sched/worker_heap.hpp"
#include "servelab/sched/zero_first_heap.hpp"

namespace servelab::sched {
namespace {

class LeastFinishTime final : public PerWorkerQueue {
 public:
  std::string describe() const override { return "least_finish_time"; }

 protected:
  WorkerId choose(const Query& query, const ClusterView& view) override {
    sync(view);
    WorkerId best = -1;
    Nanos best_finish = kNever;
    const auto consider = [&](Nanos finish, WorkerId w) {
      if (finish < best_finish || (finish == best_finish && w < best)) best = w, best_finish = finish;
    };
    for (std::int32_t c = 0; c < classes_.size(); ++c) {
      if (idle_[c].empty() && busy_[c].empty()) continue;
      const WorkerId rep = classes_.representative(c);
      const ModelId m = pick_model(view, rep, query);
      if (m < 0) continue;
      const Nanos own = view.predicted_latency(rep, m, query.size);
      if (!idle_[c].empty()) {
        const auto [backlog, w] = idle_[c].top();
        consider(view.now() + backlog + own, w);
      }
      if (!busy_[c].empty()) {
        const auto [until, w] = busy_[c].top();
        consider(until + own, w);
      }
    }
    return best;
  }
  // backlog_[w]: predicted work waiting in w's queue, kept in step with the queue.
  void queued(WorkerId w, const Query& query, const ClusterView& view) override {
    backlog_[w] += latency(w, query, view);
  }
  // Every worker of a class picks the same model: ask the class's representative.
  ModelId model_for(WorkerId w, const Query& query, const ClusterView& view) override {
    sync(view);
    return pick_model(view, classes_.representative(classes_.of(w)), query);
  }
  void started(WorkerId w, const Query& query, const ClusterView& view) override {
    if (view.worker_queue_length(w) == 0 || view.worker_queue(w).front() != query.id) return;  // never queued
    backlog_[w] -= latency(w, query, view);
  }
  void touched(WorkerId w, const ClusterView& view) override {
    if (w >= known_) return sync(view);  // a worker added since the last query: index it (and the rest)
    const auto c = classes_.of(w);
    // Re-keyed in place when it stays on its side (the top of a heap is the same whichever way
    // it got there: the order (key, id) is total).
    const WorkerStatus status = view.status(w);
    if (status == WorkerStatus::Stopped) {
      idle_[c].erase(w);
      busy_[c].erase(w);
    } else if (status == WorkerStatus::Idle) {
      busy_[c].erase(w);
      idle_[c].set(w, backlog_[w]);
    } else {
      idle_[c].erase(w);
      busy_[c].set(w, view.busy_until(w) + backlog_[w]);
    }
  }

 private:
  Nanos latency(WorkerId w, const Query& query, const ClusterView& view) {
    return view.predicted_latency(w, model_for(w, query, view), query.size);
  }
  // Indexes workers it has not seen yet (all of them on the first query).
  void sync(const ClusterView& view) {
    if (known_ == view.num_workers()) return;
    const WorkerId first = classes_.update(view);
    backlog_.resize(view.num_workers(), 0);
    idle_.resize(static_cast<std::size_t>(classes_.size()));
    busy_.resize(static_cast<std::size_t>(classes_.size()));
    known_ = view.num_workers();
    for (WorkerId w = first; w < known_; ++w) touched(w, view);
  }

  std::vector<Nanos> backlog_;
  WorkerClasses classes_;
  std::vector<ZeroFirstWorkerHeap> idle_;  // by class: idle workers by backlog (nearly always none)
  std::vector<WorkerHeap> busy_;           // by class: the others by busy_until + backlog
  WorkerId known_ = 0;
};

}  // namespace

void register_least_finish_time(SchedulerRegistry& registry) {
  registry.add({"least_finish_time",
                "Each query joins the worker where it is predicted to finish first (current batch + queued work + "
                "its own latency on that hardware, by the profile's decision statistic).",
                {},
                [](const Params&) { return std::make_shared<LeastFinishTime>(); }});
}

}  // namespace servelab::sched
