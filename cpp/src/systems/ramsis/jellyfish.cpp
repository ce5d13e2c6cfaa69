// Jellyfish+ and the in-order central queue it shares with ModelSwitching (see jellyfish.hpp).
#include "servelab/systems/ramsis/jellyfish.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/sched/policy_helpers.hpp"

namespace servelab::ramsis {

using sched::ClusterView;
using sched::Query;
using sched::QueryId;

namespace {

// Accuracy order with unknown (NaN) accuracies last.
bool more_accurate(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a > b;
}

// A query fits model `m` on `worker` when its accuracy floor is met; sizes are checked by the caller.
bool accurate_enough(const ClusterView& view, ModelId m, const Query& q) {
  if (q.accuracy_floor <= 0) return true;
  const double acc = view.profile().accuracy(m);
  return !std::isnan(acc) && acc >= q.accuracy_floor;
}

std::string format_loads(const std::vector<double>& loads) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < loads.size(); ++i) out << (i ? ", " : "") << loads[i];
  out << "]";
  return out.str();
}

}  // namespace

BatchRule adaptive_batch_rule(std::span<const ModelCurve> models, Nanos slo, double rate_per_worker_qps,
                              double headroom) {
  if (models.empty()) throw ValueError("adaptive batching: no model to choose from (empty model set)");
  if (slo <= 0) throw ValueError(str("adaptive batching: slo=", slo, " ns must be positive"));
  if (!(rate_per_worker_qps >= 0)) {
    throw ValueError(str("adaptive batching: rate_per_worker_qps=", rate_per_worker_qps, " must be >= 0"));
  }
  const double need = headroom * rate_per_worker_qps;  // queries/s each worker must sustain
  BatchRule best;
  double best_accuracy = std::numeric_limits<double>::quiet_NaN();
  for (const ModelCurve& c : models) {
    std::int64_t largest = 0;
    for (std::size_t i = 0; i < c.latency.size(); ++i) {
      const auto b = static_cast<std::int64_t>(i + 1);
      const Nanos lat = c.latency[i];
      if (2 * lat > slo) continue;
      const double throughput = static_cast<double>(b) * kNanosPerSecond / static_cast<double>(lat);
      if (throughput >= need) largest = b;
    }
    if (largest == 0) continue;
    if (best.model < 0 || more_accurate(c.accuracy, best_accuracy)) {
      best = {c.model, largest};
      best_accuracy = c.accuracy;
    }
  }
  if (best.model >= 0) return best;
  // Nothing sustains the load within half the SLO: the fastest model, batches as large as it goes.
  const ModelCurve* fastest = nullptr;
  for (const ModelCurve& c : models) {
    if (c.latency.empty()) continue;
    if (fastest == nullptr || c.latency[0] < fastest->latency[0]) fastest = &c;
  }
  if (fastest == nullptr) throw ValueError("adaptive batching: no model has a latency profile");
  return {fastest->model, static_cast<std::int64_t>(fastest->latency.size())};
}

std::vector<ModelCurve> model_curves(const ClusterView& view, WorkerId worker) {
  std::vector<ModelCurve> out;
  for (const ModelId m : view.models(worker)) {
    const std::int64_t max = view.max_batch(worker, m);
    if (max < 1) continue;
    ModelCurve c{m, view.profile().accuracy(m), {}};
    c.latency.reserve(static_cast<std::size_t>(max));
    for (std::int64_t b = 1; b <= max; ++b) c.latency.push_back(view.predicted_latency(worker, m, b));
    out.push_back(std::move(c));
  }
  return out;
}

ModelCurve profile_curve(const profile::Profile& profile, sched::HardwareId hardware, ModelId model,
                         profile::Statistic statistic) {
  ModelCurve c{model, profile.accuracy(model), profile.decision_table(hardware, model, statistic)};
  c.latency.erase(c.latency.begin());  // entry 0 repeats batch 1's
  return c;
}

LoadGranularScheduler::LoadGranularScheduler(LoadGranularOptions options)
    : options_(std::move(options)), monitor_(options_.window) {
  if (!options_.loads_qps.empty()) validate_load_grid(options_.loads_qps, "loads");
  if (!(options_.fixed_load_qps >= 0) || !std::isfinite(options_.fixed_load_qps)) {
    throw ValueError(str("load_qps=", options_.fixed_load_qps, " must be a finite load >= 0 (0: estimate it)"));
  }
  if (options_.slo < 0) throw ValueError(str("slo=", options_.slo, " ns must be >= 0 (0: from the queries)"));
}

std::string LoadGranularScheduler::describe_options() const {
  return str("loads=", format_loads(options_.loads_qps), ", load_qps=", options_.fixed_load_qps,
             ", slo_ms=", nanos_to_millis(options_.slo), ", window_ms=", nanos_to_millis(options_.window));
}

void LoadGranularScheduler::on_start(const ClusterView& view, sched::Actions&) {
  monitor_.reset(view.now());
  slo_ = options_.slo;
  curves_.assign(static_cast<std::size_t>(view.num_workers()), std::nullopt);
  rules_.assign(static_cast<std::size_t>(view.num_workers()), {});
  count_live_workers(view);
}

void LoadGranularScheduler::count_live_workers(const ClusterView& view) {
  std::int32_t live = 0;
  for (WorkerId w = 0; w < view.num_workers(); ++w) live += sched::is_live(view, w) ? 1 : 0;
  if (live != live_workers_) {
    live_workers_ = live;
    for (auto& per_worker : rules_) per_worker.clear();  // the per-worker load changed
  }
}

void LoadGranularScheduler::on_arrival(const Query& query, const ClusterView& view, sched::Actions& actions) {
  monitor_.record(query.arrival);
  if (slo_ == 0) slo_ = std::max<Nanos>(1, query.deadline - query.arrival);
  actions.enqueue(query.id);
  drain(view, actions);
}

void LoadGranularScheduler::on_batch_done(const sched::BatchDone&, const ClusterView& view, sched::Actions& actions) {
  drain(view, actions);
}

void LoadGranularScheduler::on_worker_ready(WorkerId, const ClusterView& view, sched::Actions& actions) {
  if (static_cast<std::size_t>(view.num_workers()) != curves_.size()) {
    curves_.resize(static_cast<std::size_t>(view.num_workers()));
    rules_.resize(static_cast<std::size_t>(view.num_workers()));
  }
  count_live_workers(view);
  drain(view, actions);
}

const std::vector<ModelCurve>& LoadGranularScheduler::curves_for(const ClusterView& view, WorkerId worker) {
  auto& slot = curves_[static_cast<std::size_t>(worker)];
  if (!slot) slot = model_curves(view, worker);
  return *slot;
}

const BatchRule& LoadGranularScheduler::rule_for(const ClusterView& view, WorkerId worker) {
  const auto& curves = curves_for(view, worker);
  const std::int32_t k = std::max<std::int32_t>(1, live_workers_);
  const double load = options_.fixed_load_qps > 0 ? options_.fixed_load_qps : monitor_.rate_qps(view.now());
  const auto& grid = options_.loads_qps;
  if (grid.empty() || options_.fixed_load_qps > 0) {
    scratch_rule_ = rule(curves, std::isfinite(load) ? load : std::numeric_limits<double>::max(), slo_, k);
    return scratch_rule_;
  }
  const std::size_t g = grid_index(grid, load);
  auto& per_worker = rules_[static_cast<std::size_t>(worker)];
  if (per_worker.size() != grid.size()) per_worker.assign(grid.size(), std::nullopt);
  if (!per_worker[g]) per_worker[g] = rule(curves, grid[g], slo_, k);
  return *per_worker[g];
}

void LoadGranularScheduler::drain(const ClusterView& view, sched::Actions& actions) {
  while (!view.central_queue().empty() && !view.idle_workers().empty()) {
    if (!serve_head(view, actions)) return;
  }
}

// Dispatches a batch starting at the head of the central queue to the lowest-id idle worker that
// can serve the head (with its rule's model when that covers the head, else the first model that
// does), or drops the head when no live worker at all can; false when the head has to wait.
bool LoadGranularScheduler::serve_head(const ClusterView& view, sched::Actions& actions) {
  const Query head = view.query(view.central_queue().front());
  WorkerId worker = -1;
  ModelId model = -1;
  std::int64_t cap = 0;
  const auto idle = view.idle_workers();
  WorkerId first = *std::min_element(idle.begin(), idle.end());
  const auto try_worker = [&](WorkerId w) {
    if (curves_for(view, w).empty()) return false;
    const BatchRule& r = rule_for(view, w);
    if (head.size <= view.max_batch(w, r.model) && accurate_enough(view, r.model, head)) {
      worker = w, model = r.model, cap = r.max_batch;
      return true;
    }
    const ModelId m = sched::pick_model(view, w, head);
    if (m < 0) return false;
    worker = w, model = m, cap = 1;
    return true;
  };
  if (!try_worker(first)) {
    std::vector<WorkerId> sorted(idle.begin(), idle.end());
    std::sort(sorted.begin(), sorted.end());
    for (const WorkerId w : sorted) {
      if (w != first && try_worker(w)) break;
    }
  }
  if (worker < 0) {
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (sched::is_live(view, w) && sched::pick_model(view, w, head) >= 0) return false;  // it waits
    }
    actions.drop(head.id, "no worker can serve it");
    return true;
  }
  const std::int64_t limit = view.max_batch(worker, model);
  batch_.clear();
  std::int64_t items = 0;
  for (const QueryId id : view.central_queue()) {
    if (static_cast<std::int64_t>(batch_.size()) >= std::max<std::int64_t>(cap, 1)) break;
    const Query q = id == head.id ? head : view.query(id);
    if (items + q.size > limit || !accurate_enough(view, model, q)) break;  // in order: stop at a misfit
    batch_.push_back(id);
    items += q.size;
  }
  actions.dispatch(worker, model, batch_);
  return true;
}

namespace {

class JellyfishPlus final : public LoadGranularScheduler {
 public:
  using LoadGranularScheduler::LoadGranularScheduler;
  std::string describe() const override { return str("jellyfish(", describe_options(), ")"); }

 protected:
  BatchRule rule(std::span<const ModelCurve> curves, double load_qps, Nanos slo, std::int32_t workers) override {
    return adaptive_batch_rule(curves, slo, load_qps / workers, kJellyfishHeadroom);
  }
};

}  // namespace

std::shared_ptr<sched::Scheduler> make_jellyfish(LoadGranularOptions options) {
  return std::make_shared<JellyfishPlus>(std::move(options));
}

}  // namespace servelab::ramsis

namespace servelab::ramsis {

std::vector<ParamSpec> load_granular_params() {
  return {
      ParamSpec{"loads",
                ParamType::FloatList,
                std::vector<double>{},
                "loads (queries/s, ascending) the per-load choices are computed for; the estimate selects the smallest "
                "one at or above it ([]: use the estimate as is)",
                0.0,
                {},
                true,
                {}},
      ParamSpec::non_negative("load_qps", 0.0,
                              "a known, fixed load in queries/s instead of the monitor's estimate (0: "
                              "estimate it)"),
      ParamSpec::non_negative("slo_ms", 0.0, "the latency SLO the choices use, ms (0: the first query's)"),
      ParamSpec::positive("window_ms", 500.0, "the load monitor's moving-average window, ms"),
  };
}

LoadGranularOptions load_granular_options(const Params& p) {
  LoadGranularOptions o;
  o.loads_qps = p.get_floats("loads");
  o.fixed_load_qps = p.get_float("load_qps");
  o.slo = millis_to_nanos(p.get_float("slo_ms"), "slo_ms");
  o.window = millis_to_nanos(p.get_float("window_ms"), "window_ms");
  return o;
}

void register_jellyfish(sched::SchedulerRegistry& registry) {
  registry.add({"jellyfish",
                "Jellyfish+ (RAMSIS baseline): per load, the most accurate model sustaining it with 5% headroom at a "
                "batch within half the SLO; idle workers take batches from an in-order central queue.",
                load_granular_params(), [](const Params& p) { return make_jellyfish(load_granular_options(p)); }});
}

}  // namespace servelab::ramsis
