// Join-shortest-queue: the reference scheduler of docs/adding-a-scheduler.md. It is deliberately
// small and fully annotated; copy it to start a new policy.
//
// The policy: each query joins the worker with the fewest outstanding queries (its own queue plus
// the one batch it may be running); ties go to the lowest worker id, so runs are deterministic.
// A worker serves its queue oldest first, one query per batch. All of that queue handling comes
// from PerWorkerQueue; this file only decides where a query goes.
//
// The decision is indexed, not a scan: workers with the same hardware and models form a class
// (they can serve the same queries), each class keeps its workers in a heap keyed by load, and a
// query looks at the top of each class that can serve it: O(classes + log W) per query.
#include <limits>
#include <memory>
#include <vector>

#include "per_worker_queue.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/sched/worker_classes.hpp"
#include "servelab/sched/worker_heap.hpp"

namespace servelab::sched {
namespace {

class JoinShortestQueue final : public PerWorkerQueue {
 public:
  // describe() names the policy and its parameters; results and the CLI print it.
  std::string describe() const override { return "jsq"; }

 protected:
  // Called for every arriving query. Reads the cluster only through the read-only view, so the
  // same code runs on virtual time in the simulator and on the wall clock in the server.
  WorkerId choose(const Query& query, const ClusterView& view) override {
    sync(view);
    WorkerId best = -1;
    std::int64_t best_load = std::numeric_limits<std::int64_t>::max();
    for (std::int32_t c = 0; c < classes_.size(); ++c) {
      // A class whose workers were all removed (autoscaling) has an empty heap; pick_model says
      // -1 when the class has no model for this query (accuracy floor, batch beyond the profile).
      if (heaps_[c].empty() || pick_model(view, classes_.representative(c), query) < 0) continue;
      const auto [load, w] = heaps_[c].top();
      if (load < best_load || (load == best_load && w < best)) best = w, best_load = load;  // lowest id wins ties
    }
    return best;  // -1: nobody can serve it, PerWorkerQueue drops it with a reason
  }

  // Every worker of a class picks the same model: ask the class's representative.
  ModelId model_for(WorkerId w, const Query& query, const ClusterView& view) override {
    sync(view);
    return pick_model(view, classes_.representative(classes_.of(w)), query);
  }

  // Keeps the worker's heap entry equal to its load: its queue plus the batch it may be running.
  void touched(WorkerId w, const ClusterView& view) override {
    if (w >= known_) return sync(view);  // a worker added since the last query: index it (and the rest)
    auto& heap = heaps_[classes_.of(w)];
    if (!is_live(view, w)) {
      heap.erase(w);
    } else {
      heap.set(w, view.worker_queue_length(w) + (view.is_idle(w) ? 0 : 1));
    }
  }

 private:
  // Indexes workers it has not seen yet (all of them on the first query).
  void sync(const ClusterView& view) {
    if (known_ == view.num_workers()) return;
    const WorkerId first = classes_.update(view);
    heaps_.resize(static_cast<std::size_t>(classes_.size()));
    known_ = view.num_workers();
    for (WorkerId w = first; w < known_; ++w) touched(w, view);
  }

  WorkerClasses classes_;
  std::vector<LoadHeap> heaps_;  // by class: loads are small, so 8-byte entries
  WorkerId known_ = 0;
};

}  // namespace

// Registration: a name, a one-line doc, typed parameters (none here) and a factory. After this,
// servelab.make_scheduler("jsq") and `servelab simulate` scenarios can use it, and the
// conformance suite (tests/python/test_conformance.py) runs it in both worlds.
void register_join_shortest_queue(SchedulerRegistry& registry) {
  registry.add({"jsq",
                "Join the shortest queue: each query joins the worker with the fewest outstanding queries.",
                {},
                [](const Params&) { return std::make_shared<JoinShortestQueue>(); }});
}

}  // namespace servelab::sched
