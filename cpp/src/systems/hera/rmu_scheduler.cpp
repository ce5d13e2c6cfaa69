#include "servelab/systems/hera/rmu_scheduler.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <unordered_map>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/params.hpp"
#include "servelab/core/time.hpp"
#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/hera/rmu.hpp"

namespace servelab::hera {
namespace {

using sched::Actions;
using sched::BatchDone;
using sched::ClusterView;
using sched::ModelId;
using sched::Query;
using sched::QueryId;
using sched::WorkerId;
using sched::WorkerStatus;

constexpr std::int64_t kMonitorTag = 1;

class RmuScheduler final : public sched::Scheduler {
 public:
  explicit RmuScheduler(RmuSchedulerOptions o) : o_(std::move(o)) {
    if (!(o_.lower_slack > 0 && o_.lower_slack < o_.upper_slack))
      throw ValueError(
          str(name(), ": lower_slack=", o_.lower_slack, " must be in (0, upper_slack=", o_.upper_slack, ")"));
    if (!o_.models.empty()) {
      names_ = split_list_param("models", o_.models);
      if (names_.size() != 2) throw ValueError(str(name(), ": models='", o_.models, "' must name 2 models"));
    }
    if (!o_.tables.empty()) {
      table_names_ = split_list_param("tables", o_.tables);
      if (table_names_.size() != 2) throw ValueError(str(name(), ": tables='", o_.tables, "' must name 2 models"));
      for (const auto& t : table_names_) table1_model(t);  // KeyError naming an unknown model
    }
    node_ = baseline_node();
    ways_ = {node_.llc_ways / 2, node_.llc_ways - node_.llc_ways / 2};
  }

  std::string describe() const override {
    return str(name(), "(models='", o_.models, "', tables='", o_.tables, "', monitor_s=", o_.monitor_s, ")");
  }

  void on_start(const ClusterView& view, Actions& actions) override {
    const auto& profile = view.profile();
    if (profile.models().empty()) throw ValueError(str(name(), ": the profile has no model"));
    // Application 0 and 1 (and any later one) are served by models[0] and models[1]; without
    // them, by the profile's first two models (or its only one, then shared).
    for (int m = 0; m < 2; ++m)
      model_[m] = names_.empty() ? std::min<ModelId>(m, static_cast<ModelId>(profile.models().size()) - 1)
                                 : profile.model_index(names_[m]);  // KeyError if absent
    // On a machine (co-located instances, machines:): the node is that machine, its partition
    // the instances' "cores" and "llc_ways" knobs (see the header).
    find_machine(view);
    const auto declared = machine_ >= 0 ? view.machine_resources(machine_) : sched::MachineResources{};
    // The node's cores: given, else the machine's, else the workers the run starts with (at least
    // 2: one per model).
    node_.cores = std::max<int>(2, o_.cores > 0         ? static_cast<int>(o_.cores)
                                   : declared.cores > 0 ? declared.cores
                                                        : view.num_workers());
    if (declared.llc_ways >= 2) node_.llc_ways = declared.llc_ways;
    if (declared.memory_bw_gbps > 0) node_.mem_bandwidth_gbs = declared.memory_bw_gbps;
    ways_ = {node_.llc_ways / 2, node_.llc_ways - node_.llc_ways / 2};
    if (machine_ >= 0) start_ways(view);
    build_manager();
    hardware_ = o_.hardware.empty() ? profile.hardware().at(static_cast<std::size_t>(view.hardware(0))) : o_.hardware;
    profile.hardware_index(hardware_);  // KeyError for an unknown type
    window_start_ = view.now();
    apply_ways(view, actions);
    actions.set_timer(view.now() + seconds_to_nanos(o_.monitor_s, "monitor_s"), kMonitorTag);
  }

  void on_arrival(const Query& query, const ClusterView& view, Actions& actions) override {
    const int m = app_model(query);
    ++arrivals_[m];
    if (!try_dispatch(query, m, view, actions)) {
      actions.enqueue(query.id);
      queued_[m].push_back(query.id);
    }
  }

  void on_batch_done(const BatchDone& done, const ClusterView& view, Actions& actions) override {
    auto it = running_.find(done.worker);
    if (it != running_.end()) {
      for (const auto& [model, arrival] : it->second) latencies_[model].push_back(done.finish - arrival);
      running_.erase(it);
    }
    // A removed instance that stopped gives its core back to one waiting for it.
    if (partition_pending_) apply_ways(view, actions);
    drain(view, actions);
  }

  void on_worker_ready(WorkerId, const ClusterView& view, Actions& actions) override {
    apply_ways(view, actions);
    drain(view, actions);
  }

  void on_timer(std::int64_t tag, const ClusterView& view, Actions& actions) override {
    if (tag != kMonitorTag) return;
    const double window_s = std::max(1e-9, nanos_to_seconds(view.now() - window_start_));
    std::array<Observation, 2> seen;
    for (int m = 0; m < 2; ++m) {
      seen[m].arrival_qps = arrivals_[m] / window_s;
      seen[m].tail_ms = nanos_to_seconds(p95(m, view)) * 1000.0;
      latencies_[m].clear();
      arrivals_[m] = 0;
    }
    window_start_ = view.now();
    Allocation now;
    now.workers = {live_workers(view, model_[0]), live_workers(view, model_[1])};
    now.workers = {std::max(1, now.workers[0]), std::max(1, now.workers[1])};
    now.ways = ways_;
    const Allocation next = manager_->adjust(seen, now);
    ways_ = next.ways;
    for (int m = 0; m < 2; ++m) resize(m, next.workers[m], view, actions);
    apply_ways(view, actions);
    drain(view, actions);
    actions.set_timer(view.now() + seconds_to_nanos(o_.monitor_s, "monitor_s"), kMonitorTag);
  }

 private:
  const char* name() const { return o_.manager == "hera" ? "hera_rmu" : "parties"; }

  // The lookup tables: of `tables`, else of `models` when both are Table I models, else of
  // DLRM(D) and NCF (Fig. 14's pair), so that the policy runs on any scenario.
  void build_manager() {
    std::vector<std::string> names = table_names_;
    if (names.empty()) {
      names = {"dlrm_d", "ncf"};
      if (names_.size() == 2 && is_table1(names_[0]) && is_table1(names_[1])) names = names_;
    }
    for (int m = 0; m < 2; ++m) {
      profiles_[m] = table1_model(names[m]);
      tables_[m] = profile_model(node_, profiles_[m]);
    }
    manager_ = make_controller(o_.manager, node_, tables_[0], profiles_[0].sla_ms, tables_[1], profiles_[1].sla_ms,
                               {o_.upper_slack, o_.lower_slack});
  }

  static bool is_table1(const std::string& n) {
    for (const auto& m : table1_models())
      if (m.name == n) return true;
    return false;
  }

  // Application 0 goes to slot 0, every other one to slot 1.
  static int app_model(const Query& q) { return q.app <= 0 ? 0 : 1; }

  bool try_dispatch(const Query& q, int m, const ClusterView& view, Actions& actions) {
    for (const WorkerId w : view.idle_workers()) {
      if (!view.has_model(w, model_[m]) || is_removing(w)) continue;
      if (cores_declared_ && view.config(w, sched::kCoresKnob, 0) < 1) continue;  // no core of its own yet
      if (q.size > view.max_batch(w, model_[m])) continue;
      const QueryId id = q.id;
      actions.dispatch(w, model_[m], {&id, 1});
      running_[w] = {{m, q.arrival}};
      return true;
    }
    return false;
  }

  // First come first served per model: a query whose model has no idle worker does not hold up
  // the other model's queries. The central queue holds exactly queued_'s queries (this policy
  // alone enqueues, in arrival order), so merging the two by id visits them in the central
  // queue's order without scanning one model's backlog for the other's queries.
  void drain(const ClusterView& view, Actions& actions) {
    std::array<bool, 2> blocked{queued_[0].empty(), queued_[1].empty()};
    while (!(blocked[0] && blocked[1])) {
      const int m = blocked[0] ? 1 : blocked[1] ? 0 : (queued_[0].front() < queued_[1].front() ? 0 : 1);
      if (try_dispatch(view.query(queued_[m].front()), m, view, actions)) {
        queued_[m].pop_front();
        blocked[m] = queued_[m].empty();
      } else {
        blocked[m] = true;
      }
    }
  }

  // The window's p95 latency of model m; the oldest waiting query's age when it is larger (a
  // window with a growing queue completes few queries).
  Nanos p95(int m, const ClusterView& view) {
    auto& v = latencies_[m];
    Nanos tail = 0;
    if (!v.empty()) {
      const std::size_t k = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(v.size()))) - 1;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
      tail = v[k];
    }
    if (!queued_[m].empty()) tail = std::max(tail, view.now() - view.query(queued_[m].front()).arrival);
    return tail;
  }

  int live_workers(const ClusterView& view, ModelId model) const {
    int n = 0;
    for (WorkerId w = 0; w < view.num_workers(); ++w)
      if (view.status(w) != WorkerStatus::Stopped && !is_removing(w) && view.has_model(w, model)) ++n;
    return n;
  }

  bool is_removing(WorkerId w) const { return static_cast<std::size_t>(w) < removing_.size() && removing_[w]; }

  void resize(int m, int target, const ClusterView& view, Actions& actions) {
    removing_.resize(static_cast<std::size_t>(view.num_workers()) + 64, false);
    int have = live_workers(view, model_[m]);
    const std::array<ModelId, 1> models{model_[m]};
    while (have < target) {
      const WorkerId w = machine_ >= 0
                             ? actions.add_instance(machine_, models)
                             : actions.add_worker(hardware_, models, seconds_to_nanos(o_.startup_s, "startup_s"));
      removing_.resize(std::max(removing_.size(), static_cast<std::size_t>(w) + 1), false);
      ++have;
    }
    // Idle workers go first, the newest first; then busy ones (they stop after their batch).
    for (int pass = 0; pass < 2 && have > target; ++pass) {
      for (WorkerId w = view.num_workers() - 1; w >= 0 && have > target; --w) {
        if (view.status(w) == WorkerStatus::Stopped || is_removing(w) || !view.has_model(w, model_[m])) continue;
        if (pass == 0 && !view.is_idle(w)) continue;
        // On a machine, a busy instance gives its ways back now (the model's other instances hold
        // its class of service) and its core when it stops (apply_ways).
        if (machine_ >= 0 && view.config(w, sched::kLlcWaysKnob, 0) != 0) actions.set_config(w, sched::kLlcWaysKnob, 0);
        actions.remove_worker(w);
        removing_[w] = true;
        partition_pending_ = machine_ >= 0;
        --have;
      }
    }
  }

  // Each live worker's LLC ways (its model's) and core (slot 0's workers on the first cores, slot
  // 1's after them), as worker settings an executor on a real node applies (resctrl, affinity).
  void apply_ways(const ClusterView& view, Actions& actions) {
    if (machine_ >= 0) return apply_partition(view, actions);
    std::int64_t core = 0;
    for (int m = 0; m < 2; ++m) {
      for (WorkerId w = 0; w < view.num_workers(); ++w) {
        if (view.status(w) == WorkerStatus::Stopped || is_removing(w) || !view.has_model(w, model_[m])) continue;
        if (m == 1 && model_[1] == model_[0]) continue;  // one shared model: already placed
        if (view.config(w, "llc_ways", -1) != ways_[m]) actions.set_config(w, "llc_ways", ways_[m]);
        if (view.config(w, "core", -1) != core) actions.set_config(w, "core", core);
        ++core;
      }
    }
  }

  // The machine the models' instances share (-1: workers of their own, the partition only
  // worker settings): the first worker's, when it declares cores or LLC ways to partition (a
  // machine without them, e.g. a GPU hosting instances, is managed as before: added workers are
  // machines of their own).
  void find_machine(const ClusterView& view) {
    machine_ = -1;
    if (view.num_workers() == 0) return;
    const sched::MachineId m = view.machine(0);
    const auto r = view.machine_resources(m);
    if (r.cores > 0 || r.llc_ways > 0) machine_ = m;
    cores_declared_ = machine_ >= 0 && r.cores > 0;
  }

  // The ways the run starts with: each model's instances' llc_ways, when the scenario gave them.
  void start_ways(const ClusterView& view) {
    std::array<int, 2> given{0, 0};
    for (const WorkerId w : view.instances(machine_))
      for (int m = 0; m < 2; ++m)
        if (view.has_model(w, model_[m])) {
          given[m] += static_cast<int>(view.config(w, sched::kLlcWaysKnob, 0));
          break;
        }
    if (given[0] >= 1 && given[1] >= 1 && given[0] + given[1] <= node_.llc_ways) ways_ = given;
  }

  // On a machine: each model's ways split over its live instances (lowest ids first get the
  // remainder; the model's ways are their sum), decreases before increases so that the machine's
  // total is never exceeded; a core ("cores" = 1) for every live instance while the machine has
  // one free (an instance being removed keeps its core until it stops); the "core" index for
  // pinning in the real loop, as without a machine.
  void apply_partition(const ClusterView& view, Actions& actions) {
    std::vector<std::pair<WorkerId, std::int64_t>> ways;  // (instance, its share)
    std::vector<WorkerId> live;
    for (int m = 0; m < 2; ++m) {
      if (m == 1 && model_[1] == model_[0]) break;
      std::vector<WorkerId> mine;
      for (const WorkerId w : view.instances(machine_))
        if (view.status(w) != WorkerStatus::Stopped && !is_removing(w) && view.has_model(w, model_[m]))
          mine.push_back(w);
      const auto n = static_cast<std::int64_t>(mine.size());
      for (std::int64_t j = 0; j < n; ++j)
        ways.emplace_back(mine[static_cast<std::size_t>(j)], ways_[m] / n + (j < ways_[m] % n ? 1 : 0));
      live.insert(live.end(), mine.begin(), mine.end());
    }
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& [w, k] : ways) {
        const std::int64_t now = view.config(w, sched::kLlcWaysKnob, 0);
        if (pass == 0 ? k < now : k > now) actions.set_config(w, sched::kLlcWaysKnob, k);
      }
    partition_pending_ = false;
    std::int64_t index = 0;
    for (const WorkerId w : live) {
      if (view.config(w, sched::kCoresKnob, 0) < 1) {
        if (!cores_declared_ || view.free_resources(machine_).cores >= 1) {
          actions.set_config(w, sched::kCoresKnob, 1);
        } else {
          partition_pending_ = true;  // after a removed instance stops
        }
      }
      if (view.config(w, "core", -1) != index) actions.set_config(w, "core", index);
      ++index;
    }
    for (const WorkerId w : view.instances(machine_))
      if (is_removing(w) && view.status(w) != WorkerStatus::Stopped) partition_pending_ = true;
  }

  RmuSchedulerOptions o_;
  sched::MachineId machine_ = -1;
  bool cores_declared_ = false, partition_pending_ = false;
  std::vector<std::string> names_, table_names_;
  NodeSpec node_;
  std::array<ModelProfile, 2> profiles_;
  std::array<ModelTables, 2> tables_;
  std::unique_ptr<NodeController> manager_;
  std::array<ModelId, 2> model_{-1, -1};
  std::array<int, 2> ways_{1, 1};
  std::string hardware_;
  Nanos window_start_ = 0;
  std::array<std::int64_t, 2> arrivals_{0, 0};
  std::array<std::vector<Nanos>, 2> latencies_;
  std::array<std::deque<QueryId>, 2> queued_;  // each model's queries in the central queue, oldest first
  std::unordered_map<WorkerId, std::vector<std::pair<int, Nanos>>> running_;
  std::vector<bool> removing_;
};

std::vector<ParamSpec> rmu_params() {
  return {
      ParamSpec{"models",
                ParamType::String,
                std::string(),
                "the profile's models serving application 0 and the others, e.g. 'dlrm_d,ncf' ('': the profile's "
                "first two models)",
                {},
                {},
                false,
                {}},
      ParamSpec{"tables",
                ParamType::String,
                std::string(),
                "the two Table I models whose lookup tables the manager reads ('': models, when they are Table I "
                "models, else 'dlrm_d,ncf')",
                {},
                {},
                false,
                {}},
      ParamSpec{"hardware",
                ParamType::String,
                std::string(),
                "hardware type of added workers ('': worker 0's)",
                {},
                {},
                false,
                {}},
      ParamSpec{"cores",
                ParamType::Int,
                std::int64_t{0},
                "cores of the node, the most workers the two models hold together (0: its machine's cores "
                "when it declares them, else the workers the run starts with)",
                0.0,
                1024.0,
                false,
                {}},
      ParamSpec::positive("monitor_s", 1.0, "T_monitor: seconds between two adjustments"),
      ParamSpec::positive("lower_slack", 0.8, "p95 / SLA below this: over-provisioned"),
      ParamSpec::positive("upper_slack", 1.0, "p95 / SLA above this: under-provisioned"),
      ParamSpec::non_negative("startup_s", 0.0,
                              "start-up time of an added worker, seconds (on a machine: the profile's load time)"),
  };
}

RmuSchedulerOptions rmu_options(const Params& p, std::string manager) {
  RmuSchedulerOptions o;
  o.manager = std::move(manager);
  o.models = p.get_string("models");
  o.tables = p.get_string("tables");
  o.hardware = p.get_string("hardware");
  o.cores = p.get_int("cores");
  o.monitor_s = p.get_float("monitor_s");
  o.lower_slack = p.get_float("lower_slack");
  o.upper_slack = p.get_float("upper_slack");
  o.startup_s = p.get_float("startup_s");
  return o;
}

}  // namespace

std::shared_ptr<sched::Scheduler> make_rmu_scheduler(RmuSchedulerOptions options) {
  return std::make_shared<RmuScheduler>(std::move(options));
}

void register_rmu_schedulers(sched::SchedulerRegistry& registry) {
  registry.add({"hera_rmu",
                "Hera's node resource manager (Algorithm 3): every monitor_s, a model outside its slack band gets the "
                "workers its profiled curve needs for its urgency-scaled arrival rate; LLC ways re-split on the 3-D "
                "table (set as the workers' llc_ways setting). Two applications, one model each.",
                rmu_params(), [](const Params& p) { return make_rmu_scheduler(rmu_options(p, "hera")); }});
  registry.add({"parties",
                "PARTIES-style feedback manager (Hera's baseline): one core or LLC way more for the model furthest "
                "over its SLA, one back from a model far under it, every monitor_s. Two applications, one model each.",
                rmu_params(), [](const Params& p) { return make_rmu_scheduler(rmu_options(p, "parties")); }});
}

}  // namespace servelab::hera
