// The INFaaS paper's baselines (Table 5) as registered policies: Clipper+ (pre-loaded fixed
// variants) and SM+ (fixed variants scaled horizontally). They share INFaaS's serving shape
// (VariantQueues) so that the comparison differs only in the decisions.
//
// Both take `app_models`: the variant (profile model) the developer pre-selected for each
// application, by application index (Sec. 6.1: "Baselines statically selected GPU variants for
// popular models, and CPU variants for the rest"). An application beyond the list falls back to
// the single-variant behaviour of Sec. 6.2 (Clipper+: any pre-loaded model that meets its
// accuracy floor; SM+: the first worker's first model).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "colocation.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/systems/infaas/scheduler.hpp"
#include "variant_queues.hpp"

namespace servelab::infaas {
namespace {

using sched::ModelId;
using sched::WorkerId;

// The profile's model index of each pinned name (a KeyError names an unknown one).
std::vector<ModelId> resolve(const std::vector<std::string>& names, const sched::ClusterView& view) {
  std::vector<ModelId> out;
  for (const auto& n : names) out.push_back(view.profile().model_index(n));
  return out;
}

bool live(const sched::ClusterView& view, WorkerId w) {
  const auto s = view.status(w);
  return s != sched::WorkerStatus::Stopped && s != sched::WorkerStatus::Starting;
}

// Clipper+ (Table 5): the variants pre-loaded on the workers, fixed (never loaded or unloaded).
// A pinned application's queries go to the worker holding its variant that can start them
// soonest; an unpinned one's to the worker that can start it soonest among those holding a
// model that meets its accuracy floor and serves its size (any model when none meets the floor).
class ClipperPlus final : public VariantQueues {
 public:
  ClipperPlus(std::vector<std::string> app_models, BatchCap batch_cap)
      : VariantQueues(batch_cap), names_(std::move(app_models)) {}

  std::string describe() const override {
    const std::string args = (names_.empty() ? "" : "app_models='" + joined() + "'") + batch_cap_arg(names_.empty());
    return args.empty() ? "clipper_plus" : "clipper_plus(" + args + ")";
  }

  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    VariantQueues::on_start(view, actions);
    pinned_ = resolve(names_, view);
    for (std::size_t a = 0; a < pinned_.size(); ++a) {
      bool held = false;
      for (WorkerId w = 0; w < view.num_workers() && !held; ++w) held = live(view, w) && view.has_model(w, pinned_[a]);
      if (!held) throw ValueError(str("clipper_plus: app_models[", a, "]='", names_[a], "' is loaded on no worker"));
    }
  }

 protected:
  Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions&) override {
    const bool pinned = query.app >= 0 && query.app < static_cast<std::int32_t>(pinned_.size());
    Assignment best, fallback;
    Nanos best_wait = 0, fallback_wait = 0;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!live(view, w)) continue;
      const Nanos wait = wait_ns(w, view);
      for (const ModelId m : view.models(w)) {
        if (query.size > view.max_batch(w, m) || (pinned && m != pinned_[query.app])) continue;
        if (fallback.worker < 0 || wait < fallback_wait) fallback = {w, m, {}}, fallback_wait = wait;
        const double acc = view.profile().accuracy(m);
        if (!pinned && !std::isnan(acc) && acc < query.accuracy_floor) continue;
        if (best.worker < 0 || wait < best_wait) best = {w, m, {}}, best_wait = wait;
        break;  // the worker's first loaded model that fits
      }
    }
    if (best.worker < 0) best = fallback;  // no pre-loaded model meets the floor: the closest serves
    if (best.worker < 0) {
      best.reason = pinned ? str("the pinned variant '", names_[query.app], "' does not serve a batch of ", query.size)
                           : str("no pre-loaded variant serves a batch of ", query.size);
    }
    return best;
  }

 private:
  std::string joined() const {
    std::string out;
    for (const auto& n : names_) out += (out.empty() ? "" : ",") + n;
    return out;
  }
  std::vector<std::string> names_;
  std::vector<ModelId> pinned_;
};

// SM+ (Table 5's SageMaker-like baseline): each application has one fixed variant (its pinned
// model, else the model first loaded on the lowest-numbered worker) on the hardware of the first
// worker that holds it (the developer's choice), scaled horizontally only. A query goes to the
// holder that can start it soonest; when even that one would miss its deadline, the variant is
// replicated onto an idle worker of its hardware without it (model-horizontal scaling: the load
// happens there first), else a worker of that hardware is started with it (VM scaling,
// `startup_s`, at most `max_workers` live workers, one start at a time). Workers it started are
// stopped after `idle_s` idle.
class SmPlus final : public VariantQueues {
 public:
  SmPlus(double startup_s, double idle_s, std::int64_t max_workers, std::vector<std::string> app_models,
         BatchCap batch_cap)
      : VariantQueues(batch_cap),
        startup_(seconds_to_nanos(startup_s, "startup_s")),
        idle_(seconds_to_nanos(idle_s, "idle_s")),
        max_workers_(max_workers),
        names_(std::move(app_models)) {}

  std::string describe() const override {
    std::string list;
    for (const auto& n : names_) list += (list.empty() ? "" : ",") + n;
    return str("sm_plus(startup_s=", static_cast<double>(startup_) / 1e9, ", idle_s=", static_cast<double>(idle_) / 1e9,
               ", max_workers=", max_workers_, list.empty() ? "" : ", app_models='" + list + "'", batch_cap_arg(false),
               ")");
  }

  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    VariantQueues::on_start(view, actions);
    fixed_.clear();
    ModelId first = -1;
    for (WorkerId w = 0; w < view.num_workers() && first < 0; ++w) {
      if (view.status(w) != sched::WorkerStatus::Stopped && !view.models(w).empty()) first = view.models(w).front();
    }
    std::vector<ModelId> models = resolve(names_, view);
    if (first >= 0) models.push_back(first);  // the default, for applications beyond the list
    if (models.empty()) throw ValueError("sm_plus: no worker starts with a model: load its fixed variant on one");
    for (std::size_t a = 0; a < models.size(); ++a) {
      Fixed f;
      f.model = models[a];
      for (WorkerId w = 0; w < view.num_workers() && f.hardware < 0; ++w) {
        if (view.status(w) != sched::WorkerStatus::Stopped && view.has_model(w, f.model)) f.hardware = view.hardware(w);
      }
      if (f.hardware < 0)
        throw ValueError(str("sm_plus: app_models[", a, "]='", names_[a], "' is loaded on no worker"));
      fixed_.push_back(std::move(f));
    }
    initial_ = view.num_workers();
    idle_since_.assign(static_cast<std::size_t>(view.num_workers()), view.now());
    starting_ = -1;
  }

  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions& actions) override {
    const auto w = static_cast<WorkerId>(tag);
    if (w < initial_ || w >= view.num_workers() || !view.is_idle(w) || !view.worker_queue(w).empty()) return;
    if (view.status(w) == sched::WorkerStatus::Stopped) return;
    if (view.now() - idle_since_[w] >= idle_ && !hosts_others(view, w)) actions.remove_worker(w);
  }

 protected:
  Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    idle_since_.resize(static_cast<std::size_t>(view.num_workers()), view.now());
    if (starting_ >= 0 && view.status(starting_) != sched::WorkerStatus::Starting) starting_ = -1;
    const bool listed = query.app >= 0 && query.app < static_cast<std::int32_t>(names_.size());
    Fixed& f = fixed_[listed ? static_cast<std::size_t>(query.app) : fixed_.size() - 1];
    WorkerId best = -1;
    Nanos best_wait = 0;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (view.status(w) == sched::WorkerStatus::Stopped || !holds(f, w, view)) continue;
      const Nanos wait = wait_ns(w, view);
      if (best < 0 || wait < best_wait) best = w, best_wait = wait;
    }
    const std::int64_t cap = best >= 0 ? view.max_batch(best, f.model) : 0;
    if (best < 0 || query.size > cap) return {-1, -1, str("the fixed variant does not serve a batch of ", query.size)};
    if (view.now() + best_wait + view.predicted_latency(best, f.model, query.size) <= query.deadline) {
      return {best, f.model, {}};
    }
    // On machines that host several instances (machines:), a replica is a new instance beside
    // the running ones (add_instance, loading while they serve) on the machine of the variant's
    // hardware with the most free memory that holds it; one load per variant at a time.
    if (colocates(view, f.hardware)) {
      if (std::any_of(f.replicas.begin(), f.replicas.end(),
                      [&](WorkerId r) { return view.status(r) == sched::WorkerStatus::Starting; })) {
        return {best, f.model, {}};
      }
      const double need = view.profile().memory_mb(f.hardware, f.model).value_or(0.0);
      sched::MachineId target = -1;
      double most = 0;
      for (sched::MachineId m = 0; m < view.num_machines(); ++m) {
        const auto on = view.instances(m);
        if (on.empty() || view.hardware(on.front()) != f.hardware || !machine_live(view, m)) continue;
        if (view.status(on.front()) == sched::WorkerStatus::Starting) continue;  // a VM still starting
        const double room = machine_room(view, m);
        // The same bound as INFaaS's (constraint (3)): 4 cores per CPU instance, 4 per accelerator.
        const bool cpu = view.profile().hardware()[f.hardware] == "cpu";
        if (live_instances(view, m) >= instance_limit(view, m, cpu, 4, 4)) continue;
        if (room >= need && (target < 0 || room > most)) target = m, most = room;
      }
      if (target >= 0) {
        const ModelId models[] = {f.model};
        const WorkerId w = actions.add_instance(target, models);
        f.replicas.push_back(w);
        return {w, f.model, {}};
      }
    } else {
      // Replicate onto an idle worker of the variant's hardware (serve() loads it there).
      for (WorkerId w = 0; w < view.num_workers(); ++w) {
        if (view.status(w) == sched::WorkerStatus::Stopped || view.status(w) == sched::WorkerStatus::Starting) continue;
        if (view.hardware(w) == f.hardware && view.is_idle(w) && !holds(f, w, view) && view.worker_queue(w).empty()) {
          f.replicas.push_back(w);
          return {w, f.model, {}};
        }
      }
    }
    if (starting_ < 0 && live_workers(view) < max_workers_) {  // VM scaling: one start at a time
      const ModelId models[] = {f.model};
      starting_ = actions.add_worker(view.profile().hardware()[f.hardware], models, startup_);
      f.replicas.push_back(starting_);
    }
    return {best, f.model, {}};
  }

  void before_serving(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) override {
    if (view.worker_queue(w).empty()) {
      idle_since_.resize(static_cast<std::size_t>(view.num_workers()), view.now());
      idle_since_[w] = view.now();
      if (w >= initial_) actions.set_timer(view.now() + idle_, w);
    }
  }

 private:
  struct Fixed {
    ModelId model = -1;
    sched::HardwareId hardware = -1;
    std::vector<WorkerId> replicas;  // workers it replicated the variant onto (loading or loaded)
  };

  static bool holds(const Fixed& f, WorkerId w, const sched::ClusterView& view) {
    if (view.hardware(w) != f.hardware) return false;  // the same model elsewhere is another variant
    return view.has_model(w, f.model) || std::find(f.replicas.begin(), f.replicas.end(), w) != f.replicas.end();
  }
  // Live machines: VMs (a worker without a declared machine is one).
  static std::int64_t live_workers(const sched::ClusterView& view) { return live_machines(view); }

  Nanos startup_, idle_;
  std::int64_t max_workers_;
  std::vector<std::string> names_;
  std::vector<Fixed> fixed_;  // by application; the last one is the default
  WorkerId initial_ = 0, starting_ = -1;
  std::vector<Nanos> idle_since_;
};

}  // namespace

std::shared_ptr<sched::Scheduler> make_sm_plus(double startup_s, double idle_s, std::int64_t max_workers,
                                               std::vector<std::string> app_models, BatchCap batch_cap) {
  return std::make_shared<SmPlus>(startup_s, idle_s, max_workers, std::move(app_models), batch_cap);
}

std::shared_ptr<sched::Scheduler> make_clipper_plus(std::vector<std::string> app_models, BatchCap batch_cap) {
  return std::make_shared<ClipperPlus>(std::move(app_models), batch_cap);
}

}  // namespace servelab::infaas
