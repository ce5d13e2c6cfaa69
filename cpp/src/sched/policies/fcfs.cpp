// FCFS over a central queue: the oldest query goes to an idle worker, the most preferred one when
// several are idle (Ribbon sends to the "base" instance type first). Strict FCFS: while the head
// query finds no idle worker that can serve it, nothing behind it is dispatched.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {
namespace {

class Fcfs final : public Scheduler {
 public:
  explicit Fcfs(std::string prefer)
      : prefer_text_(std::move(prefer)), prefer_(split_list_param("prefer", prefer_text_)) {}

  std::string describe() const override { return str("fcfs(prefer='", prefer_text_, "')"); }

  void on_start(const ClusterView& view, Actions&) override {
    for (const auto& name : prefer_) view.profile().hardware_index(name);  // KeyError for unknown names
  }

  void on_arrival(const Query& query, const ClusterView& view, Actions& actions) override {
    if (view.central_queue().empty()) serve(query, view, actions);  // else it waits its turn
  }
  void on_batch_done(const BatchDone&, const ClusterView& view, Actions& actions) override { drain(view, actions); }
  void on_worker_ready(WorkerId, const ClusterView& view, Actions& actions) override { drain(view, actions); }

 private:
  // Dispatches `query` to the most preferred idle worker able to serve it, or drops it when no
  // worker at all can; false when it has to wait.
  bool serve(const Query& query, const ClusterView& view, Actions& actions) {
    // Fast path: the most preferred idle worker usually has a model for the query.
    WorkerId best = -1;
    std::int64_t best_rank = std::numeric_limits<std::int64_t>::max();
    for (const WorkerId w : view.idle_workers()) {
      const std::int64_t r = rank(view, w);
      if (r < best_rank) best = w, best_rank = r;
    }
    if (best < 0) return false;
    ModelId model = pick_model(view, best, query);
    if (model < 0) {  // slow path: the best-ranked idle worker that can serve it
      best = -1, best_rank = std::numeric_limits<std::int64_t>::max();
      for (const WorkerId w : view.idle_workers()) {
        const std::int64_t r = rank(view, w);
        if (r >= best_rank) continue;
        const ModelId m = pick_model(view, w, query);
        if (m >= 0) best = w, model = m, best_rank = r;
      }
      if (best < 0) {
        if (anyone_can_serve(query, view)) return false;  // it waits for a busy worker that can
        actions.drop(query.id, "no worker can serve it");
        return true;  // the head is gone; the queue moves on
      }
    }
    const QueryId id = query.id;
    actions.dispatch(best, model, {&id, 1});
    return true;
  }

  static bool anyone_can_serve(const Query& query, const ClusterView& view) {
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (is_live(view, w) && pick_model(view, w, query) >= 0) return true;
    }
    return false;
  }

  void drain(const ClusterView& view, Actions& actions) {
    while (!view.central_queue().empty() && !view.idle_workers().empty()) {
      if (!serve(view.query(view.central_queue().front()), view, actions)) break;
    }
  }

  // Preference rank: position of the worker's hardware in `prefer` (unlisted last), then worker id.
  // Inline and table-driven: it runs for every idle worker on every arrival.
  std::int64_t rank(const ClusterView& view, WorkerId w) {
    if (static_cast<std::size_t>(w) >= rank_.size()) extend_ranks(view);
    return rank_[w];
  }
  void extend_ranks(const ClusterView& view) {
    for (auto w = static_cast<WorkerId>(rank_.size()); w < view.num_workers(); ++w) {
      const auto& name = view.profile().hardware()[view.hardware(w)];
      const std::int64_t position = std::find(prefer_.begin(), prefer_.end(), name) - prefer_.begin();
      rank_.push_back(position * (std::int64_t{1} << 32) + w);
    }
  }

  std::string prefer_text_;
  std::vector<std::string> prefer_;
  std::vector<std::int64_t> rank_;  // by worker
};

}  // namespace

std::shared_ptr<Scheduler> make_fcfs(std::string prefer) { return std::make_shared<Fcfs>(std::move(prefer)); }

void register_fcfs(SchedulerRegistry& registry) {
  registry.add({"fcfs",
                "First come, first served from a central queue to an idle worker; when several are idle, the "
                "hardware listed first in `prefer` wins (Ribbon's base-type-first), then the lowest worker id.",
                {ParamSpec{"prefer",
                           ParamType::String,
                           std::string(),
                           "comma-separated hardware names in order of preference (unlisted ones come last)",
                           {},
                           {},
                           false,
                           {}}},
                [](const Params& p) { return std::make_shared<Fcfs>(p.get_string("prefer")); }});
}

}  // namespace servelab::sched
