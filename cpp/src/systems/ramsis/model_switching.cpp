#include "servelab/systems/ramsis/model_switching.hpp"

#include <string>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::ramsis {
namespace {

class ModelSwitching final : public LoadGranularScheduler {
 public:
  ModelSwitching(ModelSwitchingTable table, LoadGranularOptions options)
      : LoadGranularScheduler(with_grid(table, std::move(options))), table_(std::move(table)) {}

  std::string describe() const override {
    std::string models;
    for (const auto& m : table_.models) models += (models.empty() ? "" : ",") + m;
    return str("model_switching(models='", models, "', ", describe_options(), ")");
  }

  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    ids_.clear();
    for (const auto& name : table_.models) ids_.push_back(view.profile().model_index(name));  // KeyError if unknown
    LoadGranularScheduler::on_start(view, actions);
  }

 protected:
  BatchRule rule(std::span<const ModelCurve> curves, double load_qps, Nanos slo, std::int32_t workers) override {
    const ModelId chosen = ids_[grid_index(table_.loads_qps, load_qps)];
    const BatchRule batching = adaptive_batch_rule(curves, slo, load_qps / workers, 1.0);
    const ModelCurve* curve = nullptr;
    for (const ModelCurve& c : curves) {
      if (c.model == chosen) curve = &c;
    }
    if (curve == nullptr) {  // not on this worker: its fastest model
      for (const ModelCurve& c : curves) {
        if (curve == nullptr || c.latency[0] < curve->latency[0]) curve = &c;
      }
    }
    return {curve->model, std::min<std::int64_t>(batching.max_batch, static_cast<std::int64_t>(curve->latency.size()))};
  }

 private:
  static LoadGranularOptions with_grid(const ModelSwitchingTable& table, LoadGranularOptions options) {
    table.validate();
    options.loads_qps = table.loads_qps;
    return options;
  }
  ModelSwitchingTable table_;
  std::vector<ModelId> ids_;  // table_.models as profile indices
};

}  // namespace

void ModelSwitchingTable::validate() const {
  validate_load_grid(loads_qps, "loads");
  if (models.size() != loads_qps.size()) {
    throw ValueError(
        str("models has ", models.size(), " entries but loads has ", loads_qps.size(), ": give one model per load"));
  }
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i].empty()) throw ValueError(str("models[", i, "] is empty"));
  }
}

std::shared_ptr<sched::Scheduler> make_model_switching(ModelSwitchingTable table, LoadGranularOptions options) {
  return std::make_shared<ModelSwitching>(std::move(table), std::move(options));
}

void register_model_switching(sched::SchedulerRegistry& registry) {
  auto params = load_granular_params();
  params.front().doc = "the table's loads, queries/s, ascending (one per model)";
  params.insert(params.begin(), ParamSpec{"models",
                                          ParamType::String,
                                          std::nullopt,
                                          "the table's models, comma-separated, one per load (see "
                                          "servelab.ramsis.model_switching_table)",
                                          {},
                                          {},
                                          false,
                                          {}});
  registry.add({"model_switching",
                "ModelSwitching (RAMSIS baseline): per load, the single model of a simulation-generated table; "
                "idle workers take adaptive batches from an in-order central queue.",
                std::move(params), [](const Params& p) {
                  LoadGranularOptions options = load_granular_options(p);
                  ModelSwitchingTable table{options.loads_qps, split_list_param("models", p.get_string("models"))};
                  return make_model_switching(std::move(table), std::move(options));
                }});
}

}  // namespace servelab::ramsis
