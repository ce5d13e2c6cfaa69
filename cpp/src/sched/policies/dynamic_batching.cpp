// Dynamic batching, the Triton/Clipper knobs: queries wait in a central queue; an idle worker
// takes up to max_batch of the oldest ones as soon as max_batch are waiting, or when the oldest
// has waited timeout_ms, whichever comes first. A batch never exceeds what the profile covers
// for the model, and only takes consecutive queries the chosen model can serve.
#include <memory>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {
namespace {

class DynamicBatching final : public Scheduler {
 public:
  DynamicBatching(std::int64_t max_batch, double timeout_ms)
      : max_batch_(max_batch), timeout_ms_(timeout_ms), timeout_(millis_to_nanos(timeout_ms, "timeout_ms")) {}

  std::string describe() const override {
    return str("batching(max_batch=", max_batch_, ", timeout_ms=", timeout_ms_, ")");
  }

  void on_arrival(const Query& query, const ClusterView& view, Actions& actions) override {
    actions.enqueue(query.id);
    drain(view, actions);
  }
  void on_batch_done(const BatchDone&, const ClusterView& view, Actions& actions) override { drain(view, actions); }
  void on_worker_ready(WorkerId, const ClusterView& view, Actions& actions) override { drain(view, actions); }
  void on_timer(std::int64_t, const ClusterView& view, Actions& actions) override {
    timer_at_ = kNever;
    drain(view, actions);
  }

 private:
  void drain(const ClusterView& view, Actions& actions) {
    const auto& queue = view.central_queue();
    while (!queue.empty() && !view.idle_workers().empty()) {
      const Query head = view.query(queue.front());
      const bool full = static_cast<std::int64_t>(queue.size()) >= max_batch_;
      if (!full && view.now() < head.arrival + timeout_) {
        arm(head.arrival + timeout_, actions);
        return;
      }
      if (!dispatch_from_head(head, view, actions)) return;  // the head fits no idle worker now
    }
  }

  bool dispatch_from_head(const Query& head, const ClusterView& view, Actions& actions) {
    WorkerId worker = -1;
    ModelId model = -1;
    for (const WorkerId w : view.idle_workers()) {
      const ModelId m = pick_model(view, w, head);
      if (m >= 0 && (worker < 0 || w < worker)) worker = w, model = m;
    }
    if (worker < 0) return false;
    const std::int64_t limit = view.max_batch(worker, model);
    const double accuracy = view.profile().accuracy(model);
    batch_.clear();
    std::int64_t items = 0;
    for (const QueryId id : view.central_queue()) {
      if (static_cast<std::int64_t>(batch_.size()) == max_batch_) break;
      const Query q = view.query(id);
      const bool accurate = q.accuracy_floor <= 0 || accuracy >= q.accuracy_floor;
      if (!accurate || items + q.size > limit) break;  // keep FIFO order: stop at the first misfit
      batch_.push_back(id);
      items += q.size;
    }
    actions.dispatch(worker, model, batch_);
    return true;
  }

  void arm(Nanos at, Actions& actions) {
    if (timer_at_ <= at) return;  // an earlier (or the same) wake-up is already set
    timer_at_ = at;
    actions.set_timer(at, 0);
  }

  std::int64_t max_batch_;
  double timeout_ms_;
  Nanos timeout_;
  Nanos timer_at_ = kNever;
  std::vector<QueryId> batch_;
};

}  // namespace

void register_dynamic_batching(SchedulerRegistry& registry) {
  registry.add({"batching",
                "Dynamic batching (Triton/Clipper): an idle worker takes up to max_batch of the oldest queued queries "
                "once max_batch are waiting or the oldest has waited timeout_ms.",
                {ParamSpec{"max_batch", ParamType::Int, std::int64_t{8}, "most queries per batch", 1.0, 1e6, false, {}},
                 ParamSpec::non_negative("timeout_ms", 5.0, "longest the oldest query waits for a fuller batch, ms")},
                [](const Params& p) {
                  return std::make_shared<DynamicBatching>(p.get_int("max_batch"), p.get_float("timeout_ms"));
                }});
}

}  // namespace servelab::sched
