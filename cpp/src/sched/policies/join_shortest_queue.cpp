// Join-shortest-queue: the reference scheduler of docs/adding-a-scheduler.md. It is deliberately
// small and fully annotated; copy it to start a new policy.
//
// The policy: each query joins the worker with the fewest outstanding queries (its own queue plus
// the one batch it may be running); ties go to the lowest worker id, so runs are deterministic.
// A worker serves its queue oldest first, one query per batch. All of that queue handling comes
// from PerWorkerQueue; this file only decides where a query goes.
#include <limits>
#include <memory>

#include "per_worker_queue.hpp"
#include "servelab/sched/scheduler_registry.hpp"

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
    WorkerId best = -1;
    std::size_t best_load = std::numeric_limits<std::size_t>::max();
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      // Skip workers that were removed (autoscaling) or lack a model for this query (accuracy
      // floor, batch beyond the profile): pick_model returns -1 for those.
      if (!is_live(view, w) || pick_model(view, w, query) < 0) continue;
      const std::size_t load = view.worker_queue(w).size() + (view.is_idle(w) ? 0 : 1);
      if (load < best_load) best = w, best_load = load;  // strict <: the lowest id wins ties
    }
    return best;  // -1: nobody can serve it, PerWorkerQueue drops it with a reason
  }
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
