// _core.infaas: the metadata store, getVariant (and its brute-force reference), the
// Model-Autoscaler's solvers (the greedy built in; 'ilp' joins from servelab._lp through the
// capsule below) and the profile -> variants bridge. servelab.infaas wraps them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bind_infaas_args.hpp"
#include "long_call.hpp"
#include "scaling_solver_plugin.hpp"
// The periodic Model-Autoscaler's per-application decision (a header of the infaas area, not of
// the public include tree): bound so that the real server decides with the simulated policy's code.
#include "servelab/core/interrupt.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/infaas/get_variant.hpp"
#include "servelab/systems/infaas/metadata_store.hpp"
#include "servelab/systems/infaas/model_autoscaler.hpp"
#include "servelab/systems/infaas/profile_variants.hpp"
#include "servelab/systems/infaas/scaling.hpp"
#include "servelab/systems/infaas/scaling_solvers.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using infaas::MetadataStore;

infaas::VariantId variant_arg(const MetadataStore& s, const py::object& v) {
  if (py::isinstance<py::str>(v)) return s.variant_id(v.cast<std::string>());
  try {
    return v.cast<infaas::VariantId>();
  } catch (const py::cast_error&) {
    throw ValueError(str("variant=", py::repr(v).cast<std::string>(), " is neither a name nor an index"));
  }
}

py::dict problem_dict(const infaas::ScalingProblem& p) {
  py::dict d;
  d["names"] = p.names;
  d["architecture"] = p.architecture;
  d["saturation_qps"] = p.saturation_qps;
  d["cost_per_s"] = p.cost_per_s;
  d["load_s"] = p.load_s;
  d["latency_ms"] = p.latency_ms;
  d["running"] = p.running;
  d["resource_types"] = p.resource_types;
  d["requirement"] = p.requirement;
  d["capacity"] = p.capacity;
  d["load_qps"] = p.load_qps;
  d["slack_qps"] = p.slack_qps;
  d["slo_ms"] = p.slo_ms;
  d["lambda"] = p.lambda;
  return d;
}

double finite_arg(const char* field, double value, double lowest) {
  if (!(std::isfinite(value) && value >= lowest)) throw ValueError(str(field, "=", value, " must be >= ", lowest));
  return value;
}

py::dict choice_dict(const MetadataStore& s, const infaas::Choice& c) {
  py::dict d;
  d["kind"] = std::string(infaas::choice_kind_name(c.kind));
  d["variant"] = c.variant >= 0 ? py::object(py::str(s.variant(c.variant).name)) : py::object(py::none());
  d["variant_index"] = c.variant;
  d["worker"] = c.worker;
  d["reason"] = c.reason;
  return d;
}

}  // namespace

namespace {

// Backend modules add scaling solvers through this table (scaling_solver_plugin.hpp).
const ScalingSolverPluginRecord scaling_solver_table{
    .abi_version = kScalingSolverAbiVersion,
    .join = [](const std::string& name, infaas::ScalingSolver solver, const std::string& module) {
      infaas::register_scaling_solver(name, std::move(solver), module);
    }};

// autoscaler='ilp' loads servelab._lp (which registers it as it loads), from whichever thread
// builds the policy; why it does not load becomes the policy's RuntimeError.
// Another unknown name loads it too where it can, so that the error lists every solver there is.
std::string load_scaling_solver(const std::string& name) {
  py::gil_scoped_acquire gil;
  try {
    py::module_::import("servelab.backends").attr("require")("lp");
  } catch (py::error_already_set& e) {
    return name == "ilp" ? str("the LP backend (servelab._lp): ", e.what()) : std::string();
  }
  return {};
}

}  // namespace

void init_infaas(py::module_& m) {
  publish_plugin_record(m, "_scaling_solver_plugins", scaling_solver_table, kScalingSolverCapsule);
  infaas::set_scaling_solver_loader(load_scaling_solver);
  m.def(
      "scaling_solvers",
      [] {
        std::map<std::string, std::string> out;
        for (const auto& name : infaas::scaling_solvers()) out[name] = infaas::scaling_solver_origin(name);
        return out;
      },
      "The Model-Autoscaler's solvers by name (the infaas policy's autoscaler=) and the module each came "
      "from; 'ilp' joins when servelab._lp loads.");
  py::class_<MetadataStore>(m, "MetadataStore", "INFaaS's metadata store: variants, workers, instance states.")
      .def(py::init([](const py::list& variants) {
             std::vector<infaas::Variant> out;
             for (std::size_t i = 0; i < variants.size(); ++i) out.push_back(infaas_variant(variants[i], i));
             return MetadataStore(std::move(out));
           }),
           py::arg("variants"))
      .def_property_readonly("num_variants", &MetadataStore::num_variants)
      .def_property_readonly("num_workers", &MetadataStore::num_workers)
      .def_property_readonly("tasks", &MetadataStore::tasks)
      .def(
          "variant",
          [](const MetadataStore& s, const py::object& v) { return infaas_variant_dict(s.variant(variant_arg(s, v))); },
          py::arg("variant"))
      .def("variant_index", &MetadataStore::variant_id, py::arg("name"))
      .def(
          "by_task", [](const MetadataStore& s, const std::string& t) { return s.by_task(t); }, py::arg("task"))
      .def(
          "add_worker",
          [](MetadataStore& s, const std::string& hardware) {
            // From Python a worker no variant runs on is a typo ('tpu'); the policy's own store
            // (C++) keeps every cluster worker, so the check is here, not in add_worker.
            std::set<std::string> known;
            for (const auto& v : s.variants()) known.insert(v.hardware);
            if (!known.contains(hardware)) {
              std::string list;
              for (const auto& h : known) list += (list.empty() ? "'" : ", '") + h + "'";
              throw ValueError(str("hardware='", hardware, "' runs no variant of this store (hardware: ", list, ")"));
            }
            return s.add_worker(hardware);
          },
          py::arg("hardware"))
      .def("remove_worker", &MetadataStore::remove_worker, py::arg("worker"))
      .def("alive", &MetadataStore::alive, py::arg("worker"))
      .def("worker_hardware", &MetadataStore::worker_hardware, py::arg("worker"))
      .def("utilisation", &MetadataStore::utilisation, py::arg("worker"))
      .def("set_utilisation", &MetadataStore::set_utilisation, py::arg("worker"), py::arg("utilisation"))
      .def(
          "load", [](MetadataStore& s, const py::object& v, infaas::WorkerId w) { s.load(variant_arg(s, v), w); },
          py::arg("variant"), py::arg("worker"))
      .def(
          "unload", [](MetadataStore& s, const py::object& v, infaas::WorkerId w) { s.unload(variant_arg(s, v), w); },
          py::arg("variant"), py::arg("worker"))
      .def(
          "set_state",
          [](MetadataStore& s, const py::object& v, infaas::WorkerId w, const std::string& state) {
            s.set_state(variant_arg(s, v), w, infaas::parse_state(state));
          },
          py::arg("variant"), py::arg("worker"), py::arg("state"))
      .def(
          "state",
          [](const MetadataStore& s, const py::object& v, infaas::WorkerId w) {
            return std::string(infaas::state_name(s.state(variant_arg(s, v), w)));
          },
          py::arg("variant"), py::arg("worker"))
      .def(
          "active_instances",
          [](const MetadataStore& s, const py::object& v) { return s.active_instances(variant_arg(s, v)); },
          py::arg("variant"))
      .def(
          "saturation_qps",
          [](const MetadataStore& s, const py::object& v, std::optional<double> slo_ms) {
            const auto& var = s.variant(variant_arg(s, v));
            return slo_ms ? var.saturation_qps(finite_arg("slo_ms", *slo_ms, 0.0)) : var.saturation_qps();
          },
          py::arg("variant"), py::arg("slo_ms") = py::none(),
          "Q_v (Sec. 4.2.1): the variant's saturation QPS over the batches whose latency meets slo_ms "
          "(constraint (2); 0 when not even batch 1 does), or over every batch when slo_ms is None.")
      .def(
          "get_variant",
          [](const MetadataStore& s, const std::optional<std::string>& task, const std::optional<std::string>& model,
             double accuracy, double latency_ms, std::int32_t batch, bool brute_force) {
            infaas::Requirements req;
            req.task = task.value_or("");
            req.architecture = model.value_or("");
            req.accuracy = accuracy;
            req.latency_ms = latency_ms;
            req.batch = batch;
            return choice_dict(s, brute_force ? infaas::get_variant_brute_force(s, req) : infaas::get_variant(s, req));
          },
          py::arg("task") = py::none(), py::arg("model") = py::none(), py::arg("accuracy") = 0.0,
          py::arg("latency_ms") = 0.0, py::arg("batch") = 1, py::arg("brute_force") = false)
      .def(
          "time_get_variant",
          [](const MetadataStore& s, const std::string& task, double accuracy, double latency_ms, std::int32_t batch,
             bool brute_force, std::int64_t repeats) {
            if (repeats < 1) throw ValueError(str("repeats=", repeats, " must be >= 1"));
            infaas::Requirements req;
            req.task = task;
            req.accuracy = accuracy;
            req.latency_ms = latency_ms;
            req.batch = batch;
            // The median of `repeats` single calls, seconds: the decision latency Table 7 reports.
            std::vector<double> times;
            {
              LongCall call;
              for (std::int64_t r = 0; r < repeats; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                const auto c = brute_force ? infaas::get_variant_brute_force(s, req) : infaas::get_variant(s, req);
                const auto t1 = std::chrono::steady_clock::now();
                if (c.variant == -2) break;  // keeps the call from being optimised away
                times.push_back(std::chrono::duration<double>(t1 - t0).count());
                if (r % 1024 == 0) core::check_interrupt();
              }
            }
            std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
            return times[times.size() / 2];
          },
          py::arg("task"), py::arg("accuracy"), py::arg("latency_ms"), py::arg("batch") = 1,
          py::arg("brute_force") = false, py::arg("repeats") = 1001);

  m.def(
      "variants_from_profile",
      [](const profile::Profile& profile, const std::string& statistic, const std::vector<std::string>& hardware) {
        py::list out;
        for (const auto& v : infaas::variants_from_profile(profile, profile::parse_statistic(statistic), hardware)) {
          out.append(infaas_variant_dict(v));
        }
        return out;
      },
      py::arg("profile"), py::arg("statistic") = "mean", py::arg("hardware") = std::vector<std::string>{});
  m.def(
      "greedy_scaling",
      [](const py::dict& problem) { return infaas_plan_dict(infaas::greedy_scaling(infaas_problem(problem))); },
      py::arg("problem"), "Sec. 4.2.2's greedy Model-Autoscaler on a scaling problem (dict).");
  m.def(
      "application_problem",
      [](const MetadataStore& s, const std::string& task, double accuracy, double slo_ms, double load_qps, double slack,
         const std::vector<double>& availability) -> py::object {
        infaas::AppGoals goals;
        goals.seen = true;
        goals.task = task;
        goals.accuracy = finite_arg("accuracy", accuracy, 0.0);
        goals.slo_ms = finite_arg("slo_ms", slo_ms, 0.0);
        if (goals.slo_ms <= 0) throw ValueError(str("slo_ms=", slo_ms, " must be > 0"));
        if (!task.empty()) s.by_task(task);  // KeyError naming an unknown task
        for (std::size_t w = 0; w < availability.size(); ++w) {
          const double a = availability[w];
          if (!(std::isfinite(a) && a >= 0 && a <= 1))
            throw ValueError(str("availability[", w, "]=", a, " must be in [0, 1]"));
        }
        std::vector<infaas::VariantId> ids;
        const auto p = infaas::application_problem(s, goals, finite_arg("load_qps", load_qps, 0.0),
                                                   finite_arg("slack", slack, 1.0), ids, availability);
        if (ids.empty()) return py::none();
        return problem_dict(p);
      },
      py::arg("store"), py::arg("task"), py::arg("accuracy"), py::arg("slo_ms"), py::arg("load_qps"),
      py::arg("slack") = 1.05, py::arg("availability") = std::vector<double>{},
      "The simulated infaas policy's scaling problem for one application (its task's variants meeting "
      "the accuracy floor, N_v from the store's live instances, slack = load x (slack - 1)); None when no "
      "variant meets the floor on the hardware of a live worker.");
  m.def(
      "plan_scaling",
      [](const py::dict& problem, const std::string& autoscaler, bool loads_under_way) {
        const auto p = infaas_problem(problem);
        const auto solve = infaas::scaling_solver(autoscaler);  // ValueError naming autoscaler=
        const auto plan = infaas::plan_scaling(p, solve);
        return infaas_plan_dict(loads_under_way ? infaas::while_loading(p, plan) : plan);
      },
      py::arg("problem"), py::arg("autoscaler") = "greedy", py::arg("loads_under_way") = false,
      "The simulated infaas policy's decision: the autoscaler's plan ('greedy' or 'ilp'), or the most "
      "load the workers carry (status 'needs_vm') when no plan fits. loads_under_way=True: only what "
      "may go ahead while the application's loads are under way (replicas_only False: nothing).");
}

}  // namespace servelab::bindings
