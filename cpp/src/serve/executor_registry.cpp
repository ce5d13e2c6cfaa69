#include "servelab/serve/executor_registry.hpp"

#include <chrono>
#include <optional>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/serve/added_workers.hpp"

namespace servelab::serve {
namespace {

// "emulated": the executor every run had before executors were named, and still the default.
class EmulatedBuilder final : public ExecutorBuilder {
 public:
  explicit EmulatedBuilder(const Params& params) : service_(params.get_string("service")), spec_(params.describe()) {
    if (service_ != "run" && service_ != "sample") profile::parse_statistic(service_, "emulated: service");
  }
  std::unique_ptr<Executor> build(const ExecutorContext& context) const override {
    if (context.run == nullptr) {
      throw ValueError(str(spec_, " waits the latencies of a run's profile, so it runs only inside a serving run"));
    }
    std::optional<profile::Statistic> service = context.run->service_statistic;
    if (service_ == "sample") service.reset();
    if (service_ != "run" && service_ != "sample") service = profile::parse_statistic(service_, "service");
    return std::make_unique<EmulatedExecutor>(context.run->profile, service);
  }
  std::string describe() const override { return spec_; }

 private:
  std::string service_, spec_;
};

class ConstantBuilder final : public ExecutorBuilder {
 public:
  explicit ConstantBuilder(const Params& params)
      : latency_(seconds_to_nanos(params.get_float("latency_ms") / 1e3, "constant: latency_ms")),
        spec_(params.describe()) {}
  std::unique_ptr<Executor> build(const ExecutorContext&) const override {
    return std::make_unique<ConstantExecutor>(latency_);
  }
  std::string describe() const override { return spec_; }

 private:
  Nanos latency_;
  std::string spec_;
};

}  // namespace

ConstantExecutor::ConstantExecutor(Nanos latency, Nanos spin) : latency_(latency), spin_(spin) {
  if (latency < 0) throw ValueError(str("constant: latency=", latency, " ns must be >= 0"));
  if (spin < 0) throw ValueError(str("constant: spin=", spin, " ns must be >= 0"));
}

void ConstantExecutor::run(const ExecRequest& request) {
  if (latency_ == 0) return;
  wait_until_precise(std::chrono::steady_clock::now() + std::chrono::nanoseconds(latency_), request.stop, spin_);
}

std::string ConstantExecutor::describe() const { return str("constant(latency_ms=", latency_ / 1e6, ")"); }

void register_serve_executors(ExecutorRegistry& registry) {
  ParamSpec service;
  service.name = "service";
  service.type = ParamType::String;
  service.default_value = std::string("run");
  service.doc =
      "'run': follow the run's service setting; 'sample': draw from the profile's distribution; or a fixed "
      "statistic (mean, p50, p95, p99, mean_without_max)";
  registry.add({"emulated",
                "Waits the profiled latency of each batch, as the simulator would (no model runs): the default.",
                {service},
                [](const Params& p) { return std::make_shared<EmulatedBuilder>(p); }});
  registry.add({"constant",
                "Waits a constant latency per batch whatever its size (0: returns at once), to measure the serving "
                "loop's own overhead.",
                {ParamSpec::non_negative("latency_ms", 0.0, "milliseconds per batch")},
                [](const Params& p) { return std::make_shared<ConstantBuilder>(p); }});
}

ExecutorFactory executors_by_group(std::vector<std::shared_ptr<const ExecutorBuilder>> builders) {
  const auto fallback = emulated_executors();
  return [builders = std::move(builders), fallback](sched::WorkerId worker, sched::HardwareId hardware,
                                                    const cluster::RunSpec& spec) -> std::unique_ptr<Executor> {
    if (builders.size() != spec.workers.size()) {
      throw ValueError(str("executors: ", builders.size(), " given for ", spec.workers.size(), " worker groups"));
    }
    // Initial workers are numbered group by group; an added worker takes the group the serving
    // loop chose for it (added_worker_group), else its hardware's first group.
    std::optional<std::size_t> group;
    if (const auto slot = spec.group_of(worker)) group = slot->group;
    if (!group) group = added_worker_group();
    for (std::size_t g = 0; g < spec.workers.size() && !group; ++g) {
      if (spec.profile->hardware_index(spec.workers[g].hardware) == hardware) group = g;
    }
    if (!group || !builders[*group]) return fallback(worker, hardware, spec);
    return builders[*group]->build(ExecutorContext{worker, hardware, &spec, spec.seed});
  };
}

}  // namespace servelab::serve
