// Least predicted finish time: each query joins the worker on which it is predicted to finish
// first, counting the batch the worker is running (busy_until), the predicted latency of what is
// already queued there, and its own latency on that worker's hardware. Heterogeneity-aware: a
// fast GPU with a short queue beats an idle slow CPU when it would finish sooner.
#include <limits>
#include <memory>
#include <vector>

#include "per_worker_queue.hpp"
#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {
namespace {

class LeastFinishTime final : public PerWorkerQueue {
 public:
  std::string describe() const override { return "least_finish_time"; }

 protected:
  WorkerId choose(const Query& query, const ClusterView& view) override {
    backlog_.resize(view.num_workers(), 0);
    WorkerId best = -1;
    Nanos best_finish = kNever;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!is_live(view, w)) continue;
      const ModelId m = pick_model(view, w, query);
      if (m < 0) continue;
      const Nanos finish = view.busy_until(w) + backlog_[w] + view.predicted_latency(w, m, query.size);
      if (finish < best_finish) best = w, best_finish = finish;
    }
    return best;
  }
  // backlog_[w]: predicted work waiting in w's queue, kept in step with the queue.
  void queued(WorkerId w, const Query& query, const ClusterView& view) override {
    backlog_[w] += latency(w, query, view);
  }
  void started(WorkerId w, const Query& query, const ClusterView& view) override {
    if (view.worker_queue(w).empty() || view.worker_queue(w).front() != query.id) return;  // never queued
    backlog_[w] -= latency(w, query, view);
  }

 private:
  static Nanos latency(WorkerId w, const Query& query, const ClusterView& view) {
    return view.predicted_latency(w, pick_model(view, w, query), query.size);
  }
  std::vector<Nanos> backlog_;
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
