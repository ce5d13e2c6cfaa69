// servelab._core.ramsis: RAMSIS's offline side - latency tables, the per-worker MDP, policy
// generation with its guarantees, policy sets and their JSON (servelab.ramsis wraps it). Long calls
// release the GIL and stop on Ctrl-C.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/ramsis/guarantees.hpp"
#include "servelab/systems/ramsis/latency_table.hpp"
#include "servelab/systems/ramsis/mdp_builder.hpp"
#include "servelab/systems/ramsis/policy.hpp"
#include "servelab/systems/ramsis/policy_set.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::ramsis;

Nanos slo_from_ms(double slo_ms) {
  if (!(slo_ms > 0) || !std::isfinite(slo_ms)) throw ValueError(str("slo_ms=", slo_ms, " must be > 0"));
  return millis_to_nanos(slo_ms, "slo_ms");
}

// The MDP's options from Python (build_mdp checks them: MdpOptions::validate).
MdpOptions mdp_options(double slo_ms, double load_qps, const IntArg& workers, const IntArg& max_queue,
                       const std::string& discretisation, const IntArg& intervals, const std::string& batching,
                       const std::string& balancer, const std::string& arrivals, double shape, bool pareto,
                       double prune) {
  MdpOptions o;
  o.slo = slo_from_ms(slo_ms);
  o.load_qps = load_qps;
  o.workers = to_int<std::int32_t>(workers, "workers");
  o.max_queue = to_int<std::int32_t>(max_queue, "max_queue");
  o.discretisation = parse_discretisation(discretisation);
  o.intervals = to_int<std::int32_t>(intervals, "intervals");
  o.batching = parse_batching(batching);
  o.balancer = parse_balancer(balancer);
  o.arrivals = {arrivals, shape};
  o.pareto = pareto;
  o.prune = prune;
  return o;
}

#define MDP_ARGS                                                                                         \
  py::arg("max_queue") = 32, py::arg("discretisation") = "fld", py::arg("intervals") = 100,              \
  py::arg("batching") = "maximal", py::arg("balancer") = "round_robin", py::arg("arrivals") = "poisson", \
  py::arg("shape") = 1.0, py::arg("pareto") = true, py::arg("prune") = 1e-12

// The power iteration's options (evaluate and generate_policy check them).
solvers::mdp::StationaryOptions stationary_options(double tolerance, const IntArg& max_iterations) {
  solvers::mdp::StationaryOptions s;
  s.tolerance = tolerance;
  s.max_iterations = to_int<std::int32_t>(max_iterations, "max_iterations");
  return s;
}

// A state index of the MDP: 0 .. the overflow state (the last).
std::int32_t to_state(const RamsisMdp& r, const IntArg& state) {
  return to_int<std::int32_t>(state, "state", 0, r.overflow_state());
}

py::dict guarantees_dict(Guarantees&& g) {
  py::dict d;
  d["expected_accuracy"] = g.expected_accuracy;
  d["expected_violation"] = g.expected_violation;
  d["overflow_probability"] = g.overflow_probability;
  d["mean_batch"] = g.mean_batch;
  d["iterations"] = g.iterations;
  d["converged"] = g.converged;
  d["distribution"] = to_numpy(std::move(g.distribution));
  return d;
}

// generate_policy's result: the guarantees, the policy, the MDP's size and the time of each step.
py::dict generated_dict(Generated&& g) {
  py::dict d = guarantees_dict(std::move(g.guarantees));
  d["policy"] = std::move(g.policy);
  d["num_states"] = g.num_states;
  d["num_pairs"] = g.num_pairs;
  d["num_transitions"] = g.num_transitions;
  d["build_s"] = g.build_seconds;
  d["solve_s"] = g.solve_seconds;
  d["evaluate_s"] = g.evaluate_seconds;
  return d;
}

void bind_latency_table(py::module_& m) {
  py::class_<LatencyTable>(m, "LatencyTable",
                           "RAMSIS's latency input: one latency per (model, batch 1..max_batch), plus accuracies.")
      .def(py::init([](std::vector<std::string> models, std::vector<double> accuracy, const DoubleArray& latency_s) {
             if (latency_s.ndim() != 2) throw ValueError("latency_s must be a 2-D array [model, batch - 1]");
             return LatencyTable::from_seconds(
                 std::move(models), std::move(accuracy), {latency_s.data(), static_cast<std::size_t>(latency_s.size())},
                 static_cast<std::size_t>(latency_s.shape(0)), static_cast<std::size_t>(latency_s.shape(1)));
           }),
           py::arg("models"), py::arg("accuracy"), py::arg("latency_s"))
      .def_static("from_rows", &LatencyTable::from_rows, py::arg("models"), py::arg("accuracy"), py::arg("row_model"),
                  py::arg("row_batch"), py::arg("row_seconds"),
                  "From rows (model, batch, seconds); every model needs batches 1..B without gaps.")
      .def_static(
          "from_profile",
          [](const profile::Profile& p, const std::string& hardware, const std::vector<std::string>& models,
             const std::string& statistic, const IntArg& max_batch, const std::string& fill) {
            return LatencyTable::from_profile(p, hardware, models, profile::parse_statistic(statistic),
                                              to_int<std::int32_t>(max_batch, "max_batch"),
                                              LatencyTable::parse_fill(fill));
          },
          py::arg("profile"), py::arg("hardware"), py::arg("models"), py::arg("statistic") = "p95",
          py::arg("max_batch") = 0, py::arg("fill") = "none",
          "From a Profile: fill='none' rejects gaps, 'linear' interpolates inside, 'ols' fills and extends\n"
          "with an OLS line made non-decreasing (the artifact's derived table).")
      .def_readonly("models", &LatencyTable::models)
      .def_readonly("accuracy", &LatencyTable::accuracy)
      .def_property_readonly("max_batch", &LatencyTable::max_batch)
      .def_property_readonly("latency_s",
                             [](const LatencyTable& t) {
                               std::vector<double> flat;
                               for (const auto& row : t.latency) {
                                 for (const Nanos x : row) flat.push_back(nanos_to_seconds(x));
                               }
                               return to_numpy(std::move(flat), {t.num_models(), t.max_batch()});
                             })
      .def("latency",
           [](const LatencyTable& t, const std::string& model, const IntArg& batch) {
             return nanos_to_seconds(t.at(t.model_index(model), to_int<std::int32_t>(batch, "batch")));
           })
      .def(
          "pareto_front",
          [](const LatencyTable& t, const IntArg& batch) {
            return t.pareto_front(to_int<std::int32_t>(batch, "batch"));
          },
          py::arg("batch") = 1)
      .def("select", &LatencyTable::select, py::arg("models"))
      .def(
          "extended_to",
          [](const LatencyTable& t, const IntArg& batch) {
            return t.extended_to(to_int<std::int32_t>(batch, "batch"));
          },
          py::arg("batch"))
      .def("interpolated", &LatencyTable::interpolated, py::arg("step"))
      .def("__len__", &LatencyTable::num_models)
      .def("__repr__", [](const LatencyTable& t) {
        return str("LatencyTable(", t.num_models(), " models, batches 1..", t.max_batch(), ")");
      });
}

void bind_worker_policy(py::module_& m) {
  py::class_<WorkerPolicy>(m, "WorkerPolicy",
                           "A per-worker RAMSIS policy: an action (model, batch) per state (queue length, slack "
                           "level), plus its guarantees.")
      .def_readonly("models", &WorkerPolicy::models)
      .def_readonly("accuracy", &WorkerPolicy::accuracy)
      .def_property_readonly("slo_ms", [](const WorkerPolicy& p) { return nanos_to_millis(p.slo); })
      .def_readonly("load_qps", &WorkerPolicy::load_qps)
      .def_readonly("workers", &WorkerPolicy::workers)
      .def_readonly("balancer", &WorkerPolicy::balancer)
      .def_readonly("arrivals", &WorkerPolicy::arrivals)
      .def_property_readonly("discretisation",
                             [](const WorkerPolicy& p) { return discretisation_name(p.discretisation); })
      .def_readonly("intervals", &WorkerPolicy::intervals)
      .def_property_readonly("batching", [](const WorkerPolicy& p) { return batching_name(p.batching); })
      .def_readonly("max_queue", &WorkerPolicy::max_queue)
      .def_property_readonly("slack_levels_s", [](const WorkerPolicy& p) { return to_numpy_seconds(p.slack_levels); })
      .def_property_readonly("num_states", &WorkerPolicy::num_states)
      .def_property_readonly("num_levels", &WorkerPolicy::num_levels)
      .def_property_readonly("action_model", [](const WorkerPolicy& p) { return to_numpy_copy(p.action_model); })
      .def_property_readonly("action_batch", [](const WorkerPolicy& p) { return to_numpy_copy(p.action_batch); })
      .def_readonly("expected_accuracy", &WorkerPolicy::expected_accuracy)
      .def_readonly("expected_violation", &WorkerPolicy::expected_violation)
      .def_readonly("feasible", &WorkerPolicy::feasible)
      .def(
          "decide",
          [](const WorkerPolicy& p, const IntArg& queue_length, double earliest_slack_ms) {
            const Action a = p.decide(to_int<std::int32_t>(queue_length, "queue_length"),
                                      millis_to_nanos(earliest_slack_ms, "earliest_slack_ms"));
            return py::make_tuple(a.model < 0 ? py::object(py::none()) : py::object(py::str(p.models[a.model])),
                                  a.batch);
          },
          py::arg("queue_length"), py::arg("earliest_slack_ms"),
          "(model name or None to wait, batch) for a queue of queue_length whose earliest deadline is "
          "earliest_slack_ms away.")
      .def("level_of",
           [](const WorkerPolicy& p, double slack_ms) { return p.level_of(millis_to_nanos(slack_ms, "slack_ms")); })
      .def("to_json", [](const WorkerPolicy& p) { return to_json(p); })
      .def_static("from_json", &worker_policy_from_json, py::arg("text"))
      .def(py::pickle([](const WorkerPolicy& p) { return to_json(p); },
                      [](const std::string& text) { return worker_policy_from_json(text); }))
      .def("__repr__", [](const WorkerPolicy& p) {
        return str("WorkerPolicy(load_qps=", p.load_qps, ", workers=", p.workers, ", slo_ms=", nanos_to_millis(p.slo),
                   ", ", p.models.size(), " models, ", p.num_states(),
                   " states, expected_accuracy=", p.expected_accuracy, ", expected_violation=", p.expected_violation,
                   p.feasible ? "" : ", INFEASIBLE", ")");
      });
}

void bind_policy_set(py::module_& m) {
  py::class_<PolicySet>(m, "PolicySet", "RAMSIS policies for one task across loads (ascending).")
      .def_readonly("models", &PolicySet::models)
      .def_readonly("accuracy", &PolicySet::accuracy)
      .def_property_readonly("slo_ms", [](const PolicySet& s) { return nanos_to_millis(s.slo); })
      .def_readonly("workers", &PolicySet::workers)
      .def_readonly("policies", &PolicySet::policies)
      .def_property_readonly("loads_qps",
                             [](const PolicySet& s) {
                               std::vector<double> loads;
                               for (const auto& p : s.policies) loads.push_back(p.load_qps);
                               return to_numpy(std::move(loads));
                             })
      .def("lookup", &PolicySet::lookup, py::arg("load_qps"), py::return_value_policy::copy,
           "The policy of the smallest grid load at or above load_qps (the highest when above all).")
      .def("lookup_index", &PolicySet::lookup_index, py::arg("load_qps"))
      .def("to_json", [](const PolicySet& s) { return to_json(s); })
      .def_static("from_json", &policy_set_from_json, py::arg("text"))
      .def(py::pickle([](const PolicySet& s) { return to_json(s); },
                      [](const std::string& text) { return policy_set_from_json(text); }))
      .def("__len__", [](const PolicySet& s) { return s.policies.size(); })
      .def("__repr__", [](const PolicySet& s) {
        return str("PolicySet(", s.policies.size(), " policies, ", s.models.size(), " models, workers=", s.workers,
                   ", slo_ms=", nanos_to_millis(s.slo), ")");
      });
}

using MdpClass = py::class_<RamsisMdp>;

// The generic Mdp and its arrays (copies), the latency table and the slack levels.
void def_mdp_arrays(MdpClass& mdp) {
  mdp.def_property_readonly("mdp", [](const RamsisMdp& r) { return r.mdp; })
      .def_property_readonly("num_states", [](const RamsisMdp& r) { return r.mdp.num_states(); })
      .def_property_readonly("num_pairs", [](const RamsisMdp& r) { return r.mdp.num_pairs(); })
      .def_property_readonly("num_transitions", [](const RamsisMdp& r) { return r.mdp.next_state.size(); })
      .def_property_readonly("num_levels", &RamsisMdp::num_levels)
      .def_property_readonly("max_queue", [](const RamsisMdp& r) { return r.options.max_queue; })
      .def_property_readonly("overflow_state", &RamsisMdp::overflow_state)
      .def_property_readonly("table", [](const RamsisMdp& r) { return r.table; })
      .def_property_readonly("slack_levels_s", [](const RamsisMdp& r) { return to_numpy_seconds(r.slack_levels); })
      .def_property_readonly("state_begin", [](const RamsisMdp& r) { return to_numpy_copy(r.mdp.state_begin); })
      .def_property_readonly("pair_begin", [](const RamsisMdp& r) { return to_numpy_copy(r.mdp.pair_begin); })
      .def_property_readonly("next_state", [](const RamsisMdp& r) { return to_numpy_copy(r.mdp.next_state); })
      .def_property_readonly("probability", [](const RamsisMdp& r) { return to_numpy_copy(r.mdp.probability); })
      .def_property_readonly("reward", [](const RamsisMdp& r) { return to_numpy_copy(r.mdp.reward); });
}

// What the states and pairs mean: (queue length, level), (model, batch, violates), policies.
void def_mdp_meaning(MdpClass& mdp) {
  mdp.def_property_readonly("pair_model",
                            [](const RamsisMdp& r) {
                              std::vector<std::int32_t> v;
                              for (const auto& p : r.pairs) v.push_back(p.model);
                              return to_numpy(std::move(v));
                            })
      .def_property_readonly("pair_batch",
                             [](const RamsisMdp& r) {
                               std::vector<std::int32_t> v;
                               for (const auto& p : r.pairs) v.push_back(p.batch);
                               return to_numpy(std::move(v));
                             })
      .def_property_readonly("pair_violates",
                             [](const RamsisMdp& r) {
                               std::vector<std::uint8_t> v;
                               for (const auto& p : r.pairs) v.push_back(p.violates ? 1 : 0);
                               return to_numpy(std::move(v)).attr("astype")("bool");
                             })
      .def(
          "queue_length", [](const RamsisMdp& r, const IntArg& state) { return r.queue_length(to_state(r, state)); },
          py::arg("state"))
      .def(
          "level", [](const RamsisMdp& r, const IntArg& state) { return r.level(to_state(r, state)); },
          py::arg("state"))
      .def(
          "to_policy",
          [](const RamsisMdp& r, const py::object& choice) {
            return to_worker_policy(r, to_int_list<std::int32_t>(choice, "choice"));
          },
          py::arg("choice"), "The WorkerPolicy of solver action indices (one per state); no guarantees filled in.")
      .def(
          "choice_of", [](const RamsisMdp& r, const WorkerPolicy& p) { return to_numpy(policy_choice(r, p)); },
          py::arg("policy"), "The solver action index per state of a WorkerPolicy made for this MDP.")
      .def("__repr__", [](const RamsisMdp& r) {
        return str("RamsisMdp(", r.mdp.num_states(), " states, ", r.mdp.num_pairs(), " pairs, ",
                   r.mdp.next_state.size(), " transitions, ", r.table.num_models(), " models)");
      });
}

void bind_ramsis_mdp(py::module_& m) {
  MdpClass mdp(m, "RamsisMdp", "A RAMSIS per-worker MDP: the generic Mdp plus what its states and pairs mean.");
  def_mdp_arrays(mdp);
  def_mdp_meaning(mdp);
}

// One load: build_mdp, generate_policy (build, solve, evaluate) and evaluate.
void bind_policy_functions(py::module_& m) {
  m.def(
      "build_mdp",
      [](const LatencyTable& table, double slo_ms, double load_qps, const IntArg& workers, const IntArg& max_queue,
         const std::string& discretisation, const IntArg& intervals, const std::string& batching,
         const std::string& balancer, const std::string& arrivals, double shape, bool pareto, double prune) {
        const MdpOptions o = mdp_options(slo_ms, load_qps, workers, max_queue, discretisation, intervals, batching,
                                         balancer, arrivals, shape, pareto, prune);
        return run_long([&] { return build_mdp(table, o); });
      },
      py::arg("table"), py::kw_only(), py::arg("slo_ms"), py::arg("load_qps"), py::arg("workers"), MDP_ARGS);

  m.def(
      "generate_policy",
      [](const LatencyTable& table, double slo_ms, double load_qps, const IntArg& workers, const IntArg& max_queue,
         const std::string& discretisation, const IntArg& intervals, const std::string& batching,
         const std::string& balancer, const std::string& arrivals, double shape, bool pareto, double prune,
         const IntArg& sweeps, double max_violation, double tolerance, const IntArg& max_iterations,
         const IntArg& threads) {
        GenerateOptions o;
        o.mdp = mdp_options(slo_ms, load_qps, workers, max_queue, discretisation, intervals, batching, balancer,
                            arrivals, shape, pareto, prune);
        o.sweeps = to_int<std::int32_t>(sweeps, "sweeps");
        o.max_violation = max_violation;
        o.stationary = stationary_options(tolerance, max_iterations);
        o.threads = to_int<std::int32_t>(threads, "threads");
        return generated_dict(run_long([&] { return generate_policy(table, o); }));
      },
      py::arg("table"), py::kw_only(), py::arg("slo_ms"), py::arg("load_qps"), py::arg("workers"), MDP_ARGS,
      py::arg("sweeps") = 100, py::arg("max_violation") = 0.01, py::arg("tolerance") = 1e-12,
      py::arg("max_iterations") = 100000, py::arg("threads") = 0);

  m.def(
      "evaluate",
      [](const RamsisMdp& r, const py::object& policy, double tolerance, const IntArg& max_iterations) {
        solvers::mdp::Policy choice;
        if (py::isinstance<WorkerPolicy>(policy)) {
          choice = policy_choice(r, policy.cast<const WorkerPolicy&>());
        } else {
          choice = to_int_list<std::int32_t>(policy, "policy");
        }
        const auto s = stationary_options(tolerance, max_iterations);
        return guarantees_dict(run_long([&] { return evaluate(r, choice, s); }));
      },
      py::arg("mdp"), py::arg("policy"), py::kw_only(), py::arg("tolerance") = 1e-12,
      py::arg("max_iterations") = 100000,
      "Guarantees (Sec. 5.1) of a policy (a WorkerPolicy or solver action indices) on an MDP.");
}

// Across loads: generate_policy_set.
void bind_policy_set_functions(py::module_& m) {
  m.def(
      "generate_policy_set",
      [](const LatencyTable& table, std::vector<double> loads, double slo_ms, const IntArg& workers,
         const IntArg& max_queue, const std::string& discretisation, const IntArg& intervals,
         const std::string& batching, const std::string& balancer, const std::string& arrivals, double shape,
         bool pareto, double prune, const IntArg& sweeps, double max_violation, double max_accuracy_gap,
         double min_load_step_qps, const IntArg& max_policies, const IntArg& threads) {
        PolicySetOptions o;
        // Every policy of the set takes its own load from the grid.
        o.generate.mdp = mdp_options(slo_ms, 0.0, workers, max_queue, discretisation, intervals, batching, balancer,
                                     arrivals, shape, pareto, prune);
        o.generate.sweeps = to_int<std::int32_t>(sweeps, "sweeps");
        o.generate.max_violation = max_violation;
        o.loads_qps = std::move(loads);
        o.max_accuracy_gap = max_accuracy_gap;
        o.min_load_step_qps = min_load_step_qps;
        o.max_policies = to_int<std::int32_t>(max_policies, "max_policies");
        o.threads = to_int<std::int32_t>(threads, "threads");
        return run_long([&] { return generate_policy_set(table, o); });
      },
      py::arg("table"), py::arg("loads"), py::kw_only(), py::arg("slo_ms"), py::arg("workers"), MDP_ARGS,
      py::arg("sweeps") = 100, py::arg("max_violation") = 0.01, py::arg("max_accuracy_gap") = 0.01,
      py::arg("min_load_step_qps") = 10.0, py::arg("max_policies") = 256, py::arg("threads") = 1);
}

}  // namespace

void init_ramsis(py::module_& m) {
  bind_latency_table(m);
  bind_worker_policy(m);
  bind_policy_set(m);
  bind_ramsis_mdp(m);
  bind_policy_functions(m);
  bind_policy_set_functions(m);
}

}  // namespace servelab::bindings
