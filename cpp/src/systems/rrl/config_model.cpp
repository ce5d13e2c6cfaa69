#include "servelab/systems/rrl/config_model.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/param_builders.hpp"

namespace servelab::rrl {
namespace {

// Thread counts beyond this are a typo, not a configuration (the executors cap theirs lower).
constexpr std::int64_t kMaxThreads = 4096;

}  // namespace

CpuConfigModel::CpuConfigModel(CpuConfigModelOptions options) : options_(std::move(options)) {
  options_.cpu.validate();
  if (options_.intra_key.empty()) throw ValueError("rrl_cpu: intra_key='' must name a worker knob");
  if (options_.inter_key.empty()) throw ValueError("rrl_cpu: inter_key='' must name a worker knob");
  for (const auto& [name, value] : {std::pair{"reference_intra", options_.reference_intra},
                                    std::pair{"reference_inter", options_.reference_inter}}) {
    if (value < 1 || value > kMaxThreads)
      throw ValueError(str("rrl_cpu: ", name, "=", value, " must be in 1..", kMaxThreads));
  }
  reference_ms_ = options_.cpu.service_ms(options_.reference_inter, options_.reference_intra, 1);
}

std::int64_t CpuConfigModel::knob(const sched::ClusterView& view, sched::WorkerId worker, const std::string& key,
                                  std::int64_t fallback) const {
  const std::int64_t value = view.config(worker, key, fallback);
  if (value < 1 || value > kMaxThreads) {
    throw ValueError(
        str("rrl_cpu: worker=", worker, " has ", key, "=", value, "; the model needs 1..", kMaxThreads, " threads"));
  }
  return value;
}

double CpuConfigModel::scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId,
                             std::int64_t) const {
  const std::int64_t intra = knob(view, worker, options_.intra_key, options_.reference_intra);
  const std::int64_t inter = knob(view, worker, options_.inter_key, options_.reference_inter);
  const std::int64_t busy =
      options_.request_parallelism ? std::max<std::int64_t>(1, cluster::busy_workers(view, view.hardware(worker))) : 1;
  return options_.cpu.service_ms(inter, intra, busy) / reference_ms_;
}

std::string CpuConfigModel::describe() const {
  const auto& c = options_.cpu;
  // The shortest text that reads back as the same double, so the description rebuilds the model.
  const auto f = [](double x) {
    std::array<char, 32> buf{};
    const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), x).ptr;
    return std::string(buf.data(), end);
  };
  return str("rrl_cpu(cores=", f(c.cores), ", base_ms=", f(c.base_ms), ", intra_fraction=", f(c.intra_fraction),
             ", inter_fraction=", f(c.inter_fraction), ", op_width=", f(c.op_width),
             ", interference=", f(c.interference), ", sync_ms=", f(c.sync_ms), ", intra_key='", options_.intra_key,
             "', inter_key='", options_.inter_key, "', reference_intra=", options_.reference_intra,
             ", reference_inter=", options_.reference_inter,
             ", request_parallelism=", options_.request_parallelism ? "true" : "false", ")");
}

void register_cpu_config_model(cluster::ConfigModelRegistry& registry) {
  const CpuModel d;
  const ParamSpec parallel =
      bool_param("request_parallelism", true,
                 "count the hardware's busy workers as concurrent requests (false: each runs as if alone)");
  registry.add(
      {"rrl_cpu",
       "RRL's CPU parallelism model: a worker's inter/intra-op thread knobs and the busy workers of its "
       "hardware scale the profiled service time (Amdahl speed-up, time slicing and interference beyond "
       "the cores); 1 at the reference configuration alone.",
       {float_param("cores", d.cores, 1, 4096, "cores C of the machine"),
        float_param("base_ms", d.base_ms, 1e-9, 1e9, "one request alone on one thread (ms)"),
        float_param("intra_fraction", d.intra_fraction, 0, 1, "p: parallel fraction within ops"),
        float_param("inter_fraction", d.inter_fraction, 0, 1, "q: parallel fraction across ops"),
        float_param("op_width", d.op_width, 1, 4096, "W: most independent ops at once"),
        float_param("interference", d.interference, 0, 1e6, "kappa: extra slowdown once threads exceed cores"),
        float_param("sync_ms", d.sync_ms, 0, 1e9, "cost per extra thread of a request (ms)"),
        string_param("intra_key", "intra_op_threads", "the worker knob holding intra-op threads"),
        string_param("inter_key", "inter_op_threads", "the worker knob holding inter-op threads"),
        int_param("reference_intra", 1, 1, "intra-op threads the profile was measured with", kMaxThreads),
        int_param("reference_inter", 1, 1, "inter-op threads the profile was measured with", kMaxThreads), parallel},
       [](const Params& p) {
         CpuConfigModelOptions o;
         o.cpu.cores = p.get_float("cores");
         o.cpu.base_ms = p.get_float("base_ms");
         o.cpu.intra_fraction = p.get_float("intra_fraction");
         o.cpu.inter_fraction = p.get_float("inter_fraction");
         o.cpu.op_width = p.get_float("op_width");
         o.cpu.interference = p.get_float("interference");
         o.cpu.sync_ms = p.get_float("sync_ms");
         o.intra_key = p.get_string("intra_key");
         o.inter_key = p.get_string("inter_key");
         o.reference_intra = p.get_int("reference_intra");
         o.reference_inter = p.get_int("reference_inter");
         o.request_parallelism = p.get_bool("request_parallelism");
         return std::make_shared<CpuConfigModel>(std::move(o));
       }});
}

}  // namespace servelab::rrl
