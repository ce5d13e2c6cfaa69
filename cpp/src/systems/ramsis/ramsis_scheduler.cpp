// The RAMSIS online scheduler (scheduler.hpp).
//
// Queries go to the live workers that can serve them by the load balancer the policy of the
// estimated load was generated for: round-robin (each gets every K-th query, the paper's choice and
// the default) or shortest-queue-first (Appendix I: the worker with the fewest queued queries; ties
// go to an idle worker, then to the next in round-robin order, so equal queues share the load).
// They wait in that worker's queue, earliest deadline first (ties: the older query). When a worker
// is idle with a non-empty queue, the policy of the estimated load maps (queue length, slack of its
// earliest deadline) to (model, batch) and the batch of the earliest-deadline queries starts at once.
#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/sched/policy_helpers.hpp"
#include "servelab/systems/ramsis/latency_table.hpp"
#include "servelab/systems/ramsis/policy_set.hpp"
#include "servelab/systems/ramsis/scheduler.hpp"

namespace servelab::ramsis {
namespace {

using sched::ClusterView;
using sched::ModelId;
using sched::Query;
using sched::QueryId;
using sched::WorkerId;

class Ramsis final : public sched::Scheduler {
 public:
  Ramsis(std::shared_ptr<const PolicySet> policies, PolicyGenerator generate, RamsisOptions options)
      : policies_(std::move(policies)),
        generate_(std::move(generate)),
        options_(std::move(options)),
        monitor_(options_.window) {
    if (!(options_.fixed_load_qps >= 0) || !std::isfinite(options_.fixed_load_qps)) {
      throw ValueError(str("load_qps=", options_.fixed_load_qps, " must be a finite load >= 0 (0: estimate it)"));
    }
    if (policies_) policies_->validate();
  }

  std::string describe() const override {
    return str("ramsis(policies='", options_.source, "', load_qps=", options_.fixed_load_qps,
               ", window_ms=", nanos_to_millis(options_.window), ")");
  }

  void on_start(const ClusterView& view, sched::Actions&) override {
    monitor_.reset(view.now());
    queues_.assign(static_cast<std::size_t>(view.num_workers()), {});
    next_ = 0;
    if (generate_) policies_.reset();  // generated for each run's own cluster and SLO
    if (policies_) resolve_models(view);
  }

  void on_arrival(const Query& query, const ClusterView& view, sched::Actions& actions) override {
    monitor_.record(query.arrival);
    if (!policies_) {
      policies_ = generate_(view, std::max<Nanos>(1, query.deadline - query.arrival));
      if (!policies_) throw RuntimeError("ramsis: the policy generator returned no policy set");
      policies_->validate();
      resolve_models(view);
    }
    const WorkerId w = any_shortest_queue_ && shortest_queue_[policy_index(view)] ? shortest_worker(query, view)
                                                                                  : next_worker(query, view);
    if (w < 0) {
      actions.drop(query.id, "no worker can serve it");
      return;
    }
    actions.enqueue_to_worker(w, query.id);
    auto& q = queues_[static_cast<std::size_t>(w)];
    // Keep the queue in deadline order; with one SLO arrivals come in that order already.
    auto pos = q.end();
    while (pos != q.begin() && std::prev(pos)->deadline > query.deadline) --pos;
    q.insert(pos, Entry{query.deadline, query.id, query.size, query.accuracy_floor});
    decide(w, view, actions);
  }

  void on_batch_done(const sched::BatchDone& done, const ClusterView& view, sched::Actions& actions) override {
    decide(done.worker, view, actions);
  }

  void on_worker_ready(WorkerId worker, const ClusterView& view, sched::Actions& actions) override {
    if (static_cast<std::size_t>(view.num_workers()) > queues_.size()) {
      queues_.resize(static_cast<std::size_t>(view.num_workers()));
      fastest_.resize(queues_.size(), -2);
    }
    decide(worker, view, actions);
  }

 private:
  struct Entry {
    Nanos deadline;
    QueryId id;
    std::int32_t size;
    float accuracy_floor;
  };

  void resolve_models(const ClusterView& view) {
    ids_.clear();
    for (const auto& name : policies_->models) ids_.push_back(view.profile().model_index(name));
    fastest_.assign(static_cast<std::size_t>(view.num_workers()), -2);
    shortest_queue_.clear();
    for (const WorkerPolicy& p : policies_->policies) {
      shortest_queue_.push_back(parse_balancer(p.balancer) == Balancer::ShortestQueue ? 1 : 0);
    }
    any_shortest_queue_ = std::find(shortest_queue_.begin(), shortest_queue_.end(), 1) != shortest_queue_.end();
  }

  double current_load(const ClusterView& view) {
    const double load = options_.fixed_load_qps > 0 ? options_.fixed_load_qps : monitor_.rate_qps(view.now());
    return std::isfinite(load) ? load : std::numeric_limits<double>::max();
  }
  std::size_t policy_index(const ClusterView& view) {
    return static_cast<std::size_t>(policies_->lookup_index(current_load(view)));
  }

  static bool can_serve(const Query& query, const ClusterView& view, WorkerId w) {
    if (!sched::is_live(view, w)) return false;
    if (query.size == 1 && query.accuracy_floor <= 0 && !view.models(w).empty()) return true;  // the common case
    return sched::pick_model(view, w, query) >= 0;
  }

  // Shortest-queue-first: the live worker able to serve the query with the fewest queued queries;
  // ties: an idle one first, then the first in round-robin order from the pointer, which moves past
  // the chosen worker. -1 if no worker can serve it.
  WorkerId shortest_worker(const Query& query, const ClusterView& view) {
    const WorkerId k = view.num_workers();
    WorkerId best = -1;
    std::size_t best_len = 0;
    bool best_idle = false;
    for (WorkerId tried = 0, w = next_ < k ? next_ : 0; tried < k; ++tried, w = w + 1 == k ? 0 : w + 1) {
      if (!can_serve(query, view, w)) continue;
      const std::size_t len = queues_[static_cast<std::size_t>(w)].size();
      const bool idle = view.is_idle(w);
      if (best < 0 || len < best_len || (len == best_len && idle && !best_idle)) {
        best = w;
        best_len = len;
        best_idle = idle;
      }
    }
    if (best >= 0) next_ = best + 1 == k ? 0 : best + 1;
    return best;
  }

  // The next live worker in round-robin order that has a model for the query; -1 if none has.
  WorkerId next_worker(const Query& query, const ClusterView& view) {
    const WorkerId k = view.num_workers();
    for (WorkerId tried = 0; tried < k; ++tried) {
      const WorkerId w = next_;
      next_ = next_ + 1 == k ? 0 : next_ + 1;
      if (can_serve(query, view, w)) return w;
    }
    return -1;
  }

  // The worker's lowest-latency model at batch 1 (-1: none): what it serves with when the policy's
  // model is not loaded on it.
  ModelId fastest_model(WorkerId w, const ClusterView& view) {
    auto& slot = fastest_[static_cast<std::size_t>(w)];
    if (slot == -2) {
      slot = -1;
      Nanos best = 0;
      for (const ModelId m : view.models(w)) {
        if (view.max_batch(w, m) < 1) continue;
        const Nanos lat = view.predicted_latency(w, m, 1);
        if (slot < 0 || lat < best) slot = m, best = lat;
      }
    }
    return slot;
  }

  static bool fits(const ClusterView& view, WorkerId w, ModelId m, const Entry& e, std::int64_t items) {
    if (items + e.size > view.max_batch(w, m)) return false;
    if (e.accuracy_floor <= 0) return true;
    const double acc = view.profile().accuracy(m);
    return !std::isnan(acc) && acc >= e.accuracy_floor;
  }

  void decide(WorkerId w, const ClusterView& view, sched::Actions& actions) {
    auto& q = queues_[static_cast<std::size_t>(w)];
    if (!view.is_idle(w)) return;
    ModelId m = -1;
    std::int32_t want = 0;
    while (!q.empty()) {
      const WorkerPolicy& policy = policies_->policies[policy_index(view)];
      const auto n = static_cast<std::int32_t>(std::min<std::size_t>(q.size(), std::size_t{1} << 30));
      const Action a = policy.decide(n, q.front().deadline - view.now());
      m = a.model >= 0 ? ids_[static_cast<std::size_t>(a.model)] : -1;
      want = a.model >= 0 ? a.batch : n;  // a wait action with queries queued: serve them all
      if (m < 0 || !view.has_model(w, m)) m = fastest_model(w, view);
      if (m >= 0 && fits(view, w, m, q.front(), 0)) break;
      // The head needs another model (its size, its accuracy floor): it goes alone.
      m = sched::pick_model(view, w, view.query(q.front().id));
      want = 1;
      if (m >= 0) break;
      actions.drop(q.front().id, "no model on its worker can serve it");
      q.pop_front();
    }
    if (q.empty()) return;
    batch_.clear();
    std::int64_t items = 0;
    for (const Entry& e : q) {
      if (static_cast<std::int32_t>(batch_.size()) >= std::max(want, 1)) break;
      if (!fits(view, w, m, e, items)) break;  // earliest deadlines first: stop at the first misfit
      batch_.push_back(e.id);
      items += e.size;
    }
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(batch_.size()));
    actions.dispatch(w, m, batch_);
  }

  std::shared_ptr<const PolicySet> policies_;
  PolicyGenerator generate_;
  RamsisOptions options_;
  LoadMonitor monitor_;
  std::vector<std::deque<Entry>> queues_;  // per worker, earliest deadline first
  std::vector<ModelId> ids_;               // policy model index -> profile model index
  std::vector<ModelId> fastest_;           // per worker; -2: not computed yet
  std::vector<char> shortest_queue_;       // per policy: balanced shortest-queue-first (else round-robin)
  bool any_shortest_queue_ = false;
  WorkerId next_ = 0;  // the round-robin pointer
  std::vector<QueryId> batch_;
};

}  // namespace

std::shared_ptr<sched::Scheduler> make_ramsis(std::shared_ptr<const PolicySet> policies, RamsisOptions options) {
  if (!policies) throw ValueError("ramsis: no policy set given");
  if (options.source.empty()) options.source = "<PolicySet>";
  return std::make_shared<Ramsis>(std::move(policies), nullptr, std::move(options));
}

std::shared_ptr<sched::Scheduler> make_ramsis(PolicyGenerator generate, RamsisOptions options) {
  if (!generate) throw ValueError("ramsis: no policy generator given");
  return std::make_shared<Ramsis>(nullptr, std::move(generate), std::move(options));
}

PolicyGenerator cluster_policy_generator(std::vector<double> loads, Balancer balancer) {
  if (!loads.empty()) {
    std::sort(loads.begin(), loads.end());
    validate_load_grid(loads, "loads");
  }
  return [loads, balancer](const ClusterView& view, Nanos slo) -> std::shared_ptr<const PolicySet> {
    WorkerId w = 0;
    while (w < view.num_workers() && !sched::is_live(view, w)) ++w;
    if (w == view.num_workers()) throw ValueError("ramsis: no live worker to generate policies for");
    LatencyTable table;
    std::int64_t batches = std::numeric_limits<std::int64_t>::max();
    for (const ModelId m : view.models(w)) {
      if (view.max_batch(w, m) >= 1) batches = std::min(batches, view.max_batch(w, m));
    }
    if (batches == std::numeric_limits<std::int64_t>::max()) {
      throw ValueError(str("ramsis: worker ", w, " has no model with a latency profile"));
    }
    const auto max_queue = static_cast<std::int32_t>(std::min<std::int64_t>(32, batches));
    double peak_qps = 0;  // one worker's best throughput, over models and batches
    for (const ModelId m : view.models(w)) {
      if (view.max_batch(w, m) < 1) continue;
      const double acc = view.profile().accuracy(m);
      table.models.push_back(view.profile().models()[static_cast<std::size_t>(m)]);
      table.accuracy.push_back(std::isnan(acc) ? 0.0 : acc);  // unknown accuracy earns nothing
      auto& row = table.latency.emplace_back();
      for (std::int64_t b = 1; b <= max_queue; ++b) {
        row.push_back(view.predicted_latency(w, m, b));
        peak_qps = std::max(peak_qps, static_cast<double>(b) * kNanosPerSecond / static_cast<double>(row.back()));
      }
    }
    PolicySetOptions options;
    options.generate.mdp.slo = slo;
    options.generate.mdp.workers = view.num_workers();
    options.generate.mdp.max_queue = max_queue;
    options.generate.mdp.balancer = balancer;
    options.loads_qps = loads;
    if (options.loads_qps.empty()) {
      const double peak = peak_qps * view.num_workers();
      for (int i = 1; i <= 10; ++i) options.loads_qps.push_back(peak * i / 10);
    }
    options.max_accuracy_gap = 0;  // the grid as given
    return std::make_shared<const PolicySet>(generate_policy_set(table, options));
  };
}

std::shared_ptr<const PolicySet> load_policy_set(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw RuntimeError(str("policies='", path, "': cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  return std::make_shared<const PolicySet>(any_policy_set_from_json(text.str()));
}

}  // namespace servelab::ramsis

namespace servelab::ramsis {

void register_ramsis(sched::SchedulerRegistry& registry) {
  registry.add(
      {"ramsis",
       "RAMSIS: per-worker EDF queues fed by the policies' load balancer (round-robin or shortest-queue-first); "
       "at each decision the MDP policy of the estimated load picks (model, batch) from (queue length, "
       "earliest slack).",
       {ParamSpec{"policies",
                  ParamType::String,
                  std::string{},
                  "a policy set JSON file (servelab.ramsis policy sets save to it); '': generate one for "
                  "the cluster at the first arrival, for that query's SLO",
                  {},
                  {},
                  false,
                  {}},
        ParamSpec{"loads",
                  ParamType::FloatList,
                  std::vector<double>{},
                  "without a file: the loads (queries/s) to generate policies for ([]: 10 up to the "
                  "cluster's peak throughput)",
                  0.0,
                  {},
                  true,
                  {}},
        ParamSpec::non_negative("load_qps", 0.0,
                                "a known, fixed load in queries/s instead of the monitor's estimate (0: "
                                "estimate it)"),
        ParamSpec::positive("window_ms", 500.0, "the load monitor's moving-average window, ms"),
        ParamSpec{"balancer",
                  ParamType::String,
                  std::string{"round_robin"},
                  "without a file: the load balancer the generated policies model and the scheduler uses "
                  "(a file's policies name their own)",
                  {},
                  {},
                  false,
                  {"round_robin", "shortest_queue"}}},
       [](const Params& p) {
         RamsisOptions options;
         options.fixed_load_qps = p.get_float("load_qps");
         options.window = millis_to_nanos(p.get_float("window_ms"), "window_ms");
         options.source = p.get_string("policies");
         if (options.source.empty()) {
           return make_ramsis(cluster_policy_generator(p.get_floats("loads"), parse_balancer(p.get_string("balancer"))),
                              options);
         }
         return make_ramsis(load_policy_set(options.source), options);
       }});
}

}  // namespace servelab::ramsis
