// The INFaaS paper's baselines (Table 5) as registered policies: Clipper+ (pre-loaded fixed
// variants) and SM+ (one fixed variant scaled horizontally). They share INFaaS's serving shape
// (VariantQueues) so that the comparison differs only in the decisions.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/systems/infaas/scheduler.hpp"
#include "variant_queues.hpp"

namespace servelab::infaas {
namespace {

using sched::ModelId;
using sched::WorkerId;

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

std::shared_ptr<sched::Scheduler> make_clipper_plus() { return std::make_shared<ClipperPlus>(); }

}  // namespace servelab::infaas
