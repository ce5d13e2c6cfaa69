#include "servelab/systems/infaas/interference.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/param_builders.hpp"
#include "servelab/core/params.hpp"

namespace servelab::infaas {

CoLocationInterference::CoLocationInterference(double gpu, double cpu, double cpu_threads, double neuron_cores)
    : gpu_(gpu), cpu_(cpu), cpu_threads_(cpu_threads), neuron_cores_(neuron_cores) {
  const auto check = [](const char* name, double value, double least) {
    if (!(std::isfinite(value) && value >= least)) {
      throw ValueError(str("infaas interference: ", name, "=", value, " must be a finite number >= ", least));
    }
  };
  check("gpu", gpu_, 0), check("cpu", cpu_, 0), check("cpu_threads", cpu_threads_, 1);
  check("neuron_cores", neuron_cores_, 1);
}

double CoLocationInterference::slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                                        std::span<const sched::WorkerId> co_runners) const {
  const auto n = static_cast<double>(co_runners.size());
  const std::string& hardware = view.profile().hardware()[view.hardware(worker)];
  if (hardware == "cpu") {
    const auto threads = [&](sched::WorkerId w) {
      const std::int64_t knob = view.config(w, "threads", 0);
      return knob > 0 ? static_cast<double>(knob) : cpu_threads_;
    };
    double busy = threads(worker);
    for (const auto w : co_runners) busy += threads(w);
    const auto cores = static_cast<double>(view.machine_resources(view.machine(worker)).cores);
    const double sharing = cores > 0 ? std::max(1.0, busy / cores) : 1.0;
    return sharing * (1.0 + cpu_ * n);
  }
  if (hardware == "inferentia") return std::max(1.0, (1.0 + n) / neuron_cores_);
  return 1.0 + gpu_ * n;
}

void CoLocationInterference::slowdowns(const sched::ClusterView& view, std::span<const sched::WorkerId> running,
                                       std::span<double> out) const {
  if (running.empty()) return;
  const double factor = slowdown(view, running.front(), running.subspan(1));  // the same for each
  std::fill(out.begin(), out.end(), factor);
}

std::string CoLocationInterference::describe() const {
  return str("infaas(gpu=", format_param_value(ParamValue{gpu_}), ", cpu=", format_param_value(ParamValue{cpu_}),
             ", cpu_threads=", format_param_value(ParamValue{cpu_threads_}),
             ", neuron_cores=", format_param_value(ParamValue{neuron_cores_}), ")");
}

void register_interference_models(cluster::InterferenceModelRegistry& registry) {
  registry.add(
      {"infaas",
       "INFaaS's co-located variants (Sec. 4.1, 6.1, 6.3.1): on a GPU a batch runs 1 + gpu x (co-runners) times "
       "slower; on a CPU VM running batches share the machine's cores (cpu_threads each, or the instance's "
       "'threads' knob: max(1, threads / cores)) times 1 + cpu x (co-runners); on Inferentia none while at most "
       "neuron_cores batches run. The values are assumptions except cpu (measured 0): docs/infaas.md.",
       {float_param("gpu", 0.5, 0, 1000, "extra time per co-running batch on a GPU, as a share of the time alone"),
        float_param("cpu", 0.0, 0, 1000, "extra time per co-running batch on a CPU VM beyond sharing its cores"),
        float_param("cpu_threads", 4.0, 1, 4096,
                    "threads a CPU batch keeps busy (an instance's 'threads' knob "
                    "overrides it)"),
        float_param("neuron_cores", 4.0, 1, 4096, "batches an Inferentia chip runs at once without slowing down")},
       [](const Params& p) -> std::shared_ptr<cluster::InterferenceModel> {
         return std::make_shared<CoLocationInterference>(p.get_float("gpu"), p.get_float("cpu"),
                                                         p.get_float("cpu_threads"), p.get_float("neuron_cores"));
       }});
}

InterferenceModel::InterferenceModel(double alpha, std::string key) : alpha_(alpha), key_(std::move(key)) {
  if (!(std::isfinite(alpha_) && alpha_ >= 0)) {
    throw ValueError(str("infaas_interference: alpha=", alpha_, " must be >= 0 and finite"));
  }
  if (key_.empty()) throw ValueError("infaas_interference: key='' must name a worker knob");
}

double InterferenceModel::scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId,
                                std::int64_t) const {
  const std::int64_t machine = view.config(worker, key_, -1);
  if (machine < 0 || alpha_ == 0) return 1.0;
  std::int64_t others = 0, busy = 0;
  for (sched::WorkerId w = 0; w < view.num_workers(); ++w) {
    if (w == worker || view.status(w) == sched::WorkerStatus::Stopped || view.config(w, key_, -1) != machine) {
      continue;
    }
    ++others;
    busy += view.status(w) == sched::WorkerStatus::Busy ? 1 : 0;
  }
  return others == 0 ? 1.0 : 1.0 + alpha_ * static_cast<double>(busy) / static_cast<double>(others);
}

std::string InterferenceModel::describe() const {
  return str("infaas_interference(alpha=", format_param_value(ParamValue{alpha_}), ", key='", key_, "')");
}

void register_config_models(cluster::ConfigModelRegistry& registry) {
  ParamSpec alpha;
  alpha.name = "alpha";
  alpha.type = ParamType::Float;
  alpha.default_value = 0.5;
  alpha.doc = "slowdown when every co-located worker is busy: service time x (1 + alpha x busy share)";
  alpha.min = 0.0;
  alpha.max = 100.0;
  ParamSpec key;
  key.name = "key";
  key.type = ParamType::String;
  key.default_value = std::string("machine");
  key.doc = "the worker knob naming the machine a worker runs on (same value: co-located)";
  registry.add(
      {"infaas_interference",
       "INFaaS co-location interference: a batch's service time grows by alpha x the busy share of "
       "the other workers on its machine (the worker knob `key`).",
       {alpha, key},
       [](const Params& p) { return std::make_shared<InterferenceModel>(p.get_float("alpha"), p.get_string("key")); }});
}

}  // namespace servelab::infaas
