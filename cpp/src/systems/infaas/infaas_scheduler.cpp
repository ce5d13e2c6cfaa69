// The `infaas` policy: the Dispatcher's per-query getVariant (Sec. 4.1) over the run's profile,
// the variant state machine kept from the predicted queues, and model-level autoscaling through
// the core's load_model / unload_model actions.
//  - A query asks for its application's goals: accuracy >= its floor, latency <= its SLO.
//  - An Active instance whose worker cannot finish the query by its deadline (queue + batch) is
//    marked Overloaded and getVariant is asked again; it turns Active again once its worker's
//    queue is empty. When every instance is Overloaded, getVariant places a new instance on the
//    least-utilised worker without one (model-horizontal scaling), or a different variant
//    (model-vertical scaling) when that has the lower load + inference latency. On a worker with
//    queued work only an upgrade (higher saturation QPS than what it holds) is loaded, one load at
//    a time; otherwise the query joins the overloaded instance that starts it soonest.
//  - Scale-down (Sec. 4.2.2): an idle worker unloads a variant with no queued query that has not
//    been chosen for its own load time T_v; a worker keeps at least one variant loaded.
//  - No variant meets the goals: the closest one serves the query (the model-less API would report
//    the reason to the caller; a run records which variant served it).
//  - VM-Autoscaler (Sec. 4.2.3), when max_workers > 0: every poll_s, a worker of a hardware type
//    is started (startup_s, no variant loaded: getVariant places them) when every live worker of
//    that type is over `threshold` utilisation, or when more than `threshold` of the live workers
//    hold an Overloaded instance (on the hardware with the most of them); one start at a time.
//    Utilisation is the share of the next poll period already committed (predicted wait / poll_s,
//    capped at 1): the simulator has no busy-time counter a policy can read. Workers it started
//    are stopped after idle_s idle (the paper does not say when workers go down).
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/systems/infaas/get_variant.hpp"
#include "servelab/systems/infaas/metadata_store.hpp"
#include "servelab/systems/infaas/profile_variants.hpp"
#include "servelab/systems/infaas/scheduler.hpp"
#include "variant_queues.hpp"

namespace servelab::infaas {
namespace {

using sched::ModelId;
using sched::WorkerId;

class InfaasScheduler final : public VariantQueues {
 public:
  InfaasScheduler(std::vector<std::string> models, VmScaling vm) : models_(std::move(models)), vm_(vm) {}
  std::string describe() const override {
    std::string list, out;
    for (const auto& m : models_) list += (list.empty() ? "" : ",") + m;
    if (!list.empty()) out = "models='" + list + "'";
    if (vm_.max_workers > 0) {
      out += str(out.empty() ? "" : ", ", "max_workers=", vm_.max_workers, ", startup_s=", vm_.startup_s,
                 ", poll_s=", vm_.poll_s, ", threshold=", vm_.threshold, ", idle_s=", vm_.idle_s);
    }
    return out.empty() ? "infaas" : "infaas(" + out + ")";
  }

  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions& actions) override {
    if (tag != kPollTag) return;
    sync_workers(view);
    scale_vms(view, actions);
    actions.set_timer(view.now() + seconds_to_nanos(vm_.poll_s, "poll_s"), kPollTag);
  }

  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    VariantQueues::on_start(view, actions);
    const auto& profile = view.profile();
    std::vector<std::string> hardware;
    for (WorkerId w = 0; w < view.num_workers(); ++w) hardware.push_back(profile.hardware()[view.hardware(w)]);
    auto variants = variants_from_profile(profile, view.decision_statistic(), hardware);
    if (!models_.empty()) {
      for (const auto& m : models_) profile.model_index(m);  // KeyError naming an unknown model
      std::erase_if(variants, [this](const Variant& v) {
        return std::find(models_.begin(), models_.end(), v.architecture) == models_.end();
      });
    }
    if (variants.empty()) throw ValueError("infaas: no model has a latency profile on the cluster's hardware");
    store_ = std::make_unique<MetadataStore>(std::move(variants));
    model_.clear();
    by_pair_.clear();
    for (VariantId v = 0; v < store_->num_variants(); ++v) {
      const Variant& var = store_->variant(v);
      model_.push_back(profile.model_index(var.architecture));
      by_pair_[key(profile.hardware_index(var.hardware), model_.back())] = v;
    }
    last_chosen_.assign(static_cast<std::size_t>(view.num_workers()), {});
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      store_->add_worker(profile.hardware()[view.hardware(w)]);
      if (view.status(w) == sched::WorkerStatus::Stopped) {
        store_->remove_worker(w);
        continue;
      }
      for (const ModelId m : view.models(w)) {
        const auto it = by_pair_.find(key(view.hardware(w), m));
        if (it != by_pair_.end()) store_->load(it->second, w);
      }
    }
    initial_ = view.num_workers();
    last_active_.assign(static_cast<std::size_t>(view.num_workers()), view.now());
    starting_ = -1;
    if (vm_.max_workers > 0) actions.set_timer(view.now() + seconds_to_nanos(vm_.poll_s, "poll_s"), kPollTag);
  }

 protected:
  Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    Requirements req;
    req.task = kProfileTask;
    req.accuracy = std::clamp(static_cast<double>(query.accuracy_floor), 0.0, 1.0);
    req.latency_ms = std::max<double>(1e-6, static_cast<double>(query.deadline - view.now()) / 1e6);
    req.batch = query.size;
    Choice c, overloaded;  // overloaded: the instance that would start this query soonest
    Nanos overloaded_wait = 0;
    for (std::int32_t attempt = 0;; ++attempt) {
      c = get_variant(*store_, req);
      if (c.kind != ChoiceKind::Active || attempt >= kMaxRetries) break;
      const Nanos wait = wait_ns(c.worker, view);
      if (view.now() + wait + view.predicted_latency(c.worker, model_[c.variant], query.size) <= query.deadline) break;
      store_->set_state(c.variant, c.worker, VariantState::Overloaded);
      if (overloaded.variant < 0 || wait < overloaded_wait) overloaded = c, overloaded_wait = wait;
    }
    // A new instance on a worker with queued work must be an upgrade (a higher saturation QPS than
    // what it holds) and the only load under way there; else loads would pile up behind each
    // other on a busy worker and the query is better off on the overloaded instance.
    if (overloaded.variant >= 0 && c.kind != ChoiceKind::Active && c.worker >= 0 && backlog_ns(c.worker) > 0 &&
        (load_pending(c.worker, view) || !upgrade(c.variant, c.worker, view))) {
      c = overloaded;
    }
    if (c.kind == ChoiceKind::None) return {-1, -1, c.reason};
    WorkerId w = c.worker;
    if (w < 0) {  // every worker of its hardware holds it already (none Active): the least loaded
      for (const Instance& i : store_->instances(c.variant)) {
        if (w < 0 || wait_ns(i.worker, view) < wait_ns(w, view)) w = i.worker;
      }
    }
    if (w < 0) return {-1, -1, str("variant '", store_->variant(c.variant).name, "' has no worker")};
    if (store_->state(c.variant, w) == VariantState::Inactive) store_->load(c.variant, w);
    last_chosen_[w][c.variant] = view.now();
    return {w, model_[c.variant], {}};
  }

  void changed(WorkerId w, const sched::ClusterView& view) override {
    sync_workers(view);
    if (!store_->alive(w)) return;
    if (!view.is_idle(w) || backlog_ns(w) > 0) last_active_[w] = view.now();
    store_->set_utilisation(w, static_cast<double>(wait_ns(w, view)) / 1e9);
    if (backlog_ns(w) > 0) return;
    for (const auto& [v, _] : last_chosen_[w]) {  // an empty queue: Overloaded instances recover
      if (store_->state(v, w) == VariantState::Overloaded) store_->set_state(v, w, VariantState::Active);
    }
  }

  void before_serving(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) override {
    if (!store_->alive(w)) return;
    for (const ModelId m : std::vector<ModelId>(view.models(w))) {
      if (view.models(w).size() <= 1) break;
      const auto it = by_pair_.find(key(view.hardware(w), m));
      if (it == by_pair_.end() || queued_for(w, m) > 0) continue;
      const VariantId v = it->second;
      const auto chosen = last_chosen_[w].find(v);
      const Nanos since = chosen == last_chosen_[w].end() ? view.now() : view.now() - chosen->second;
      if (since < seconds_to_nanos(store_->variant(v).load_s, "load_s")) continue;
      actions.unload_model(w, m);
      store_->unload(v, w);
      last_chosen_[w].erase(v);
    }
  }

 private:
  static constexpr std::int32_t kMaxRetries = 8;

  // Whether variant v serves more queries per second than every variant worker w holds.
  bool upgrade(VariantId v, WorkerId w, const sched::ClusterView& view) const {
    const double q = store_->variant(v).saturation_qps();
    for (const ModelId m : view.models(w)) {
      const auto it = by_pair_.find(key(view.hardware(w), m));
      if (it != by_pair_.end() && store_->variant(it->second).saturation_qps() >= q) return false;
    }
    return true;
  }
  static constexpr std::int64_t kPollTag = -1;

  // Workers added by anyone since the last look join the store (ids stay aligned).
  void sync_workers(const sched::ClusterView& view) {
    while (store_->num_workers() < view.num_workers()) {
      const WorkerId w = store_->add_worker(view.profile().hardware()[view.hardware(store_->num_workers())]);
      last_chosen_.emplace_back();
      last_active_.push_back(view.now());
      if (view.status(w) == sched::WorkerStatus::Stopped) store_->remove_worker(w);
    }
  }

  void scale_vms(const sched::ClusterView& view, sched::Actions& actions) {
    const Nanos poll = seconds_to_nanos(vm_.poll_s, "poll_s");
    const Nanos idle = seconds_to_nanos(vm_.idle_s, "idle_s");
    if (starting_ >= 0 && view.status(starting_) != sched::WorkerStatus::Starting) starting_ = -1;
    // Scale down: workers it started, idle with nothing queued for idle_s.
    for (WorkerId w = initial_; w < view.num_workers(); ++w) {
      if (!store_->alive(w) || !view.is_idle(w) || !view.worker_queue(w).empty()) continue;
      if (view.now() - last_active_[w] < idle) continue;
      actions.remove_worker(w);
      store_->remove_worker(w);
      last_chosen_[w].clear();
    }
    if (starting_ >= 0) return;  // one start at a time
    std::int64_t live = 0, overloaded = 0;
    std::unordered_map<sched::HardwareId, std::pair<std::int64_t, std::int64_t>> busy;  // hw -> (over, all)
    std::unordered_map<sched::HardwareId, std::int64_t> overloaded_on;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!store_->alive(w)) continue;
      ++live;
      auto& [over, all] = busy[view.hardware(w)];
      ++all;
      const double util = std::min(1.0, static_cast<double>(wait_ns(w, view)) / static_cast<double>(poll));
      if (view.status(w) != sched::WorkerStatus::Starting && util > vm_.threshold) ++over;
      bool has_overloaded = false;
      for (const auto& [v, _] : last_chosen_[w]) has_overloaded |= store_->state(v, w) == VariantState::Overloaded;
      if (has_overloaded) ++overloaded, ++overloaded_on[view.hardware(w)];
    }
    if (live >= vm_.max_workers) return;
    sched::HardwareId target = -1;
    for (const auto& [hw, counts] : busy) {  // rule 1: a hardware type over the threshold everywhere
      if (counts.first == counts.second && (target < 0 || hw < target)) target = hw;
    }
    if (target < 0 && static_cast<double>(overloaded) > vm_.threshold * static_cast<double>(live)) {  // rule 3
      std::int64_t most = 0;
      for (const auto& [hw, n] : overloaded_on) {
        if (n > most || (n == most && hw < target)) target = hw, most = n;
      }
    }
    if (target < 0) return;
    starting_ = actions.add_worker(view.profile().hardware()[target], {}, seconds_to_nanos(vm_.startup_s, "startup_s"));
    sync_workers(view);
  }
  static std::int64_t key(std::int32_t hw, ModelId m) { return (static_cast<std::int64_t>(hw) << 32) | m; }

  std::vector<std::string> models_;  // the registered models queries may use (empty: all)
  VmScaling vm_;
  WorkerId initial_ = 0, starting_ = -1;
  std::vector<Nanos> last_active_;  // by worker: last time it was busy or had queued work
  std::unique_ptr<MetadataStore> store_;
  std::vector<ModelId> model_;                                     // by variant
  std::unordered_map<std::int64_t, VariantId> by_pair_;            // (hardware, model) -> variant
  std::vector<std::unordered_map<VariantId, Nanos>> last_chosen_;  // by worker
};

// Clipper+ (Table 5): the variants pre-loaded on the workers, fixed; each query goes to the worker
// that can start it soonest among those with a loaded model that serves its size.
class ClipperPlus final : public VariantQueues {
 public:
  std::string describe() const override { return "clipper_plus"; }

 protected:
  Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    Assignment best;
    Nanos best_wait = 0;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      const auto status = view.status(w);
      if (status == sched::WorkerStatus::Stopped || status == sched::WorkerStatus::Starting) continue;
      for (const ModelId m : view.models(w)) {
        if (query.size > view.max_batch(w, m)) continue;
        const Nanos wait = wait_ns(w, view);
        if (best.worker < 0 || wait < best_wait) best = {w, m, {}}, best_wait = wait;
        break;  // the worker's first loaded model that serves the size
      }
    }
    if (best.worker < 0) best.reason = str("no pre-loaded variant serves a batch of ", query.size);
    return best;
  }
};

// SM+ (Table 5's SageMaker-like baseline): one fixed variant, the model first loaded on the
// lowest-numbered worker on that worker's hardware (the developer's choice), scaled horizontally
// only. A query goes to the
// holder that can start it soonest; when even that one would miss its deadline, the variant is
// replicated onto an idle worker of its hardware without it (model-horizontal scaling), else a
// worker of that hardware is started with it (VM scaling, `startup_s`, at most `max_workers` live
// workers, one start at a time). Workers it started are stopped after `idle_s` idle.
class SmPlus final : public VariantQueues {
 public:
  SmPlus(double startup_s, double idle_s, std::int64_t max_workers)
      : startup_(seconds_to_nanos(startup_s, "startup_s")),
        idle_(seconds_to_nanos(idle_s, "idle_s")),
        max_workers_(max_workers) {}

  std::string describe() const override {
    return str("sm_plus(startup_s=", static_cast<double>(startup_) / 1e9, ", idle_s=", static_cast<double>(idle_) / 1e9,
               ", max_workers=", max_workers_, ")");
  }

  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    VariantQueues::on_start(view, actions);
    model_ = -1;
    for (WorkerId w = 0; w < view.num_workers() && model_ < 0; ++w) {
      if (view.status(w) != sched::WorkerStatus::Stopped && !view.models(w).empty()) {
        model_ = view.models(w).front(), hardware_ = view.hardware(w);
      }
    }
    if (model_ < 0) throw ValueError("sm_plus: no worker starts with a model: load its fixed variant on one");
    initial_ = view.num_workers();
    idle_since_.assign(static_cast<std::size_t>(view.num_workers()), view.now());
    starting_ = -1;
  }

  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions& actions) override {
    const auto w = static_cast<WorkerId>(tag);
    if (w < initial_ || w >= view.num_workers() || !view.is_idle(w) || !view.worker_queue(w).empty()) return;
    if (view.now() - idle_since_[w] >= idle_) actions.remove_worker(w);
  }

 protected:
  Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    idle_since_.resize(static_cast<std::size_t>(view.num_workers()), view.now());
    if (starting_ >= 0 && view.status(starting_) != sched::WorkerStatus::Starting) starting_ = -1;
    WorkerId best = -1;
    Nanos best_wait = 0;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (view.status(w) == sched::WorkerStatus::Stopped || !holds(w, view)) continue;
      const Nanos wait = wait_ns(w, view);
      if (best < 0 || wait < best_wait) best = w, best_wait = wait;
    }
    const std::int64_t cap = best >= 0 ? view.max_batch(best, model_) : 0;
    if (best < 0 || query.size > cap) return {-1, -1, str("the fixed variant does not serve a batch of ", query.size)};
    if (view.now() + best_wait + view.predicted_latency(best, model_, query.size) <= query.deadline) {
      return {best, model_, {}};
    }
    // Replicate onto an idle worker of the variant's hardware (serve() loads it there).
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (view.hardware(w) == hardware_ && view.is_idle(w) && !holds(w, view) && view.worker_queue(w).empty()) {
        replicas_.push_back(w);
        return {w, model_, {}};
      }
    }
    if (starting_ < 0 && live_workers(view) < max_workers_) {  // VM scaling: one start at a time
      const ModelId models[] = {model_};
      starting_ = actions.add_worker(view.profile().hardware()[hardware_], models, startup_);
    }
    return {best, model_, {}};
  }

  void before_serving(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) override {
    if (view.worker_queue(w).empty()) {
      idle_since_.resize(static_cast<std::size_t>(view.num_workers()), view.now());
      idle_since_[w] = view.now();
      if (w >= initial_) actions.set_timer(view.now() + idle_, w);
    }
  }

 private:
  bool holds(WorkerId w, const sched::ClusterView& view) const {
    if (view.hardware(w) != hardware_) return false;  // the same model elsewhere is another variant
    return view.has_model(w, model_) || std::find(replicas_.begin(), replicas_.end(), w) != replicas_.end();
  }
  std::int64_t live_workers(const sched::ClusterView& view) const {
    std::int64_t n = 0;
    for (WorkerId w = 0; w < view.num_workers(); ++w) n += view.status(w) != sched::WorkerStatus::Stopped ? 1 : 0;
    return n;
  }

  Nanos startup_, idle_;
  std::int64_t max_workers_;
  ModelId model_ = -1;
  sched::HardwareId hardware_ = -1;
  WorkerId initial_ = 0, starting_ = -1;
  std::vector<WorkerId> replicas_;  // workers it replicated the variant onto (loading or loaded)
  std::vector<Nanos> idle_since_;
};

}  // namespace

std::shared_ptr<sched::Scheduler> make_sm_plus(double startup_s, double idle_s, std::int64_t max_workers) {
  return std::make_shared<SmPlus>(startup_s, idle_s, max_workers);
}

std::shared_ptr<sched::Scheduler> make_infaas_scheduler(std::vector<std::string> models, VmScaling vm) {
  return std::make_shared<InfaasScheduler>(std::move(models), vm);
}
std::shared_ptr<sched::Scheduler> make_clipper_plus() { return std::make_shared<ClipperPlus>(); }

}  // namespace servelab::infaas
