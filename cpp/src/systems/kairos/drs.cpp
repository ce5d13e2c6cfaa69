// DRS: DeepRecSys's (ISCA'20) static query-size threshold, as Kairos compares with it (Sec. 7).
// A query larger than `threshold` items goes to the base type, the others to the auxiliary types.
// Each side is served first come, first served: the oldest query of a side goes to an idle
// instance of that side (the base side: lowest worker id; the auxiliary side: the type predicted
// to serve it fastest, then the lowest id), and nothing behind it on that side starts before it.
// A query the instances of its side cannot serve at all (model or size beyond the profile) goes to
// the other side; one nobody can serve is dropped. Without auxiliary instances everything goes to
// the base side, and without base instances to the auxiliary side.
//
// threshold = -1 picks, per QoS target, the natural starting point of the hill climb that tunes
// it (servelab.kairos.tune_drs_threshold): a query is small when every auxiliary type present
// serves it within its QoS target by the profile's decision latency.
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/kairos/baselines.hpp"
#include "servelab/systems/kairos/cluster_roles.hpp"

namespace servelab::kairos {
namespace {

class Drs final : public sched::Scheduler {
 public:
  Drs(std::int64_t threshold, std::string base, double qos_ms, std::string description)
      : threshold_(threshold), base_(std::move(base)), qos_ms_(qos_ms), description_(std::move(description)) {}

  std::string describe() const override { return description_; }

  void on_start(const ClusterView& view, sched::Actions&) override { refresh(view); }

  void on_arrival(const sched::Query& query, const ClusterView& view, sched::Actions& actions) override {
    refresh(view);
    const bool large = is_large(query, view);
    bool can_base = false, can_aux = false;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!sched::is_live(view, w) || sched::pick_model(view, w, query) < 0) continue;
      (is_base_[w] ? can_base : can_aux) = true;
    }
    if (!can_base && !can_aux) {
      actions.drop(query.id, "no worker can serve it");
      return;
    }
    const bool to_base = large ? can_base : !can_aux;
    (to_base ? large_ : small_).push_back(query.id);
    serve(to_base, view, actions);
  }
  void on_batch_done(const sched::BatchDone& done, const ClusterView& view, sched::Actions& actions) override {
    refresh(view);
    serve(is_base_[done.worker], view, actions);
  }
  void on_worker_ready(WorkerId worker, const ClusterView& view, sched::Actions& actions) override {
    refresh(view);
    serve(is_base_[worker], view, actions);
  }

 private:
  void refresh(const ClusterView& view) {
    if (view.num_workers() == known_) return;
    known_ = view.num_workers();
    roles_ = find_roles(view, base_);
    is_base_.assign(known_, false);
    for (WorkerId w = 0; w < known_; ++w) is_base_[w] = view.hardware(w) == roles_.base;
  }

  bool is_large(const sched::Query& query, const ClusterView& view) const {
    if (threshold_ >= 0) return query.size > threshold_;
    const double qos = qos_target_ms(qos_ms_, query);
    bool any_aux = false;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!sched::is_live(view, w) || is_base_[w]) continue;
      const ModelId m = sched::pick_model(view, w, query);
      if (m < 0 || nanos_to_millis(view.predicted_latency(w, m, query.size)) > qos) return true;
      any_aux = true;
    }
    return !any_aux;
  }

  // Starts the oldest queries of one side on its idle instances, in order, until one must wait.
  void serve(bool base_side, const ClusterView& view, sched::Actions& actions) {
    auto& queue = base_side ? large_ : small_;
    while (!queue.empty()) {
      const sched::Query query = view.query(queue.front());
      WorkerId best = -1;
      ModelId best_model = -1;
      Nanos best_latency = sched::kNever;
      for (const WorkerId w : view.idle_workers()) {
        if (static_cast<bool>(is_base_[w]) != base_side) continue;
        const ModelId m = sched::pick_model(view, w, query);
        if (m < 0) continue;
        // Base side: the lowest id; auxiliary side: the fastest type, then the lowest id.
        const Nanos latency = base_side ? 0 : view.predicted_latency(w, m, query.size);
        if (latency < best_latency || (latency == best_latency && w < best)) {
          best = w, best_model = m, best_latency = latency;
        }
      }
      if (best < 0) return;
      const QueryId id = query.id;
      actions.dispatch(best, best_model, {&id, 1});
      queue.pop_front();
    }
  }

  std::int64_t threshold_;
  std::string base_;
  double qos_ms_;
  std::string description_;
  WorkerId known_ = -1;
  ClusterRoles roles_;
  std::vector<char> is_base_;  // by worker
  std::deque<QueryId> large_, small_;
};

}  // namespace

void register_drs(sched::SchedulerRegistry& registry) {
  registry.add(
      {"drs",
       "DRS (DeepRecSys, ISCA'20) as compared in Kairos: queries above a static size threshold go to the base type, "
       "the others to the auxiliary types, each side FCFS.",
       {ParamSpec{"threshold",
                  ParamType::Int,
                  std::int64_t{-1},
                  "largest query size (items) served by the auxiliary types (-1: the sizes every auxiliary type "
                  "serves within QoS)",
                  -1.0,
                  {},
                  false,
                  {}},
        base_type_param(), qos_ms_param("QoS target for threshold=-1, ms (0: each query's deadline - arrival)")},
       [](const Params& p) {
         return std::make_shared<Drs>(p.get_int("threshold"), p.get_string("base"), p.get_float("qos_ms"),
                                      p.describe());
       }});
}

}  // namespace servelab::kairos
