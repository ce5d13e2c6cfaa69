// FCFS over a central queue: the oldest query goes to an idle worker, the most preferred one when
// several are idle (Ribbon sends to the "base" instance type first), then by the tie rule. Strict
// FCFS: while the head query finds no idle worker that can serve it, nothing behind it is
// dispatched. The choice reads the cluster state's idle index, so it costs O(log W), not O(idle).
// With max_queue > 0 the central queue is bounded: an arrival that finds max_queue queries waiting
// is dropped at once (tail drop), so an overloaded run keeps bounded waits and memory.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "servelab/core/param_builders.hpp"
#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/sched/tie_rule.hpp"

namespace servelab::sched {
namespace {

class Fcfs final : public Scheduler {
 public:
  Fcfs(std::string prefer, TieRule tie, std::int64_t max_queue)
      : prefer_text_(std::move(prefer)),
        prefer_(split_list_param("prefer", prefer_text_)),
        picker_(tie, Rng(0, "")),
        max_queue_(max_queue) {
    if (max_queue_ < 0) throw ValueError(str("fcfs: max_queue=", max_queue_, " must be >= 0 (0: unbounded)"));
  }

  std::string describe() const override {
    std::string out = str("fcfs(prefer='", prefer_text_, "'");
    if (picker_.rule() != TieRule::LowestId) out += str(", tie='", tie_rule_name(picker_.rule()), "'");
    if (max_queue_ > 0) out += str(", max_queue=", max_queue_);
    return out + ")";
  }

  void on_start(const ClusterView& view, Actions&) override {
    picker_ = IdlePicker(picker_.rule(), Rng(view.seed(), "scheduler/fcfs"));
    const auto& profile = view.profile();
    // Preference classes: each listed hardware type, then every unlisted one together.
    classes_.clear();
    class_of_.assign(profile.hardware().size(), static_cast<std::int32_t>(prefer_.size()));
    for (std::size_t p = 0; p < prefer_.size(); ++p) {
      const HardwareId h = profile.hardware_index(prefer_[p]);    // KeyError for unknown names
      if (class_of_[h] < static_cast<std::int32_t>(p)) continue;  // listed twice: the first counts
      class_of_[h] = static_cast<std::int32_t>(classes_.size());
      classes_.push_back({h});
    }
    std::vector<HardwareId> rest;
    for (std::size_t h = 0; h < class_of_.size(); ++h) {
      if (class_of_[h] == static_cast<std::int32_t>(prefer_.size())) {
        class_of_[h] = static_cast<std::int32_t>(classes_.size());
        rest.push_back(static_cast<HardwareId>(h));
      }
    }
    if (rest.size() == class_of_.size()) rest = {ClusterView::kAnyHardware};  // no preference: one index
    if (!rest.empty()) classes_.push_back(std::move(rest));
  }

  void on_arrival(const Query& query, const ClusterView& view, Actions& actions) override {
    const auto& waiting = view.central_queue();
    if (waiting.empty()) {  // one compare; a deque's size() is arithmetic on its blocks
      serve(query, view, actions);
    } else if (max_queue_ > 0 && waiting.size() >= static_cast<std::size_t>(max_queue_)) {
      actions.drop(query.id, "queue full (max_queue)");
    }  // else it waits its turn
  }
  void on_batch_done(const BatchDone&, const ClusterView& view, Actions& actions) override { drain(view, actions); }
  void on_worker_ready(WorkerId, const ClusterView& view, Actions& actions) override { drain(view, actions); }

 private:
  // Dispatches `query` to the most preferred idle worker able to serve it, or drops it when no
  // worker at all can; false when it has to wait.
  bool serve(const Query& query, const ClusterView& view, Actions& actions) {
    // Fast path: the tie rule's pick in the most preferred class with an idle worker usually has
    // a model for the query.
    WorkerId best = -1;
    for (const auto& group : classes_) {
      best = picker_.pick(view, group);
      if (best >= 0) break;
    }
    if (best < 0) return false;
    ModelId model = pick_model(view, best, query);
    if (model < 0) {
      best = slow_pick(query, view, model);
      if (best < 0) {
        if (anyone_can_serve(query, view)) return false;  // it waits for a busy worker that can
        actions.drop(query.id, "no worker can serve it");
        return true;  // the head is gone; the queue moves on
      }
    }
    const QueryId id = query.id;
    picker_.chosen(best);
    actions.dispatch(best, model, {&id, 1});
    return true;
  }

  // The best idle worker that can serve the query (preference class, then tie rule), scanning.
  // Out of line, like anyone_can_serve: serve()'s common path then keeps fewer registers.
  [[gnu::noinline]] WorkerId slow_pick(const Query& query, const ClusterView& view, ModelId& model) {
    std::int32_t best_class = std::numeric_limits<std::int32_t>::max();
    std::vector<std::pair<WorkerId, ModelId>>& ties = ties_;
    ties.clear();
    std::uint64_t best_key = 0;
    for (const WorkerId w : view.idle_workers()) {
      const std::int32_t c = class_of_[view.hardware(w)];
      if (c > best_class) continue;
      const ModelId m = pick_model(view, w, query);
      if (m < 0) continue;
      const std::uint64_t k = picker_.key(view, w);
      if (c < best_class || (picker_.rule() != TieRule::Random && k < best_key)) {
        ties.clear(), best_class = c, best_key = k;
      } else if (picker_.rule() != TieRule::Random && k > best_key) {
        continue;
      }
      ties.emplace_back(w, m);
    }
    if (ties.empty()) return -1;
    if (picker_.rule() == TieRule::Random) {
      std::sort(ties.begin(), ties.end());  // the draw must not depend on the idle list's order
      const auto& [w, m] = ties[static_cast<std::size_t>(picker_.draw(static_cast<std::int64_t>(ties.size())))];
      model = m;
      return w;
    }
    model = ties.front().second;
    return ties.front().first;
  }

  [[gnu::noinline]] static bool anyone_can_serve(const Query& query, const ClusterView& view) {
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

  std::string prefer_text_;
  std::vector<std::string> prefer_;
  IdlePicker picker_;
  std::vector<std::vector<HardwareId>> classes_;  // preference classes, most preferred first
  std::vector<std::int32_t> class_of_;            // by hardware
  std::vector<std::pair<WorkerId, ModelId>> ties_;
  std::int64_t max_queue_ = 0;
};

}  // namespace

std::shared_ptr<Scheduler> make_fcfs(std::string prefer, TieRule tie, std::int64_t max_queue) {
  return std::make_shared<Fcfs>(std::move(prefer), tie, max_queue);
}

void register_fcfs(SchedulerRegistry& registry) {
  registry.add({"fcfs",
                "First come, first served from a central queue to an idle worker; when several are idle, the "
                "hardware listed first in `prefer` wins (Ribbon's base-type-first), then the tie rule `tie`.",
                {ParamSpec{"prefer",
                           ParamType::String,
                           std::string(),
                           "comma-separated hardware names in order of preference (unlisted ones come last)",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"tie",
                           ParamType::String,
                           std::string("lowest_id"),
                           "which of several equally preferred idle workers gets the query: lowest_id (the lowest "
                           "worker id), round_robin (the next id after the last chosen), lru (idle the longest) or "
                           "random (seeded by the run)",
                           {},
                           {},
                           false,
                           {"lowest_id", "round_robin", "lru", "random"}},
                 int_param("max_queue", 0, 0,
                           "the most queries the central queue holds; an arrival that finds it full is dropped "
                           "with the reason 'queue full (max_queue)' (0: unbounded)")},
                [](const Params& p) {
                  return std::make_shared<Fcfs>(p.get_string("prefer"), parse_tie_rule(p.get_string("tie"), "tie"),
                                                p.get_int("max_queue"));
                }});
}

}  // namespace servelab::sched
