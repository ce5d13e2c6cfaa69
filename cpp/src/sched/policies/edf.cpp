// Earliest deadline first over a central queue: an idle worker always takes the queued query whose
// deadline is nearest (ties: the older query). With drop_late, a query that can no longer meet its
// deadline on the chosen worker is dropped instead of served late.
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {
namespace {

class EarliestDeadlineFirst final : public Scheduler {
 public:
  explicit EarliestDeadlineFirst(bool drop_late) : drop_late_(drop_late) {}
  std::string describe() const override { return str("edf(drop_late=", drop_late_ ? "True" : "False", ")"); }

  void on_arrival(const Query& query, const ClusterView& view, Actions& actions) override {
    actions.enqueue(query.id);
    pending_.emplace(query.deadline, query.id);
    drain(view, actions);
  }
  void on_batch_done(const BatchDone&, const ClusterView& view, Actions& actions) override { drain(view, actions); }
  void on_worker_ready(WorkerId, const ClusterView& view, Actions& actions) override { drain(view, actions); }

 private:
  void drain(const ClusterView& view, Actions& actions) {
    while (!pending_.empty() && !view.idle_workers().empty()) {
      const QueryId id = pending_.top().second;
      pending_.pop();
      const Query query = view.query(id);
      // The idle worker predicted to finish it first.
      WorkerId best = -1;
      ModelId best_model = -1;
      Nanos best_latency = kNever;
      for (const WorkerId w : view.idle_workers()) {
        const ModelId m = pick_model(view, w, query);
        if (m < 0) continue;
        const Nanos latency = view.predicted_latency(w, m, query.size);
        if (latency < best_latency || (latency == best_latency && w < best))
          best = w, best_model = m, best_latency = latency;
      }
      if (best < 0) {
        waiting_.push_back({query.deadline, id});  // no idle worker can serve it now; retry later
        continue;
      }
      if (drop_late_ && view.now() + best_latency > query.deadline) {
        actions.drop(id, "cannot meet its deadline");
        continue;
      }
      actions.dispatch(best, best_model, {&id, 1});
    }
    for (const auto& entry : waiting_) pending_.push(entry);
    waiting_.clear();
  }

  using Entry = std::pair<Nanos, QueryId>;  // (deadline, id): min-heap, ties by id (= arrival order)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> pending_;
  std::vector<Entry> waiting_;
  bool drop_late_;
};

}  // namespace

void register_edf(SchedulerRegistry& registry) {
  registry.add({"edf",
                "Earliest deadline first from a central queue to the idle worker predicted to finish it first.",
                {ParamSpec{"drop_late",
                           ParamType::Bool,
                           false,
                           "drop a query that cannot meet its deadline instead of serving it late",
                           {},
                           {},
                           false,
                           {}}},
                [](const Params& p) { return std::make_shared<EarliestDeadlineFirst>(p.get_bool("drop_late")); }});
}

}  // namespace servelab::sched
