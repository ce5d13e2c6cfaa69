// The `infaas` policy: the Dispatcher's per-query getVariant (Sec. 4.1) over the run's profile,
// the variant state machine kept from the predicted queues and measured batches, the periodic
// Model-Autoscaler, offline queries, and the VM-Autoscaler.
//  - A query asks for its application's goals: accuracy >= its floor, latency <= its SLO.
//  - An Active instance whose worker cannot finish the query by its deadline (queue + batch) is
//    marked Overloaded and getVariant is asked again; it turns Active again once its worker's
//    queue is empty. A batch slower than the profile's p99 by more than interference_tol (and
//    interference_floor_ms) marks its instance Interfered until one runs within it again;
//    warmup_batch: the first batch after a load is not compared (a real executor's warm-up).
//  - The periodic Model-Autoscaler (model_autoscaler.hpp, when autoscale_s > 0, the default): every
//    period, per application, the scaling solver (autoscaler=: the Sec. 4.2.2 greedy, or the exact
//    Sec. 4.2.1 ILP) over the measured load (plus the queued backlog) decides a scale-up (at once)
//    or a scale-down (once proposed for the removed variants' load time T_v). A new instance is
//    loaded on its worker first and joins the metadata store when ready; the instances it
//    replaces then leave the store and their queued queries move to it. Queries follow the store (getVariant); a
//    variant the store dropped is unloaded once its queue is empty. Per-query scaling is then reserved for cold starts:
//    a query with an (overloaded) instance joins the one that starts it soonest. A plan that needs more workers than
//    there are asks the VM-Autoscaler for one of its hardware.
//  - With autoscale_s = 0 (the first slice's per-query scaling): when every instance is
//    Overloaded, getVariant places a new instance or a different variant; on a worker with queued
//    work only an upgrade (higher saturation QPS) is loaded, one load at a time. An idle worker
//    unloads a variant not chosen for its load time T_v; a worker keeps one variant.
//  - Offline applications: their queries wait in the central queue; an idle worker with nothing
//    queued serves a batch of them with a variant of their task it holds (one holding nothing, or
//    with app_models none of their task that accepts them, loads the cheapest that does), within a
//    busy-time budget of max_utilisation (40 %) of the period, and not after a period above it or
//    an online batch slower than its profile (Sec. 4.2.3, 6.3.2). Those still waiting at the end
//    are dropped by the run with its reason.
//  - Co-location (machines with modelled memory, colocation.hpp): a new instance loads beside the
//    running ones on the VM of its hardware with the most instance slots (add_instance; memory,
//    instance_cores per CPU instance, accel_instances per accelerator), unless an idle, free worker
//    can take it; a cold start is a new instance too; the Model-Autoscaler's resource rows count
//    the slots left; an added instance left with nothing stops. With the periodic autoscaler a
//    query whose instances are all Overloaded or Interfered joins the one that starts it soonest.
//    q_wait: Q_v over the batches within half the SLO.
//  - No variant meets the goals: the closest one serves the query (the model-less API would report
//    the reason to the caller; a run records which variant served it).
//  - VM-Autoscaler (Sec. 4.2.3), when max_workers > 0: every poll_s, a worker of a hardware type
//    is started (startup_s, no variant loaded: getVariant places them) when every live worker of
//    that type is over `threshold` utilisation (rule 1), every instance on it is Interfered
//    (rule 2), or more than `threshold` of the live workers hold an Overloaded instance (rule 3,
//    on the hardware with the most of them), or the Model-Autoscaler asked; one start at a time.
//    Utilisation is the share of the next poll period already committed (predicted wait / poll_s,
//    capped at 1): the simulator has no busy-time counter a policy can read. Workers it started
//    are stopped after idle_s idle (the paper does not say when workers go down).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "colocation.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/systems/infaas/get_variant.hpp"
#include "servelab/systems/infaas/metadata_store.hpp"
#include "servelab/systems/infaas/model_autoscaler.hpp"
#include "servelab/systems/infaas/profile_variants.hpp"
#include "servelab/systems/infaas/scheduler.hpp"
#include "variant_queues.hpp"

namespace servelab::infaas {
namespace {

using sched::ModelId;
using sched::QueryId;
using sched::WorkerId;

class InfaasScheduler final : public VariantQueues {
 public:
  InfaasScheduler(std::vector<std::string> models, VmScaling vm, ModelScaling scaling, OfflineServing offline,
                  std::vector<std::string> app_models, BatchCap batch_cap)
      : VariantQueues(batch_cap),
        models_(std::move(models)),
        vm_(vm),
        ms_(scaling),
        // At construction, so that a bad name fails before the run: ValueError naming autoscaler=
        // and the value (RuntimeError saying why when the 'ilp' solver's LP backend does not load).
        solve_(scaling_solver(scaling.solver)),
        off_(std::move(offline)),
        app_models_(std::move(app_models)) {}
  std::string describe() const override {
    std::string list, out;
    for (const auto& m : models_) list += (list.empty() ? "" : ",") + m;
    if (!list.empty()) out = "models='" + list + "'";
    if (vm_.max_workers > 0) {
      out += str(out.empty() ? "" : ", ", "max_workers=", vm_.max_workers, ", startup_s=", vm_.startup_s,
                 ", poll_s=", vm_.poll_s, ", threshold=", vm_.threshold, ", idle_s=", vm_.idle_s);
    }
    const ModelScaling d;
    if (ms_.period_s != d.period_s || ms_.slack != d.slack || ms_.window_s != d.window_s) {
      out += str(out.empty() ? "" : ", ", "autoscale_s=", ms_.period_s, ", slack=", ms_.slack,
                 ", load_window_s=", ms_.window_s);
    }
    if (ms_.best_fit) out += str(out.empty() ? "" : ", ", "dispatch='best_fit'");
    if (ms_.fast_up) out += str(out.empty() ? "" : ", ", "fast_up=true");
    if (!ms_.concurrent_loads) out += str(out.empty() ? "" : ", ", "concurrent_loads=false");
    if (ms_.solver != d.solver) out += str(out.empty() ? "" : ", ", "autoscaler='", ms_.solver, "'");
    if (ms_.instance_cores != d.instance_cores)
      out += str(out.empty() ? "" : ", ", "instance_cores=", ms_.instance_cores);
    if (ms_.q_wait) out += str(out.empty() ? "" : ", ", "q_wait=true");
    if (ms_.accel_instances != d.accel_instances) {
      out += str(out.empty() ? "" : ", ", "accel_instances=", ms_.accel_instances);
    }
    if (!app_models_.empty()) {
      std::string apps;
      for (const auto& m : app_models_) apps += (apps.empty() ? "" : ",") + m;
      out += str(out.empty() ? "" : ", ", "app_models='", apps, "'");
    }
    if (!off_.apps.empty()) {
      std::string apps;
      for (const auto a : off_.apps) apps += str(apps.empty() ? "" : ",", a);
      out += str(out.empty() ? "" : ", ", "offline_apps='", apps, "', offline_util=", off_.max_utilisation);
    }
    if (off_.tolerance != OfflineServing{}.tolerance) {
      out += str(out.empty() ? "" : ", ", "interference_tol=", off_.tolerance);
    }
    if (off_.floor_ms != OfflineServing{}.floor_ms) {
      out += str(out.empty() ? "" : ", ", "interference_floor_ms=", off_.floor_ms);
    }
    if (off_.skip_warmup) out += str(out.empty() ? "" : ", ", "warmup_batch=true");
    out += batch_cap_arg(out.empty());
    return out.empty() ? "infaas" : "infaas(" + out + ")";
  }

  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions& actions) override {
    if (tag == kTickTag) {
      tick(view, actions);
      return;
    }
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
    // An index past the workload's applications would leave every query online, silently.
    for (const auto a : off_.apps) {
      if (view.num_apps() >= 0 && a >= view.num_apps()) {
        throw ValueError(str("infaas: offline_apps has application index ", a, " but the workload has ",
                             view.num_apps(), " application(s): 0..", view.num_apps() - 1));
      }
    }
    app_task_ = tasks_by_app(variants);
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
    const std::size_t n = static_cast<std::size_t>(view.num_workers());
    busy_ns_.assign(n, 0), util_.assign(n, 0.0), slow_.assign(n, 0), offline_batch_.assign(n, 0);
    busy_task_.assign(n, {}), task_share_.assign(n, {});
    goals_.clear(), down_since_.clear(), needs_vm_.clear(), p99_.clear(), pending_.clear(), added_instance_.clear();
    warmed_.clear();
    if (ms_.period_s > 0) {
      meter_.reset(static_cast<std::int32_t>(std::ceil(ms_.window_s / ms_.period_s - 1e-9)), ms_.period_s);
    }
    if (ms_.period_s > 0 || !off_.apps.empty()) actions.set_timer(view.now() + tick_ns(), kTickTag);
  }

 protected:
  Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    if (query.app >= static_cast<std::int32_t>(goals_.size())) {
      goals_.resize(static_cast<std::size_t>(query.app) + 1), down_since_.resize(goals_.size(), -1);
    }
    AppGoals& g = goals_[query.app];
    const double slo_ms = static_cast<double>(query.deadline - query.arrival) / 1e6;
    g.slo_ms = g.seen ? std::min(g.slo_ms, slo_ms) : slo_ms;
    g.accuracy = std::max(g.accuracy, static_cast<double>(query.accuracy_floor));
    g.seen = true;
    g.task = task_of(query.app);
    if (ms_.period_s > 0) meter_.add(query.app, query.size);
    Requirements req;
    req.task = g.task;
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
    // Instances marked Overloaded by earlier queries are not retried by getVariant: the one that
    // starts this query soonest stands in for the retry loop's.
    if (ms_.period_s > 0 && overloaded.variant < 0 && c.kind != ChoiceKind::Active) {
      for (VariantId v = 0; v < store_->num_variants(); ++v) {
        const Variant& var = store_->variant(v);
        if (var.accuracy < req.accuracy || var.max_batch() < req.batch || var.task != req.task) continue;
        for (const Instance& i : store_->instances(v)) {
          // Interfered instances too: they still serve, more slowly (Sec. 4.1 avoids them when it
          // can; a cold start instead would load a new instance for every slowed batch).
          if ((i.state != VariantState::Overloaded && i.state != VariantState::Interfered) ||
              !store_->alive(i.worker)) {
            continue;
          }
          const Nanos wait = wait_ns(i.worker, view);
          if (overloaded.variant < 0 || wait < overloaded_wait) {
            overloaded = {ChoiceKind::Active, v, i.worker, {}}, overloaded_wait = wait;
          }
        }
      }
    }
    // With the periodic Model-Autoscaler the scaling decisions are its own: a query that has an
    // (overloaded) instance joins it; only a query with none places a new one (a cold start).
    if (overloaded.variant >= 0 && c.kind != ChoiceKind::Active &&
        (ms_.period_s > 0 || (c.worker >= 0 && backlog_ns(c.worker) > 0 &&
                              (load_pending(c.worker, view) || !upgrade(c.variant, c.worker, view))))) {
      c = overloaded;
    }
    if (c.kind == ChoiceKind::None) return {-1, -1, c.reason};
    // A new instance on a worker whose machine has no room for it (co-location, machines:): on
    // another instance of the machines of its hardware that has room, else the overloaded one.
    // On such machines a cold start is always a new instance: loading onto a worker that holds
    // another variant would hold up that variant's queries for the load time.
    if (c.kind == ChoiceKind::Inactive && c.worker >= 0 &&
        (!fits(view, c.worker, c.variant) || colocates(view, store_->variant(c.variant).hardware))) {
      const WorkerId added = place_instance(c.variant, view, actions);
      if (added >= 0) {
        store_->load(c.variant, added);
        last_chosen_[added][c.variant] = view.now();
        return {added, model_[c.variant], {}};
      }
      if (overloaded.variant >= 0) {
        c = overloaded;
      } else if (!fits(view, c.worker, c.variant)) {
        return {-1, -1,
                str("no machine of '", store_->variant(c.variant).hardware, "' has room for variant '",
                    store_->variant(c.variant).name, "'")};
      }
    }
    WorkerId w = c.worker;
    if (w < 0) {  // every worker of its hardware holds it already (none Active): the least loaded
      for (const Instance& i : store_->instances(c.variant)) {
        if (w < 0 || wait_ns(i.worker, view) < wait_ns(w, view)) w = i.worker;
      }
    }
    if (w < 0) return {-1, -1, str("variant '", store_->variant(c.variant).name, "' has no worker")};
    if (ms_.best_fit && c.kind == ChoiceKind::Active) w = best_fit(c.variant, w, query, view);
    if (store_->state(c.variant, w) == VariantState::Inactive) store_->load(c.variant, w);
    last_chosen_[w][c.variant] = view.now();
    return {w, model_[c.variant], {}};
  }

  void changed(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) override {
    sync_workers(view);
    complete_pending(w, view, actions);
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
    const auto pending = pending_.find(w);  // a variant the Model-Autoscaler placed here
    if (pending != pending_.end()) {
      if (!view.has_model(w, model_[pending->second.variant])) {
        actions.load_model(w, model_[pending->second.variant]);
        return;
      }
      complete_pending(w, view, actions);  // before the unloads below: it joins the store
      if (!view.is_idle(w)) return;
    }
    if (ms_.period_s > 0) {  // the Model-Autoscaler decided: unload what the store dropped, once unused
      for (const ModelId m : std::vector<ModelId>(view.models(w))) {
        const auto it = by_pair_.find(key(view.hardware(w), m));
        if (it == by_pair_.end() || queued_for(w, m) > 0) continue;
        if (store_->state(it->second, w) != VariantState::Inactive) continue;
        if (view.models(w).size() == 1 && !view.central_queue().empty()) continue;  // offline work waits
        actions.unload_model(w, m);
        warmed_.erase(worker_model(w, m));
        last_chosen_[w].erase(it->second);
      }
      // An instance this policy added on a machine that is left with nothing stops (its memory
      // is free for the next one); a VM's first instance stays (it stands for the VM).
      if (view.models(w).empty() && view.worker_queue(w).empty() && added_instance_.contains(w)) {
        actions.remove_worker(w);
        store_->remove_worker(w);
        added_instance_.erase(w);
        last_chosen_[w].clear();
      }
      return;
    }
    for (const ModelId m : std::vector<ModelId>(view.models(w))) {
      if (view.models(w).size() <= 1) break;
      const auto it = by_pair_.find(key(view.hardware(w), m));
      if (it == by_pair_.end() || queued_for(w, m) > 0) continue;
      const VariantId v = it->second;
      const auto chosen = last_chosen_[w].find(v);
      const Nanos since = chosen == last_chosen_[w].end() ? view.now() : view.now() - chosen->second;
      if (since < seconds_to_nanos(store_->variant(v).load_s, "load_s")) continue;
      actions.unload_model(w, m);
      warmed_.erase(worker_model(w, m));
      store_->unload(v, w);
      last_chosen_[w].erase(v);
    }
  }

 private:
  static constexpr std::int32_t kMaxRetries = 8;
  static constexpr std::int64_t kTickTag = -2;

  bool is_offline(const sched::Query& query) const override {
    return std::find(off_.apps.begin(), off_.apps.end(), query.app) != off_.apps.end();
  }

  Nanos tick_ns() const { return seconds_to_nanos(ms_.period_s > 0 ? ms_.period_s : 1.0, "autoscale_s"); }

  void grow_monitor(const sched::ClusterView& view) {
    const auto n = static_cast<std::size_t>(view.num_workers());
    if (busy_ns_.size() >= n) return;
    busy_ns_.resize(n, 0), util_.resize(n, 0.0), slow_.resize(n, 0), offline_batch_.resize(n, 0);
    busy_task_.resize(n), task_share_.resize(n);
  }

  void batch_done(const sched::BatchDone& done, const sched::ClusterView& view) override {
    grow_monitor(view);
    busy_ns_[done.worker] += done.measured();
    if (const auto v = by_pair_.find(key(view.hardware(done.worker), done.model)); v != by_pair_.end()) {
      busy_task_[done.worker][store_->variant(v->second).task] += done.measured();
    }
    const bool first = warmed_.insert(worker_model(done.worker, done.model)).second;
    if (offline_batch_[done.worker]) {
      offline_batch_[done.worker] = 0;
      return;
    }
    if (first && off_.skip_warmup) {  // a real executor's load and warm-up: not the profile's
      slow_[done.worker] = 0;
      return;
    }
    // Sec. 4.1: an instance slower than its profile (by more than the tolerance, and the floor)
    // is Interfered until a batch runs within it again; offline work pauses on that worker meanwhile.
    const auto profiled = static_cast<double>(profiled_p99(view, done.worker, done.model, done.items));
    const auto measured = static_cast<double>(done.measured());
    const bool slow = measured > profiled * (1.0 + off_.tolerance) && measured - profiled > off_.floor_ms * 1e6;
    slow_[done.worker] = slow ? 1 : 0;
    const auto it = by_pair_.find(key(view.hardware(done.worker), done.model));
    if (it == by_pair_.end() || !store_->alive(done.worker)) return;
    const VariantState state = store_->state(it->second, done.worker);
    if (slow && state == VariantState::Active) store_->set_state(it->second, done.worker, VariantState::Interfered);
    if (!slow && state == VariantState::Interfered) store_->set_state(it->second, done.worker, VariantState::Active);
  }

  // The profile's p99 latency of a batch (what monitoring compares a measured batch with, so
  // that sampled service times within the profile's own spread do not count as interference).
  Nanos profiled_p99(const sched::ClusterView& view, WorkerId w, ModelId m, std::int64_t items) {
    const std::int64_t k = key(view.hardware(w), m);
    auto it = p99_.find(k);
    if (it == p99_.end()) {
      it = p99_.emplace(k, view.profile().decision_table(view.hardware(w), m, profile::Statistic::P99)).first;
    }
    const auto& table = it->second;  // indexed by batch
    return items >= 1 && items < static_cast<std::int64_t>(table.size()) ? table[items]
                                                                         : view.predicted_latency(w, m, items);
  }

  // The monitoring period: utilisation, the Model-Autoscaler, offline work on idle workers.
  void tick(const sched::ClusterView& view, sched::Actions& actions) {
    sync_workers(view);
    grow_monitor(view);
    const double period = static_cast<double>(tick_ns());
    for (std::size_t w = 0; w < busy_ns_.size(); ++w) {
      task_share_[w].clear();
      for (const auto& [task, ns] : busy_task_[w]) task_share_[w][task] = static_cast<double>(ns) / period;
      busy_task_[w].clear();
      util_[w] = static_cast<double>(busy_ns_[w]) / period;
      busy_ns_[w] = 0;
      slow_[w] = 0;
    }
    if (ms_.period_s > 0) {
      meter_.close_period();
      autoscale_models(view, actions);
    }
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (store_->alive(w) && view.is_idle(w) && view.worker_queue(w).empty()) serve(w, view, actions);
    }
    actions.set_timer(view.now() + tick_ns(), kTickTag);
  }

  void serve_offline(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) override {
    grow_monitor(view);
    if (!store_->alive(w) || util_[w] > off_.max_utilisation || slow_[w]) return;  // throttled
    const auto& central = view.central_queue();
    QueryId first = -1;
    for (const QueryId id : central) {
      if (is_offline(view.query(id))) {
        first = id;
        break;
      }
    }
    if (first < 0) return;
    const sched::Query head = view.query(first);
    const std::string& task = task_of(head.app);
    ModelId model = -1;  // a variant of its task the worker holds that meets the oldest query's floor
    for (const ModelId m : view.models(w)) {
      const auto it = by_pair_.find(key(view.hardware(w), m));
      if (it == by_pair_.end() || store_->variant(it->second).task != task) continue;
      if (store_->variant(it->second).accuracy >= head.accuracy_floor && view.max_batch(w, m) >= head.size) {
        model = m;
        break;
      }
    }
    // A worker holding nothing loads the cheapest variant the offline query accepts; with
    // applications naming their models, so does one holding none of the query's that accepts it
    // (another application's variant would get inputs it does not take).
    if (model < 0) {
      if (view.models(w).empty() || !app_models_.empty()) load_for_offline(w, head, view, actions);
      return;
    }
    const double accuracy = store_->variant(by_pair_.at(key(view.hardware(w), model))).accuracy;
    // Utilisation budget: this period's busy time plus the batch stays within max_utilisation
    // (one query at least on a worker idle so far this period).
    const auto budget = static_cast<Nanos>(off_.max_utilisation * static_cast<double>(tick_ns())) - busy_ns_[w];
    const std::int64_t cap = view.max_batch(w, model);
    std::vector<QueryId> batch;
    std::int64_t items = 0;
    for (const QueryId id : central) {
      const sched::Query q = view.query(id);
      if (!is_offline(q) || q.accuracy_floor > accuracy || task_of(q.app) != task) continue;
      if (items + q.size > cap) break;
      const bool fits = view.predicted_latency(w, model, items + q.size) <= budget;
      if (!fits && !(batch.empty() && busy_ns_[w] == 0)) break;
      batch.push_back(id);
      items += q.size;
      if (!fits) break;
    }
    if (batch.empty()) return;
    offline_batch_[w] = 1;
    actions.dispatch(w, model, batch);
  }

  void load_for_offline(WorkerId w, const sched::Query& head, const sched::ClusterView& view, sched::Actions& actions) {
    VariantId best = -1;
    for (VariantId v = 0; v < store_->num_variants(); ++v) {
      const Variant& var = store_->variant(v);
      if (var.hardware != store_->worker_hardware(w) || var.accuracy < head.accuracy_floor ||
          var.max_batch() < head.size || var.task != task_of(head.app) || view.has_model(w, model_[v])) {
        continue;
      }
      const Variant* b = best < 0 ? nullptr : &store_->variant(best);
      if (!b || var.cost_per_s < b->cost_per_s || (var.cost_per_s == b->cost_per_s && var.memory_mb < b->memory_mb)) {
        best = v;
      }
    }
    if (best < 0) return;
    actions.load_model(w, model_[best]);
    store_->load(best, w);
    last_chosen_[w][best] = view.now();
  }

  // Sec. 4.2.2, per application: scale up at once, scale down once proposed for T_v.
  void autoscale_models(const sched::ClusterView& view, sched::Actions& actions) {
    needs_vm_.clear();
    std::erase_if(pending_, [this](const auto& entry) { return !store_->alive(entry.first); });
    // The load counts the queued backlog too (drained over one window): arrivals the variants
    // could not keep up with are demand the window's average has not caught up with yet.
    std::vector<std::int64_t> backlog(goals_.size(), 0);
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      for (const QueryId id : view.worker_queue(w)) {
        const sched::Query q = view.query(id);
        if (q.app >= 0 && q.app < static_cast<std::int32_t>(backlog.size())) backlog[q.app] += q.size;
      }
    }
    for (std::int32_t app = 0; app < static_cast<std::int32_t>(goals_.size()); ++app) {
      if (!goals_[app].seen || std::find(off_.apps.begin(), off_.apps.end(), app) != off_.apps.end()) continue;
      // While the application's loads are under way (applications pinned to their own models
      // scale independently; model-less ones share every load), only more replicas may be
      // added: the pending instances count as running, so a spike's backlog gets its next
      // instance without waiting for the first to load (the paper loads from a thread pool).
      std::vector<VariantId> pending_for;
      for (const auto& [w, entry] : pending_) {
        if (app_models_.empty() || entry.app == app) pending_for.push_back(entry.variant);
      }
      const bool busy = !pending_for.empty();
      if (busy && !ms_.concurrent_loads) continue;
      std::vector<VariantId> ids;
      // With fast_up, up fast and down slow: a spike counts from its first period (the window's
      // average sees a fifth of it after one period); scaling down follows the window's average.
      const double load = std::max(meter_.qps(app), ms_.fast_up ? meter_.last_qps(app) : 0.0) +
                          static_cast<double>(backlog[app]) / ms_.window_s;
      AppGoals goals = goals_[app];
      if (ms_.q_wait) goals.q_slo_ms = goals.slo_ms / 2;
      ScalingProblem problem = application_problem(*store_, goals, load, ms_.slack, ids, availability(goals.task));
      if (ids.empty()) continue;
      add_instance_slots(problem, ids, view);
      for (const VariantId v : pending_for) count_pending(problem, ids, v);
      ScalingPlan plan = plan_scaling(problem, solve_);
      if (plan.status == "needs_vm") needs_vm_ = wanted_hardware(problem, ids);
      if (!plan.feasible) continue;
      if (busy) {  // only the plan's replicas of running variants go ahead now
        plan = while_loading(problem, plan);
        if (!plan.replicas_only) continue;
      }
      const bool change = std::any_of(plan.delta.begin(), plan.delta.end(), [](std::int64_t d) { return d != 0; });
      if (!change) {
        down_since_[app] = -1;
        continue;
      }
      if (plan.scale_down) {
        if (down_since_[app] < 0) down_since_[app] = view.now();
        double wait_s = 0;
        for (std::size_t i = 0; i < ids.size(); ++i) {
          if (plan.delta[i] < 0) wait_s = std::max(wait_s, problem.load_s[i]);
        }
        if (view.now() - down_since_[app] < seconds_to_nanos(wait_s, "load_s")) continue;
      }
      down_since_[app] = -1;
      apply_plan(app, ids, plan, view, actions);
    }
  }

  // Whether worker w holds an instance of a variant of another task (application).
  bool holds_other_task(WorkerId w, const std::string& task) const {
    for (VariantId v = 0; v < store_->num_variants(); ++v) {
      if (store_->variant(v).task != task && store_->state(v, w) != VariantState::Inactive) return true;
    }
    return false;
  }

  // A pending instance of v counts as running in the problem (and in its hardware's capacity).
  static void count_pending(ScalingProblem& problem, const std::vector<VariantId>& ids, VariantId v) {
    const auto at = std::find(ids.begin(), ids.end(), v);
    if (at == ids.end()) return;
    const auto i = static_cast<std::size_t>(at - ids.begin());
    ++problem.running[i];
    for (std::size_t t = 0; t < problem.capacity.size(); ++t) {
      if (problem.requirement[t][i] <= 0) continue;
      double held = 0;
      for (std::size_t j = 0; j < ids.size(); ++j)
        held += problem.requirement[t][j] * static_cast<double>(problem.running[j]);
      problem.capacity[t] = std::max(problem.capacity[t], held);
    }
  }

  // By worker: the share of the last period not spent on other tasks' (applications') variants;
  // 0 on a worker holding another task's instance (constraint (3) across applications: that
  // instance takes the worker's one slot, however idle it was last period).
  std::vector<double> availability(const std::string& task) const {
    std::vector<double> out(std::max<std::size_t>(task_share_.size(), store_->num_workers()), 1.0);
    for (std::size_t w = 0; w < task_share_.size(); ++w) {
      for (const auto& [t, share] : task_share_[w]) {
        if (t != task) out[w] -= share;
      }
      out[w] = std::clamp(out[w], 0.0, 1.0);
    }
    if (app_models_.empty()) return out;  // model-less: one task
    // A worker that also holds this task's instance keeps its measured share: zeroing it would
    // scale the held instance's capacity to nothing, and the greedy would "upgrade" to a variant
    // it does not hold every period (a load each time), then back.
    std::vector<char> holds_own(out.size(), 0);
    for (VariantId v = 0; v < store_->num_variants(); ++v) {
      if (store_->variant(v).task != task) continue;
      for (const Instance& i : store_->instances(v)) {
        if (i.worker >= 0 && i.worker < static_cast<WorkerId>(out.size())) holds_own[i.worker] = 1;
      }
    }
    for (VariantId v = 0; v < store_->num_variants(); ++v) {
      if (store_->variant(v).task == task) continue;
      for (const Instance& i : store_->instances(v)) {
        if (i.worker >= 0 && i.worker < static_cast<WorkerId>(out.size()) && !holds_own[i.worker]) {
          out[i.worker] = 0.0;
        }
      }
    }
    return out;
  }

  // The hardware of the fastest candidate meeting the SLO (where the VM-Autoscaler should add).
  std::string wanted_hardware(const ScalingProblem& problem, const std::vector<VariantId>& ids) const {
    std::int32_t best = -1;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (problem.latency_ms[i] > problem.slo_ms) continue;
      if (best < 0 || problem.saturation_qps[i] > problem.saturation_qps[best]) best = static_cast<std::int32_t>(i);
    }
    return best < 0 ? std::string() : store_->variant(ids[best]).hardware;
  }

  // Removals without a replacement act at once on the store; a new instance is loaded first
  // (the worker loads it when idle) and joins the store once ready, when the instances it
  // replaces leave and their queued queries move to it (the paper loads asynchronously).
  void apply_plan(std::int32_t app, const std::vector<VariantId>& ids, const ScalingPlan& plan,
                  const sched::ClusterView& view, sched::Actions& actions) {
    std::vector<std::pair<VariantId, WorkerId>> removed;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (std::int64_t k = plan.delta[i]; k < 0; ++k) {
        WorkerId victim = -1;  // the least utilised holder carries the least
        for (const Instance& inst : store_->instances(ids[i])) {
          if (std::find(removed.begin(), removed.end(), std::pair{ids[i], inst.worker}) != removed.end()) continue;
          if (victim < 0 || store_->utilisation(inst.worker) < store_->utilisation(victim)) victim = inst.worker;
        }
        if (victim >= 0) removed.emplace_back(ids[i], victim);
      }
    }
    bool placed = false;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      for (std::int64_t k = 0; k < plan.delta[i]; ++k) {
        // The least-utilised live worker of its hardware without it, one holding no other candidate
        // (or only ones being replaced) first; none with a load pending.
        WorkerId target = -1;
        bool target_free = false;
        for (const auto& [util, w] : store_->workers_of(store_->variant(ids[i]).hardware)) {
          if (store_->state(ids[i], w) != VariantState::Inactive || pending_.contains(w)) continue;
          // Another application's worker is not a target (its load would block that worker).
          if (!app_models_.empty() && holds_other_task(w, store_->variant(ids[i]).task)) continue;
          bool free = true;
          for (const VariantId u : ids) {
            const bool leaving = std::find(removed.begin(), removed.end(), std::pair{u, w}) != removed.end();
            free = free && (store_->state(u, w) == VariantState::Inactive || leaving);
          }
          if (target < 0 || (free && !target_free)) target = w, target_free = free;
          if (target_free) break;
        }
        if (target >= 0 && !fits(view, target, ids[i])) target = -1, target_free = false;
        // On machines that host several instances, a new instance loads beside the running ones
        // (add_instance: the others keep serving) unless an idle, free worker can take it.
        const bool reuse = target >= 0 && target_free && view.is_idle(target) && view.worker_queue(target).empty();
        if (!reuse && colocates(view, store_->variant(ids[i]).hardware)) {
          const WorkerId added = place_instance(ids[i], view, actions);
          if (added >= 0) {
            pending_[added] = Pending{ids[i], placed ? std::vector<std::pair<VariantId, WorkerId>>{} : removed, app};
            placed = true;
            continue;
          }
        }
        if (target < 0) break;
        Pending p{ids[i], placed ? std::vector<std::pair<VariantId, WorkerId>>{} : removed, app};
        placed = true;
        pending_[target] = std::move(p);
        if (view.is_idle(target) && view.worker_queue(target).empty()) serve(target, view, actions);
      }
    }
    const bool wanted = std::any_of(plan.delta.begin(), plan.delta.end(), [](std::int64_t d) { return d > 0; });
    if (placed) return;
    if (wanted) {
      // A replacement no worker can take (an upgrade to a hardware type whose workers are all
      // taken): the old instances keep serving, and the VM-Autoscaler is asked for a worker of
      // that type (Sec. 4.2.2 (d)). Removing them would leave the application nothing to run,
      // and its next query would load a variant on some busy worker, every period.
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (plan.delta[i] > 0) needs_vm_ = store_->variant(ids[i]).hardware;
      }
      return;
    }
    for (const auto& [u, w] : removed) store_->unload(u, w);
  }

  // A pending instance whose variant is now loaded joins the store; what it replaces leaves.
  void complete_pending(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) {
    const auto it = pending_.find(w);
    if (it == pending_.end() || !view.has_model(w, model_[it->second.variant])) return;
    if (view.status(w) == sched::WorkerStatus::Starting) return;  // an added instance still loading
    const Pending p = std::move(it->second);
    pending_.erase(it);
    store_->load(p.variant, w);
    last_chosen_[w][p.variant] = view.now();
    for (const auto& [u, uw] : p.replaced) {
      if (store_->alive(uw) && store_->state(u, uw) != VariantState::Inactive) store_->unload(u, uw);
      if (store_->alive(uw)) migrate(uw, model_[u], w, model_[p.variant], view, actions);
    }
  }

  // Online bin packing (Sec. 4.2.3, best fit): the Active instance of v with the most queued work
  // that still finishes the query by its deadline, so that the other instances drain and can be
  // scaled down; `chosen` (getVariant's least-loaded one) when none is busier.
  WorkerId best_fit(VariantId v, WorkerId chosen, const sched::Query& query, const sched::ClusterView& view) const {
    WorkerId best = chosen;
    Nanos best_wait = wait_ns(chosen, view);
    for (const Instance& i : store_->instances(v)) {
      if (i.state != VariantState::Active || !store_->alive(i.worker)) continue;
      const Nanos wait = wait_ns(i.worker, view);
      if (wait <= best_wait) continue;
      if (view.now() + wait + view.predicted_latency(i.worker, model_[v], query.size) > query.deadline) continue;
      best = i.worker, best_wait = wait;
    }
    return best;
  }

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

  // Co-location (machines: with modelled memory; colocation.hpp).
  bool colocates(const sched::ClusterView& view, const std::string& hardware) const {
    return infaas::colocates(view, view.profile().hardware_index(hardware));
  }
  bool live_machine(const sched::ClusterView& view, sched::MachineId m) const {
    for (const WorkerId w : view.instances(m)) {
      if (view.status(w) != sched::WorkerStatus::Stopped && store_->alive(w)) return true;
    }
    return false;
  }
  // Free memory of machine m, the loads this policy asked for there and not started included.
  double room(const sched::ClusterView& view, sched::MachineId m) const {
    double pending = 0;
    for (const WorkerId w : view.instances(m)) {
      const auto p = pending_.find(w);
      if (view.status(w) != sched::WorkerStatus::Stopped && p != pending_.end() &&
          !view.has_model(w, model_[p->second.variant])) {
        pending += store_->variant(p->second.variant).memory_mb;
      }
    }
    return machine_room(view, m, pending);
  }
  // Instances on machine m holding a model or starting (the CPU instance slots taken).
  std::int64_t running_instances(const sched::ClusterView& view, sched::MachineId m) const {
    std::int64_t n = 0;
    for (const WorkerId w : view.instances(m)) {
      if (view.status(w) == sched::WorkerStatus::Stopped) continue;
      n += (!view.models(w).empty() || view.status(w) == sched::WorkerStatus::Starting || pending_.contains(w)) ? 1 : 0;
    }
    return n;
  }
  // How many more instances of a variant of `memory_mb` machine m takes (constraint (3)).
  std::int64_t slots(const sched::ClusterView& view, sched::MachineId m, const std::string& hardware,
                     double memory_mb) const {
    const double free = room(view, m);
    std::int64_t n = std::isinf(free) ? 0 : static_cast<std::int64_t>(std::floor(free / std::max(1.0, memory_mb)));
    if (hardware == "cpu") {
      const std::int64_t cores = machine_type(view, m).cores;
      if (cores > 0)
        n = std::min(n, std::max<std::int64_t>(0, cores / ms_.instance_cores - running_instances(view, m)));
    } else {
      n = std::min(n, std::max<std::int64_t>(0, ms_.accel_instances - running_instances(view, m)));
    }
    return std::max<std::int64_t>(0, n);
  }
  // Whether worker w's machine has room for variant v beside what it holds.
  bool fits(const sched::ClusterView& view, WorkerId w, VariantId v) const {
    if (view.has_model(w, model_[v])) return true;
    return room(view, view.machine(w)) >= store_->variant(v).memory_mb;
  }
  // A new instance of v on the live machine of its hardware with the most instance slots for it
  // (then the fewest instances, then the lowest id); -1 when none has room.
  WorkerId place_instance(VariantId v, const sched::ClusterView& view, sched::Actions& actions) {
    const Variant& var = store_->variant(v);
    const auto hw = view.profile().hardware_index(var.hardware);
    sched::MachineId best = -1;
    std::int64_t best_slots = 0, best_n = 0;
    for (sched::MachineId m = 0; m < view.num_machines(); ++m) {
      const auto on = view.instances(m);
      if (on.empty() || view.hardware(on.front()) != hw || !live_machine(view, m)) continue;
      if (view.status(on.front()) == sched::WorkerStatus::Starting) continue;  // a VM still booting
      const std::int64_t n = slots(view, m, var.hardware, var.memory_mb);
      if (n <= 0) continue;
      const std::int64_t count = running_instances(view, m);
      if (best < 0 || n > best_slots || (n == best_slots && count < best_n)) best = m, best_slots = n, best_n = count;
    }
    if (best < 0) return -1;
    const ModelId model = model_[v];
    const WorkerId w = actions.add_instance(best, std::span<const ModelId>(&model, 1));
    sync_workers(view);
    grow_monitor(view);
    added_instance_.insert(w);
    return w;
  }
  // Constraint (3) with co-location: an application's capacity on a hardware type also counts the
  // instances its machines can still take (memory, and cores on a CPU VM) for its largest candidate.
  void add_instance_slots(ScalingProblem& problem, const std::vector<VariantId>& ids,
                          const sched::ClusterView& view) const {
    for (std::size_t t = 0; t < problem.resource_types.size(); ++t) {
      const std::string& type = problem.resource_types[t];
      const std::string hardware = type.substr(0, type.rfind(" workers"));
      if (!colocates(view, hardware)) continue;
      double memory = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (problem.requirement[t][i] > 0) memory = std::max(memory, store_->variant(ids[i]).memory_mb);
      }
      const auto hw = view.profile().hardware_index(hardware);
      std::int64_t extra = 0;
      for (sched::MachineId m = 0; m < view.num_machines(); ++m) {
        const auto on = view.instances(m);
        if (on.empty() || view.hardware(on.front()) != hw || !live_machine(view, m)) continue;
        if (view.status(on.front()) == sched::WorkerStatus::Starting) continue;  // a VM still booting
        extra += slots(view, m, hardware, memory);
      }
      problem.capacity[t] += static_cast<double>(extra);
    }
  }

  void worker_stopped(WorkerId w, const sched::ClusterView& view) override {
    sync_workers(view);
    if (store_->alive(w)) store_->remove_worker(w);
    last_chosen_[w].clear();
    pending_.erase(w);
    added_instance_.erase(w);
  }

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
      if (hosts_others(view, w)) continue;  // a VM goes down with its last instance
      actions.remove_worker(w);
      added_instance_.erase(w);
      store_->remove_worker(w);
      last_chosen_[w].clear();
    }
    if (starting_ >= 0) return;             // one start at a time
    std::int64_t live = 0, overloaded = 0;  // live: machines (a VM hosting several instances is one)
    std::unordered_set<sched::MachineId> live_machines;
    std::unordered_map<sched::HardwareId, std::pair<std::int64_t, std::int64_t>> busy;  // hw -> (over, all)
    std::unordered_map<sched::HardwareId, std::int64_t> overloaded_on;
    std::unordered_map<sched::HardwareId, std::pair<std::int64_t, std::int64_t>> interfered;  // hw -> (hit, all)
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!store_->alive(w)) continue;
      live_machines.insert(view.machine(w));
      auto& [over, all] = busy[view.hardware(w)];
      ++all;
      const double util = std::min(1.0, static_cast<double>(wait_ns(w, view)) / static_cast<double>(poll));
      if (view.status(w) != sched::WorkerStatus::Starting && util > vm_.threshold) ++over;
      bool has_overloaded = false;
      for (const auto& [v, _] : last_chosen_[w]) {
        const VariantState state = store_->state(v, w);
        has_overloaded |= state == VariantState::Overloaded;
        if (state == VariantState::Inactive) continue;
        auto& [hit, all_instances] = interfered[view.hardware(w)];
        ++all_instances, hit += state == VariantState::Interfered ? 1 : 0;
      }
      if (has_overloaded) ++overloaded, ++overloaded_on[view.hardware(w)];
    }
    live = static_cast<std::int64_t>(live_machines.size());
    if (live >= vm_.max_workers) return;
    sched::HardwareId target = -1;
    for (const auto& [hw, counts] : busy) {  // rule 1: a hardware type over the threshold everywhere
      if (counts.first == counts.second && (target < 0 || hw < target)) target = hw;
    }
    for (const auto& [hw, counts] : interfered) {  // rule 2: every instance on a hardware type Interfered
      if (target < 0 && counts.second > 0 && counts.first == counts.second) target = hw;
    }
    if (target < 0 && static_cast<double>(overloaded) > vm_.threshold * static_cast<double>(live)) {  // rule 3
      std::int64_t most = 0;
      for (const auto& [hw, n] : overloaded_on) {
        if (n > most || (n == most && hw < target)) target = hw, most = n;
      }
    }
    if (target < 0 && !needs_vm_.empty()) target = view.profile().hardware_index(needs_vm_);  // Sec. 4.2.2 (d)
    if (target < 0) return;
    starting_ = actions.add_worker(view.profile().hardware()[target], {}, seconds_to_nanos(vm_.startup_s, "startup_s"));
    sync_workers(view);
  }
  static std::int64_t key(std::int32_t hw, ModelId m) { return (static_cast<std::int64_t>(hw) << 32) | m; }
  static std::int64_t worker_model(WorkerId w, ModelId m) { return (static_cast<std::int64_t>(w) << 32) | m; }

  // With app_models, each application is a registered model of its own (Sec. 6.1: queries name
  // their model architecture): a variant whose profile model matches application i's entry (the
  // name, or a prefix ending in '*') gets the task "app<i>", and the application's queries search
  // that task only. Variants matching no entry keep the profile's one task.
  std::vector<std::string> tasks_by_app(std::vector<Variant>& variants) const {
    std::vector<std::string> tasks;
    for (std::size_t a = 0; a < app_models_.size(); ++a) {
      const std::string& entry = app_models_[a];
      // Applications naming the same models share their variants: one task, the first's (else
      // the last would take every variant and leave the others none).
      const auto same = std::find(app_models_.begin(), app_models_.begin() + static_cast<std::ptrdiff_t>(a), entry);
      if (same != app_models_.begin() + static_cast<std::ptrdiff_t>(a)) {
        tasks.push_back(tasks[static_cast<std::size_t>(same - app_models_.begin())]);
        continue;
      }
      const bool prefix = !entry.empty() && entry.back() == '*';
      const std::string stem = prefix ? entry.substr(0, entry.size() - 1) : entry;
      const std::string task = str("app", a);
      bool any = false;
      for (Variant& v : variants) {
        if (prefix ? v.architecture.starts_with(stem) : v.architecture == stem) v.task = task, any = true;
      }
      if (!any) throw ValueError(str("infaas: app_models[", a, "]='", entry, "' matches no model of the profile"));
      tasks.push_back(task);
    }
    return tasks;
  }
  const std::string& task_of(std::int32_t app) const {
    static const std::string shared = kProfileTask;
    return app >= 0 && app < static_cast<std::int32_t>(app_task_.size()) ? app_task_[app] : shared;
  }

  std::vector<std::string> models_;      // the registered models queries may use (empty: all)
  std::vector<std::string> app_models_;  // by application: its model (or model prefix '*'); empty: model-less
  std::vector<std::string> app_task_;    // by application: the task its variants carry
  VmScaling vm_;
  ModelScaling ms_;
  ScalingSolver solve_;  // the Model-Autoscaler's solver (ms_.solver)
  OfflineServing off_;
  LoadMeter meter_;
  std::vector<AppGoals> goals_;      // by application
  std::vector<Nanos> down_since_;    // by application: since when a scale-down is proposed (-1: none)
  std::string needs_vm_;             // hardware the Model-Autoscaler could not fit (empty: none)
  std::vector<Nanos> busy_ns_;       // by worker: busy time in the current period
  std::vector<double> util_;         // by worker: busy share of the last period
  std::vector<char> slow_;           // by worker: its last online batch exceeded the profile
  std::vector<char> offline_batch_;  // by worker: its running batch is offline work
  std::vector<std::unordered_map<std::string, Nanos>> busy_task_;    // by worker: this period's busy time by task
  std::vector<std::unordered_map<std::string, double>> task_share_;  // by worker: last period's busy share by task
  std::unordered_map<std::int64_t, std::vector<Nanos>> p99_;         // (hardware, model) -> p99 by batch
  struct Pending {
    VariantId variant = -1;
    std::vector<std::pair<VariantId, WorkerId>> replaced;  // leave the store once it is loaded
    std::int32_t app = -1;                                 // the application it scales
  };
  std::unordered_map<WorkerId, Pending> pending_;  // by worker: the instance being loaded there
  std::unordered_set<WorkerId> added_instance_;    // instances this policy added with add_instance
  std::unordered_set<std::int64_t> warmed_;        // (worker, model) pairs past their first batch since a load
  WorkerId initial_ = 0, starting_ = -1;
  std::vector<Nanos> last_active_;  // by worker: last time it was busy or had queued work
  std::unique_ptr<MetadataStore> store_;
  std::vector<ModelId> model_;                                     // by variant
  std::unordered_map<std::int64_t, VariantId> by_pair_;            // (hardware, model) -> variant
  std::vector<std::unordered_map<VariantId, Nanos>> last_chosen_;  // by worker
};

}  // namespace

std::shared_ptr<sched::Scheduler> make_infaas_scheduler(std::vector<std::string> models, VmScaling vm,
                                                        ModelScaling scaling, OfflineServing offline,
                                                        std::vector<std::string> app_models, BatchCap batch_cap) {
  return std::make_shared<InfaasScheduler>(std::move(models), vm, scaling, std::move(offline), std::move(app_models),
                                           batch_cap);
}

}  // namespace servelab::infaas
