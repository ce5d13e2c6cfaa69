// Round-robin and uniformly random assignment of queries to workers' own queues.
#include <memory>

#include "per_worker_queue.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {
namespace {

// Tries the workers in turn from `first`, returning the first live one able to serve the query.
WorkerId first_able(const Query& query, const ClusterView& view, WorkerId first) {
  const WorkerId n = view.num_workers();
  for (WorkerId k = 0; k < n; ++k) {
    const WorkerId w = (first + k) % n;
    if (is_live(view, w) && pick_model(view, w, query) >= 0) return w;
  }
  return -1;
}

class RoundRobin final : public PerWorkerQueue {
 public:
  std::string describe() const override { return "round_robin"; }

 protected:
  WorkerId choose(const Query& query, const ClusterView& view) override {
    const WorkerId w = first_able(query, view, next_ % view.num_workers());
    if (w >= 0) next_ = w + 1;
    return w;
  }

 private:
  WorkerId next_ = 0;
};

class RandomChoice final : public PerWorkerQueue {
 public:
  std::string describe() const override { return "random"; }
  void on_start(const ClusterView& view, Actions&) override { rng_ = Rng(view.seed(), "scheduler/random"); }

 protected:
  WorkerId choose(const Query& query, const ClusterView& view) override {
    const auto n = static_cast<std::uint64_t>(view.num_workers());
    return first_able(query, view, static_cast<WorkerId>(rng_.uniform() * static_cast<double>(n)) % view.num_workers());
  }

 private:
  Rng rng_{0, "scheduler/random"};
};

}  // namespace

void register_round_robin(SchedulerRegistry& registry) {
  registry.add(
      {"round_robin", "Each query joins the next worker's own queue in turn (FIFO per worker).", {}, [](const Params&) {
         return std::make_shared<RoundRobin>();
       }});
  registry.add({"random",
                "Each query joins a uniformly random worker's own queue (drawn from the run seed's stream "
                "\"scheduler/random\").",
                {},
                [](const Params&) { return std::make_shared<RandomChoice>(); }});
}

}  // namespace servelab::sched
