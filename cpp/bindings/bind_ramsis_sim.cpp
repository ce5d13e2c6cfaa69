// servelab._core.ramsis: the online side of RAMSIS and its baselines. Each factory returns a
// servelab.Scheduler that runs in servelab.simulate and servelab.serve; the ModelSwitching table
// generator runs its simulations with the GIL released (Ctrl-C stops it).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "seed.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/ramsis/jellyfish.hpp"
#include "servelab/systems/ramsis/model_switching.hpp"
#include "servelab/systems/ramsis/model_switching_table.hpp"
#include "servelab/systems/ramsis/policy.hpp"
#include "servelab/systems/ramsis/scheduler.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using namespace servelab::ramsis;

// The baselines' common parameters, checked by their registry entries (one set of rules).
ParamArgs load_granular_args(std::vector<double> loads, double load_qps, double slo_ms, double window_ms) {
  return {{"loads", std::move(loads)}, {"load_qps", load_qps}, {"slo_ms", slo_ms}, {"window_ms", window_ms}};
}

// A policy set from a PolicySet or WorkerPolicy object, anything with to_json(), or a JSON path.
std::pair<std::shared_ptr<const PolicySet>, std::string> to_policy_set(const py::object& policies) {
  if (policies.is_none()) throw ValueError("policies=None: give a PolicySet or a policy set JSON path");
  if (py::isinstance<py::str>(policies) || py::hasattr(policies, "__fspath__")) {
    const auto path = py::str(py::module_::import("os").attr("fspath")(policies)).cast<std::string>();
    return {load_policy_set(path), path};
  }
  try {
    return {std::make_shared<const PolicySet>(policies.cast<PolicySet>()), "<PolicySet>"};
  } catch (const py::cast_error&) {
  }
  try {
    return {std::make_shared<const PolicySet>(policy_set_of(policies.cast<WorkerPolicy>())), "<WorkerPolicy>"};
  } catch (const py::cast_error&) {
  }
  if (py::hasattr(policies, "to_json")) {
    return {std::make_shared<const PolicySet>(any_policy_set_from_json(policies.attr("to_json")().cast<std::string>())),
            "<PolicySet>"};
  }
  throw ValueError(str("policies=", py::repr(policies).cast<std::string>(),
                       " is neither a PolicySet, a WorkerPolicy nor a path to a policy set JSON file"));
}

// ModelSwitching's table search as a dict; violation and simulated are [load, candidate].
py::dict model_switching_dict(const ModelSwitchingResult& r) {
  const auto n_loads = static_cast<py::ssize_t>(r.violation.size());
  const auto n_models = static_cast<py::ssize_t>(r.candidates.size());
  std::vector<double> violation;
  std::vector<std::uint8_t> simulated;
  for (std::size_t i = 0; i < r.violation.size(); ++i) {
    violation.insert(violation.end(), r.violation[i].begin(), r.violation[i].end());
    simulated.insert(simulated.end(), r.simulated[i].begin(), r.simulated[i].end());
  }
  py::dict out;
  out["loads"] = r.table.loads_qps;
  out["models"] = r.table.models;
  out["candidates"] = r.candidates;
  out["violation"] = to_numpy(std::move(violation), {n_loads, n_models});
  out["simulated"] = to_numpy(std::move(simulated), {n_loads, n_models});
  return out;
}

// The schedulers: RAMSIS for a policy set, and the Jellyfish+ and ModelSwitching baselines.
void bind_schedulers(py::module_& m) {
  m.def(
      "ramsis_scheduler",
      [](const py::object& policies, double load_qps, double window_ms) {
        auto [set, source] = to_policy_set(policies);
        RamsisOptions o;
        o.fixed_load_qps = load_qps;
        if (!(window_ms > 0)) throw ValueError(str("window_ms=", window_ms, " must be positive"));
        o.window = millis_to_nanos(window_ms, "window_ms");
        o.source = source;
        return make_ramsis(std::move(set), o);
      },
      py::arg("policies"), py::kw_only(), py::arg("load_qps") = 0.0, py::arg("window_ms") = 500.0,
      "The RAMSIS online scheduler for a policy set (a PolicySet, a WorkerPolicy or a JSON path):\n"
      "round-robin per-worker EDF queues, the policy of the estimated load (moving average over\n"
      "window_ms) decides (model, batch) at each decision; load_qps > 0 fixes the load instead.");

  m.def(
      "jellyfish_scheduler",
      [](std::vector<double> loads, double load_qps, double slo_ms, double window_ms) {
        return catalogue::schedulers().make("jellyfish",
                                            load_granular_args(std::move(loads), load_qps, slo_ms, window_ms));
      },
      py::kw_only(), py::arg("loads") = std::vector<double>{}, py::arg("load_qps") = 0.0, py::arg("slo_ms") = 0.0,
      py::arg("window_ms") = 500.0,
      "Jellyfish+: per load (the smallest of `loads` at or above the estimate, or the estimate itself),\n"
      "the most accurate model sustaining it with 5% headroom at a batch within half the SLO;\n"
      "idle workers take batches from an in-order central queue. slo_ms=0: the queries' SLO.");

  m.def(
      "model_switching_scheduler",
      [](std::vector<double> loads, std::vector<std::string> models, double load_qps, double slo_ms, double window_ms) {
        ParamArgs args = load_granular_args(std::move(loads), load_qps, slo_ms, window_ms);
        std::string joined;
        for (const auto& model : models) joined += (joined.empty() ? "" : ",") + model;
        args["models"] = joined;
        return catalogue::schedulers().make("model_switching", args);
      },
      py::arg("loads"), py::arg("models"), py::kw_only(), py::arg("load_qps") = 0.0, py::arg("slo_ms") = 0.0,
      py::arg("window_ms") = 500.0,
      "ModelSwitching: the model of the table entry (loads[i] -> models[i]) the load selects, adaptive\n"
      "batches from an in-order central queue.");
}

// What the baselines decide offline: Jellyfish's batching rule and ModelSwitching's choice table.
void bind_baseline_functions(py::module_& m) {
  m.def(
      "adaptive_batch_rule",
      [](const profile::Profile& profile, const std::string& hardware, const std::vector<std::string>& models,
         double slo_ms, double rate_per_worker_qps, double headroom, const std::string& statistic) {
        const auto stat = profile::parse_statistic(statistic, "statistic");
        const auto hw = profile.hardware_index(hardware);
        std::vector<ModelCurve> curves;
        for (const auto& name : models) curves.push_back(profile_curve(profile, hw, profile.model_index(name), stat));
        const BatchRule r =
            adaptive_batch_rule(curves, millis_to_nanos(slo_ms, "slo_ms"), rate_per_worker_qps, headroom);
        return py::make_tuple(profile.models()[r.model], r.max_batch);
      },
      py::arg("profile"), py::arg("hardware"), py::arg("models"), py::kw_only(), py::arg("slo_ms"),
      py::arg("rate_per_worker_qps"), py::arg("headroom") = kJellyfishHeadroom, py::arg("statistic") = "p95",
      "(model, max_batch) of Jellyfish's adaptive batching rule for one worker at a per-worker rate.");

  m.def(
      "model_switching_table",
      [](const profile::Profile& profile, const std::string& hardware, const IntArg& workers, double slo_ms,
         std::vector<double> loads, std::vector<std::string> models, double duration_s, double target_violation,
         const py::object& seed, const IntArg& replications, const std::string& statistic, const IntArg& threads) {
        ModelSwitchingSearch s;
        s.profile = std::make_shared<const profile::Profile>(profile);  // a snapshot, as runs take
        s.hardware = hardware;
        s.models = std::move(models);
        s.workers = to_int<std::int32_t>(workers, "workers");
        s.slo = millis_to_nanos(slo_ms, "slo_ms");
        s.loads_qps = std::move(loads);
        s.duration = seconds_to_nanos(duration_s, "duration_s");
        s.target_violation = target_violation;
        s.seed = to_seed(seed);
        s.replications = to_int<std::int32_t>(replications, "replications");
        s.statistic = profile::parse_statistic(statistic, "statistic");
        s.threads = to_int<std::int32_t>(threads, "threads");
        return model_switching_dict(run_long([&] { return generate_model_switching_table(s); }));
      },
      py::arg("profile"), py::arg("hardware"), py::kw_only(), py::arg("workers"), py::arg("slo_ms"), py::arg("loads"),
      py::arg("models") = std::vector<std::string>{}, py::arg("duration_s") = 300.0, py::arg("target_violation") = 0.01,
      py::arg("seed") = 0, py::arg("replications") = 1, py::arg("statistic") = "p95", py::arg("threads") = 1,
      "ModelSwitching's choice table: for each load, the most accurate model whose simulated violation\n"
      "rate (constant Poisson load, fixed service times; pooled over `replications` seeds) is below\n"
      "target_violation. Returns {loads,\n"
      "models, candidates, violation [load x candidate] (NaN: not needed), simulated}.");
}

}  // namespace

void init_ramsis_sim(py::module_& m) {
  bind_schedulers(m);
  bind_baseline_functions(m);
}

}  // namespace servelab::bindings
