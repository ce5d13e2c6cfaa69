#include "servelab/systems/infaas/register.hpp"

#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/infaas/scheduler.hpp"

namespace servelab::infaas {
namespace {

std::vector<std::string> split_models(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<std::int32_t> split_indices(const std::string& list) {
  std::vector<std::int32_t> out;
  for (const auto& item : split_models(list)) {
    std::size_t used = 0;
    long value = -1;
    try {
      value = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || value < 0 || value > 1'000'000) {
      throw ValueError(str("offline_apps='", list, "': '", item, "' is not an application index (0, 1, ...)"));
    }
    out.push_back(static_cast<std::int32_t>(value));
  }
  return out;
}

ParamSpec batch_cap_spec() {
  return ParamSpec{"batch_cap",
                   ParamType::String,
                   ParamValue{std::string("full")},
                   "how many of a worker's queued queries of one variant a batch takes: full (up to the variant's "
                   "max batch, in arrival order) or deadline (then as many as still finish, by its deadline, every "
                   "query in the batch that could finish in time alone; at least one)",
                   {},
                   {},
                   false,
                   {"full", "deadline"}};
}

BatchCap batch_cap_of(const Params& p) {
  return p.get_string("batch_cap") == "deadline" ? BatchCap::Deadline : BatchCap::Full;
}

}  // namespace

void register_schedulers(sched::SchedulerRegistry& registry) {
  registry.add({"infaas",
                "INFaaS (ATC'21): per-query getVariant over the profile's (model, hardware) variants by accuracy "
                "floor and SLO, Active > new instance > closest; Overloaded instances avoided; variants loaded and "
                "unloaded on demand (model-level autoscaling).",
                {ParamSpec{"models",
                           ParamType::String,
                           ParamValue{std::string()},
                           "the registered models queries may be served by, comma-separated (a model's variants are "
                           "it on each hardware type); empty: every model of the profile, one model-less task",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"max_workers",
                           ParamType::Int,
                           std::int64_t{0},
                           "VM-Autoscaler (Sec. 4.2.3): the most live workers it may reach; 0: off",
                           0.0,
                           100000.0,
                           false,
                           {}},
                 ParamSpec::positive("startup_s", 20.0, "seconds a started worker takes (Sec. 4.2.3: 20-30 s)"),
                 ParamSpec::positive("poll_s", 2.0, "the VM-Autoscaler's polling period (Sec. 5: 2 s)"),
                 ParamSpec{"threshold",
                           ParamType::Float,
                           0.8,
                           "utilisation (and share of workers with Overloaded variants) that starts a worker",
                           0.0,
                           1.0,
                           true,
                           {}},
                 ParamSpec::positive("idle_s", 60.0, "a worker it started, idle this long, is stopped"),
                 ParamSpec{"autoscale_s",
                           ParamType::Float,
                           1.0,
                           "the Model-Autoscaler's period (Sec. 5: 1 s); 0: off, per-query scaling only",
                           0.0,
                           3600.0,
                           false,
                           {}},
                 ParamSpec{"slack",
                           ParamType::Float,
                           1.05,
                           "the Model-Autoscaler's slack-threshold: minimum capacity / load (Sec. 5: 1.05)",
                           1.0,
                           10.0,
                           false,
                           {}},
                 ParamSpec::positive("load_window_s", 5.0, "the load is measured over this window (our choice)"),
                 ParamSpec{"offline_apps",
                           ParamType::String,
                           ParamValue{std::string()},
                           "indices of the workload's applications whose queries are offline (served from spare "
                           "capacity), comma-separated; empty: none",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"offline_util",
                           ParamType::Float,
                           0.4,
                           "offline work pauses on a worker busier than this over the last period (Sec. 5: 40 %)",
                           0.0,
                           1.0,
                           false,
                           {}},
                 ParamSpec{"interference_tol",
                           ParamType::Float,
                           0.1,
                           "a batch slower than its profiled latency by more than this fraction marks its instance "
                           "Interfered and pauses offline work on its worker",
                           0.0,
                           100.0,
                           false,
                           {}},
                 ParamSpec{"interference_floor_ms",
                           ParamType::Float,
                           0.0,
                           "a batch must also be this many ms slower than its profiled latency to count as slower "
                           "(a real executor's call overhead on a sub-millisecond model); 0: the fraction alone",
                           0.0,
                           1e6,
                           false,
                           {}},
                 ParamSpec{"warmup_batch",
                           ParamType::Bool,
                           false,
                           "the first batch of a variant on a worker after its load is not compared with the "
                           "profile (a real executor loads and warms up on it); false: every batch is",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"dispatch",
                           ParamType::String,
                           ParamValue{std::string("least_loaded")},
                           "which instance of the chosen variant serves a query: least_loaded (getVariant's, Sec. "
                           "4.1) or best_fit (online bin packing, Sec. 4.2.3: the busiest one that meets the deadline)",
                           {},
                           {},
                           false,
                           {"least_loaded", "best_fit"}},
                 ParamSpec{"fast_up",
                           ParamType::Bool,
                           false,
                           "the Model-Autoscaler's load is the larger of the load window's average and the last "
                           "period's rate (scale up on a spike's first period); false: the window's average only",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"concurrent_loads",
                           ParamType::Bool,
                           true,
                           "while an application's loads are under way, more replicas may still be placed (the "
                           "pending instances count as running); false: one scaling action at a time",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"autoscaler",
                           ParamType::String,
                           ParamValue{std::string("greedy")},
                           "the Model-Autoscaler's solver: greedy (Sec. 4.2.2's heuristic) or ilp (Sec. 4.2.1's "
                           "integer program solved exactly by CBC; needs servelab's LP backend, loaded on use); "
                           "any name in the scaling-solver registry",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"app_models",
                           ParamType::String,
                           ParamValue{std::string()},
                           "by application index, comma-separated: the model its queries ask for (a profile model "
                           "name, or a name prefix ending in '*': an architecture's variants); its variants are "
                           "then the application's only candidates; empty: model-less, every model",
                           {},
                           {},
                           false,
                           {}},
                 ParamSpec{"instance_cores",
                           ParamType::Int,
                           std::int64_t{4},
                           "on machines with modelled resources (machines:), the CPU cores one CPU variant "
                           "instance takes in constraint (3): a CPU VM takes a new instance while its cores / "
                           "instance_cores exceed the instances it runs (Table 2's CPU variant: 4 CPUs)",
                           1.0,
                           4096.0,
                           false,
                           {}},
                 ParamSpec{"accel_instances",
                           ParamType::Int,
                           std::int64_t{4},
                           "on machines with modelled resources, the most variant instances one accelerator (a "
                           "GPU, an Inferentia chip: its 4 NeuronCores) runs, besides its memory",
                           1.0,
                           4096.0,
                           false,
                           {}},
                 ParamSpec{"q_wait",
                           ParamType::Bool,
                           false,
                           "the Model-Autoscaler's saturation QPS Q_v counts a query's wait: the batches whose "
                           "latency is within half the SLO (a query may wait for a batch in service as long as "
                           "its own); false: within the SLO",
                           {},
                           {},
                           false,
                           {}},
                 batch_cap_spec()},
                [](const Params& p) {
                  ModelScaling ms;
                  ms.q_wait = p.get_bool("q_wait");
                  ms.instance_cores = p.get_int("instance_cores");
                  ms.accel_instances = p.get_int("accel_instances");
                  ms.best_fit = p.get_string("dispatch") == "best_fit";
                  ms.fast_up = p.get_bool("fast_up");
                  ms.concurrent_loads = p.get_bool("concurrent_loads");
                  ms.period_s = p.get_float("autoscale_s");
                  ms.slack = p.get_float("slack");
                  ms.window_s = p.get_float("load_window_s");
                  ms.solver = p.get_string("autoscaler");
                  OfflineServing off;
                  off.apps = split_indices(p.get_string("offline_apps"));
                  off.max_utilisation = p.get_float("offline_util");
                  off.tolerance = p.get_float("interference_tol");
                  off.floor_ms = p.get_float("interference_floor_ms");
                  off.skip_warmup = p.get_bool("warmup_batch");
                  VmScaling vm;
                  vm.max_workers = p.get_int("max_workers");
                  vm.startup_s = p.get_float("startup_s");
                  vm.poll_s = p.get_float("poll_s");
                  vm.threshold = p.get_float("threshold");
                  vm.idle_s = p.get_float("idle_s");
                  return make_infaas_scheduler(split_models(p.get_string("models")), vm, ms, std::move(off),
                                               split_models(p.get_string("app_models")), batch_cap_of(p));
                }});
  registry.add(
      {"clipper_plus",
       "Clipper+ (INFaaS baseline): the pre-loaded variants only, fixed; each query to the worker that can "
       "start it soonest among those holding its application's pinned variant (else one meeting its accuracy "
       "floor).",
       {ParamSpec{"app_models",
                  ParamType::String,
                  ParamValue{std::string()},
                  "the variant (profile model) pre-selected for each application, comma-separated by "
                  "application index (Sec. 6.1); empty: any pre-loaded model meeting the query's accuracy floor",
                  {},
                  {},
                  false,
                  {}},
        batch_cap_spec()},
       [](const Params& p) { return make_clipper_plus(split_models(p.get_string("app_models")), batch_cap_of(p)); }});
  registry.add({"sm_plus",
                "SM+ (INFaaS baseline, SageMaker-like): one fixed variant per application (its pinned model, else the "
                "first worker's first model), scaled horizontally: replicated onto idle workers of its hardware, then "
                "new workers started when a query "
                "would miss its deadline; started workers stop after idle_s idle.",
                {ParamSpec::positive("startup_s", 20.0, "seconds a new worker takes to start (Sec. 4.2.3: 20-30 s)"),
                 ParamSpec::positive("idle_s", 60.0, "a started worker idle this long is stopped"),
                 ParamSpec{"max_workers",
                           ParamType::Int,
                           std::int64_t{16},
                           "the most live workers (it starts none beyond)",
                           1.0,
                           100000.0,
                           false,
                           {}},
                 ParamSpec{"app_models",
                           ParamType::String,
                           ParamValue{std::string()},
                           "the variant (profile model) pre-selected for each application, comma-separated by "
                           "application index (Sec. 6.1); empty: the first worker's first model for every application",
                           {},
                           {},
                           false,
                           {}},
                 batch_cap_spec()},
                [](const Params& p) {
                  return make_sm_plus(p.get_float("startup_s"), p.get_float("idle_s"), p.get_int("max_workers"),
                                      split_models(p.get_string("app_models")), batch_cap_of(p));
                }});
}

}  // namespace servelab::infaas
