// servelab._core.rrl: RRL's configuration spaces, performance model, estimator, learners and the
// simulated tuning experiment. Options arrive as dicts (built by servelab.rrl's dataclasses) and are
// checked here by name; long calls release the GIL and stop on Ctrl-C.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "estimator_plugin.hpp"
#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "seed.hpp"
#include "servelab/systems/rrl/config_space.hpp"
#include "servelab/systems/rrl/deep_rl.hpp"
#include "servelab/systems/rrl/episode.hpp"
#include "servelab/systems/rrl/estimator.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"
#include "servelab/systems/rrl/perf_model.hpp"
#include "servelab/systems/rrl/q_learner.hpp"
#include "servelab/systems/rrl/tuning.hpp"
#include "workload_args.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using namespace servelab::rrl;
using Setter = std::function<void(py::handle)>;

struct DeepRlTuner {
  std::shared_ptr<ConfigSpace> space;
  std::unique_ptr<Tuner> tuner;
};

// Applies a dict of options by name; KeyError for a name not in `setters`, naming the known ones.
void apply(const py::dict& values, const std::map<std::string, Setter>& setters, const char* what) {
  for (const auto& [key, value] : values) {
    const auto name = py::str(key).cast<std::string>();
    const auto it = setters.find(name);
    if (it == setters.end()) {
      std::string known;
      for (const auto& [k, _] : setters) known += (known.empty() ? "" : ", ") + k;
      throw KeyError(str(what, " has no option '", name, "' (known: ", known, ")"));
    }
    try {
      it->second(value);
    } catch (const py::cast_error&) {
      throw ValueError(str(what, " option ", name, "=", py::repr(value).cast<std::string>(),
                           " is not valid (wrong type, or a negative count)"));
    }
  }
}

template <typename T>
Setter set(T& target) {
  return [&target](py::handle v) {
    if (py::isinstance<py::bool_>(v) && !std::is_same_v<T, bool>) throw py::cast_error();
    target = v.cast<T>();
  };
}

PerfModel to_model(const py::dict& d) {
  PerfModel m;
  apply(d,
        {{"cores", set(m.cpu.cores)},
         {"base_ms", set(m.cpu.base_ms)},
         {"intra_fraction", set(m.cpu.intra_fraction)},
         {"inter_fraction", set(m.cpu.inter_fraction)},
         {"op_width", set(m.cpu.op_width)},
         {"interference", set(m.cpu.interference)},
         {"sync_ms", set(m.cpu.sync_ms)},
         {"batch_fixed_ms", set(m.gpu.batch_fixed_ms)},
         {"per_item_ms", set(m.gpu.per_item_ms)},
         {"gpu_interference", set(m.gpu.interference)},
         {"noise_cv", set(m.noise_cv)}},
        "the performance model");
  m.validate();
  return m;
}

// Backend modules add estimator backends through this table (estimator_plugin.hpp).
const EstimatorPluginRecord estimator_plugin_table{
    .abi_version = kEstimatorAbiVersion,
    .join = [](const std::string& name, EstimatorBackendFactory factory, const std::string& module) {
      register_estimator_backend(name, std::move(factory), module);
    }};

// estimator="libtorch" loads servelab's torch backend, which registers it as it loads; a name still
// unknown after that is a ValueError naming it and the registered ones.
void require_estimator_backend(const std::string& name) {
  if (has_estimator_backend(name)) return;
  if (name == "libtorch") {
    try {
      py::module_::import("servelab.backends").attr("require")("torch");
    } catch (py::error_already_set& e) {
      throw ValueError(str("estimator='libtorch' is not available: ", e.what()));
    }
    if (has_estimator_backend(name)) return;
  }
  std::string known;
  for (const auto& n : estimator_backends()) known += (known.empty() ? "" : ", ") + n;
  throw ValueError(str("estimator='", name, "' is not an estimator backend (registered: ", known,
                       "; 'libtorch' needs a build with LibTorch and the torch package)"));
}

LearnerOptions to_learner(const py::dict& d) {
  LearnerOptions o;
  EstimatorOptions& e = o.estimator;
  apply(d,
        {{"radius", set(o.radius)},
         {"beta", set(o.beta)},
         {"gamma", set(o.gamma)},
         {"lr_power", set(o.lr_power)},
         {"constant_lr", set(o.constant_lr)},
         {"initial", set(o.initial)},
         {"hidden1", set(e.hidden1)},
         {"hidden2", set(e.hidden2)},
         {"ftrl_alpha", set(e.alpha)},
         {"ftrl_beta", set(e.beta)},
         {"ftrl_l1", set(e.l1)},
         {"ftrl_l2", set(e.l2)},
         {"batch", set(e.batch)},
         {"train_steps", set(e.train_steps)},
         {"plateau_patience", set(e.plateau_patience)},
         {"plateau_every", set(e.plateau_every)},
         {"max_train_steps", set(e.max_train_steps)},
         {"memory", set(e.memory)},
         {"estimator", set(e.backend)},
         {"drl_hidden", set(o.deep.hidden)},
         {"drl_learning_rate", set(o.deep.learning_rate)},
         {"drl_gamma", set(o.deep.gamma)},
         {"drl_epsilon_steps", set(o.deep.epsilon_steps)},
         {"drl_batch", set(o.deep.batch)},
         {"drl_target_every", set(o.deep.target_every)},
         {"drl_trajectory", set(o.deep.trajectory)},
         {"drl_memory", set(o.deep.memory)}},
        "the learner");
  require_estimator_backend(e.backend);
  return o;
}

TuningOptions to_tuning(const py::dict& d, const py::object& seed) {
  TuningOptions o;
  apply(d,
        {{"steps", set(o.steps)},
         {"episode_requests", set(o.episode_requests)},
         {"state_width_qps", set(o.state_width_qps)},
         {"max_states", set(o.max_states)},
         {"oracle_episodes", set(o.oracle_episodes)},
         {"tolerance", set(o.tolerance)},
         {"window", set(o.window)}},
        "the tuning experiment");
  o.seed = to_seed(seed);
  o.validate();
  return o;
}

py::dict oracle_dict(const ConfigSpace& space, const Oracle& o) {
  py::dict out;
  out["config"] = o.config;
  out["values"] = space.values(o.config);
  out["describe"] = space.describe(o.config);
  out["cost"] = o.cost;
  out["metric_ms"] = o.metric_ms;
  out["feasible"] = o.feasible;
  out["evaluated"] = o.evaluated;
  return out;
}

std::vector<std::vector<double>> to_episodes(const py::list& episodes) {
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const auto a = episodes[i].cast<DoubleArray>();
    const auto s = as_span(a, "episode");
    if (s.empty()) throw ValueError(str("episodes[", i, "] is empty"));
    for (std::size_t j = 0; j < s.size(); ++j) {
      if (!(std::isfinite(s[j]) && s[j] >= 0 && (j == 0 || s[j] >= s[j - 1]))) {
        throw ValueError(str("episodes[", i, "][", j, "]=", s[j], " must be finite, >= 0 and non-decreasing (ms)"));
      }
    }
    out.emplace_back(s.begin(), s.end());
  }
  return out;
}

void bind_space(py::module_& m) {
  py::class_<ConfigSpace, std::shared_ptr<ConfigSpace>>(
      m, "ConfigSpace", "A grid of integer parallelism knobs; configurations numbered row-major.")
      .def(py::init([](std::string kind, const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& knobs) {
             std::vector<Knob> k;
             for (const auto& [name, values] : knobs) k.push_back({name, values});
             return std::make_shared<ConfigSpace>(std::move(kind), std::move(k));
           }),
           py::arg("kind"), py::arg("knobs"), "knobs: [(name, ascending distinct integer values), ...]")
      .def_property_readonly("kind", &ConfigSpace::kind)
      .def_property_readonly("knobs",
                             [](const ConfigSpace& s) {
                               std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
                               for (const auto& k : s.knobs()) out.emplace_back(k.name, k.values);
                               return out;
                             })
      .def_property_readonly("size", &ConfigSpace::size)
      .def_property_readonly("dims", &ConfigSpace::dims)
      .def("__len__", &ConfigSpace::size)
      .def(
          "values", [](const ConfigSpace& s, std::size_t c) { return s.values(c); }, py::arg("config"))
      .def(
          "index_of", [](const ConfigSpace& s, const std::vector<std::int64_t>& v) { return s.index_of(v); },
          py::arg("values"))
      .def(
          "describe",
          [](const ConfigSpace& s, std::size_t c) {
            if (c >= s.size()) throw ValueError(str("config=", c, " is not below ", s.size()));
            return s.describe(c);
          },
          py::arg("config"))
      .def_property_readonly(
          "coords",
          [](const ConfigSpace& s) {
            std::vector<float> out;
            for (std::size_t c = 0; c < s.size(); ++c) {
              const auto x = s.coords(c);
              out.insert(out.end(), x.begin(), x.end());
            }
            return to_numpy(std::move(out), {static_cast<py::ssize_t>(s.size()), static_cast<py::ssize_t>(s.dims())});
          },
          "Normalised coordinates, float32 [size, dims] in [0, 1].")
      .def(
          "region_sizes",
          [](const ConfigSpace& s, double radius) {
            std::vector<std::int64_t> out;
            for (const auto& r : run_long([&] { return s.regions(radius); })) {
              out.push_back(static_cast<std::int64_t>(r.size()));
            }
            return to_numpy(std::move(out));
          },
          py::arg("radius"), "Configurations within `radius` of each configuration (itself included).");
  m.def("cpu_space", &cpu_space, py::arg("cores"), py::arg("max_workers") = 0, py::arg("max_inter_op") = 0,
        py::arg("max_intra_op") = 0);
  m.def("gpu_space", &gpu_space, py::arg("max_batch") = 64, py::arg("batch_step") = 8, py::arg("max_timeout_ms") = 50,
        py::arg("timeout_step_ms") = 5, py::arg("max_threads") = 8);
}

void bind_model(py::module_& m) {
  m.def(
      "cpu_service_ms",
      [](const py::dict& model, std::int64_t inter, std::int64_t intra, std::int64_t in_service) {
        if (inter < 1 || intra < 1 || in_service < 1) {
          throw ValueError(str("inter=", inter, ", intra=", intra, ", in_service=", in_service, " must all be >= 1"));
        }
        return to_model(model).cpu.service_ms(inter, intra, in_service);
      },
      py::arg("model"), py::arg("inter"), py::arg("intra"), py::arg("in_service"));
  m.def(
      "gpu_service_ms",
      [](const py::dict& model, std::int64_t batch, std::int64_t concurrent) {
        if (batch < 1 || concurrent < 1) throw ValueError(str("batch=", batch, ", concurrent=", concurrent, " >= 1"));
        return to_model(model).gpu.service_ms(batch, concurrent);
      },
      py::arg("model"), py::arg("batch"), py::arg("concurrent"));
  m.def(
      "episode",
      [](const ConfigSpace& space, const py::dict& model, std::size_t config, const DoubleArray& arrivals_ms,
         const std::string& objective, double slo_ms, const py::object& seed) {
        const auto pm = to_model(model);
        const auto obj = Objective::parse(objective, slo_ms);
        if (config >= space.size()) throw ValueError(str("config=", config, " is not below ", space.size()));
        const auto arrivals = to_episodes(py::list(py::make_tuple(arrivals_ms)))[0];
        const auto settings = settings_of(space, pm);
        std::vector<double> scratch;
        std::optional<Rng> rng;
        if (!seed.is_none()) rng.emplace(to_seed(seed), "rrl/noise");
        const auto r = run_episode(pm, settings[config], arrivals, obj, rng ? &*rng : nullptr, scratch);
        py::dict out;
        out["mean_ms"] = r.mean_ms;
        out["p95_ms"] = r.p95_ms;
        out["metric_ms"] = r.metric_ms;
        out["cost"] = r.cost;
        out["resource_share"] = settings[config].resource_share;
        return out;
      },
      py::arg("space"), py::arg("model"), py::arg("config"), py::arg("arrivals_ms"), py::arg("objective") = "mean",
      py::arg("slo_ms") = 0.0, py::arg("seed") = py::none(),
      "One measurement episode under a configuration (seed None: noise-free).");
  m.def(
      "surface",
      [](const ConfigSpace& space, const py::dict& model, const py::list& episodes, const std::string& objective,
         double slo_ms) {
        const auto pm = to_model(model);
        const auto obj = Objective::parse(objective, slo_ms);
        const auto eps = to_episodes(episodes);
        if (eps.empty()) throw ValueError("episodes is empty");
        std::vector<double> out = run_long([&] {
          const auto settings = settings_of(space, pm);
          std::vector<double> values(space.size(), 0.0), scratch;
          for (std::size_t c = 0; c < space.size(); ++c) {
            core::check_interrupt();
            for (const auto& e : eps) values[c] += run_episode(pm, settings[c], e, obj, nullptr, scratch).metric_ms;
            values[c] /= static_cast<double>(eps.size());
          }
          return values;
        });
        return to_numpy(std::move(out));
      },
      py::arg("space"), py::arg("model"), py::arg("episodes"), py::arg("objective") = "mean", py::arg("slo_ms") = 0.0,
      "The noise-free objective latency (ms) of every configuration, averaged over the episodes.");
  m.def(
      "oracle",
      [](const ConfigSpace& space, const py::dict& model, const py::list& episodes, const std::string& objective,
         double slo_ms) {
        const auto pm = to_model(model);
        const auto obj = Objective::parse(objective, slo_ms);
        const auto eps = to_episodes(episodes);
        const auto o = run_long([&] { return find_oracle(space, pm, obj, eps); });
        return oracle_dict(space, o);
      },
      py::arg("space"), py::arg("model"), py::arg("episodes"), py::arg("objective") = "mean", py::arg("slo_ms") = 0.0);
  m.def(
      "draw_episodes",
      [](const py::object& arrivals, std::int64_t steps, std::int64_t episode_requests, const py::object& seed) {
        const auto process = to_arrivals(arrivals);
        TuningOptions o;
        o.steps = steps;
        o.episode_requests = episode_requests;
        o.seed = to_seed(seed);
        const auto eps = run_long([&] { return draw_episodes(*process, o); });
        std::vector<double> flat;
        flat.reserve(eps.size() * static_cast<std::size_t>(episode_requests));
        for (const auto& e : eps) flat.insert(flat.end(), e.begin(), e.end());
        return to_numpy(std::move(flat), {static_cast<py::ssize_t>(steps), static_cast<py::ssize_t>(episode_requests)});
      },
      py::arg("arrivals"), py::arg("steps"), py::arg("episode_requests") = 200, py::arg("seed") = 0,
      "Episodes of consecutive arrivals, ms relative to each episode's first: [steps, episode_requests].");
}

void bind_learning(py::module_& m) {
  py::class_<LatencyEstimator>(m, "LatencyEstimator", "RRL's latency estimator f: MLP (256-64, ReLU) trained by FTRL.")
      .def(py::init([](std::size_t inputs, const py::dict& options, const py::object& seed) {
             return LatencyEstimator(inputs, to_learner(options).estimator, to_seed(seed));
           }),
           py::arg("inputs"), py::arg("options") = py::dict(), py::arg("seed") = 0)
      .def_property_readonly("inputs", &LatencyEstimator::inputs)
      .def_property_readonly("parameters", &LatencyEstimator::parameters)
      .def_property_readonly("samples", &LatencyEstimator::samples)
      .def_property_readonly("steps_trained", &LatencyEstimator::steps_trained,
                             "FTRL steps taken so far, over all observations.")
      .def_property_readonly("backend", &LatencyEstimator::backend, "Where the arithmetic runs: 'eigen' or 'libtorch'.")
      .def("weights", &LatencyEstimator::weights, "The current weights, flat (W1, b1, W2, b2, W3, b3).")
      .def(
          "observe",
          [](LatencyEstimator& e, const std::vector<float>& x, double latency_ms) { e.observe(x, latency_ms); },
          py::arg("x"), py::arg("latency_ms"))
      .def(
          "predict_ms", [](const LatencyEstimator& e, const std::vector<float>& x) { return e.predict_ms(x); },
          py::arg("x"));

  py::class_<QLearner>(m, "QLearner", "Region-based (radius > 0) or point-based Q-learning over a space.")
      .def(py::init([](std::shared_ptr<ConfigSpace> space, const py::dict& model, std::size_t states, double rate_scale,
                       const std::string& objective, double slo_ms, bool region, const py::dict& learner,
                       const py::object& seed) {
             auto o = to_learner(learner);
             o.region = region;
             const auto pm = to_model(model);
             return QLearner(*space, settings_of(*space, pm), states, rate_scale, Objective::parse(objective, slo_ms),
                             o, to_seed(seed));
           }),
           py::arg("space"), py::arg("model") = py::dict(), py::arg("states") = 1, py::arg("rate_scale") = 1.0,
           py::arg("objective") = "mean", py::arg("slo_ms") = 0.0, py::arg("region") = true,
           py::arg("learner") = py::dict(), py::arg("seed") = 0, py::keep_alive<1, 2>())
      .def("choose", &QLearner::choose, py::arg("state"))
      .def("greedy", &QLearner::greedy, py::arg("state"))
      .def("learn", &QLearner::learn, py::arg("state"), py::arg("config"), py::arg("rate_qps"), py::arg("latency_ms"),
           py::arg("next_state"))
      .def(
          "step",
          [](QLearner& q, std::size_t state, double rate_qps, double latency_ms) {
            const std::size_t c = q.choose(state);
            q.learn(state, c, rate_qps, latency_ms, state);
            return c;
          },
          py::arg("state"), py::arg("rate_qps"), py::arg("latency_ms"),
          "One learning step in a fixed state: choose, then learn the given latency for the choice.")
      .def(
          "q",
          [](const QLearner& q, std::size_t state, std::size_t config) {
            q.region_size(config);  // validates config
            q.greedy(state);        // validates state
            return q.q(state, config);
          },
          py::arg("state"), py::arg("config"))
      .def_property_readonly("mean_region_size", &QLearner::mean_region_size);

  // The deep-RL baselines stepped from Python, as QLearner is: what tune_simulated needs to serve
  // their episodes in servelab.simulate. The space is held here: the tuner keeps a reference to it.
  py::class_<DeepRlTuner>(m, "DeepRlTuner",
                          "A CAPES-like or DeepRM-like tuner (systems/rrl/deep_rl.hpp), stepped by hand.")
      .def(py::init([](std::shared_ptr<ConfigSpace> space, const std::string& method, const py::dict& model,
                       double rate_scale, const std::string& objective, double slo_ms, const py::dict& learner,
                       const py::object& seed) {
             const auto pm = to_model(model);
             auto tuner = make_deep_rl(method, *space, settings_of(*space, pm), rate_scale,
                                       Objective::parse(objective, slo_ms), to_learner(learner).deep, to_seed(seed));
             return DeepRlTuner{std::move(space), std::move(tuner)};
           }),
           py::arg("space"), py::arg("method"), py::arg("model") = py::dict(), py::arg("rate_scale") = 1.0,
           py::arg("objective") = "mean", py::arg("slo_ms") = 0.0, py::arg("learner") = py::dict(), py::arg("seed") = 0)
      .def(
          "decide", [](DeepRlTuner& t, std::size_t state, double rate_qps) { return t.tuner->decide(state, rate_qps); },
          py::arg("state"), py::arg("rate_qps"),
          "The configuration for the next episode, given the rate measured over the previous one.")
      .def(
          "learn",
          [](DeepRlTuner& t, std::size_t state, std::size_t config, double rate_qps, double latency_ms,
             std::size_t next_state) {
            if (config >= t.space->size()) throw ValueError(str("config=", config, " is not below ", t.space->size()));
            if (!(std::isfinite(latency_ms) && latency_ms >= 0)) {
              throw ValueError(str("latency_ms=", latency_ms, " must be finite and >= 0"));
            }
            t.tuner->learn(state, config, rate_qps, latency_ms, next_state);
          },
          py::arg("state"), py::arg("config"), py::arg("rate_qps"), py::arg("latency_ms"), py::arg("next_state"))
      .def(
          "best", [](const DeepRlTuner& t, std::size_t state) { return t.tuner->best(state); }, py::arg("state"),
          "The configuration it would pick without exploring.")
      .def_property_readonly("mean_region_size", [](const DeepRlTuner& t) { return t.tuner->mean_region_size(); });

  m.def(
      "objective_cost",
      [](const std::string& objective, double slo_ms, double metric_ms, double resource_share) {
        return Objective::parse(objective, slo_ms).cost(metric_ms, resource_share);
      },
      py::arg("objective"), py::arg("slo_ms"), py::arg("metric_ms"), py::arg("resource_share"),
      "The cost the learners minimise for an episode's objective latency and resource share.");
}

py::dict result_dict(const ConfigSpace& space, TuningResult&& r) {
  py::dict out;
  out["method"] = r.method;
  out["config"] = to_numpy(std::move(r.config));
  out["greedy"] = to_numpy(std::move(r.greedy));
  out["state"] = to_numpy(std::move(r.state));
  out["rate_qps"] = to_numpy(std::move(r.rate_qps));
  out["metric_ms"] = to_numpy(std::move(r.metric_ms));
  out["cost"] = to_numpy(std::move(r.cost));
  out["chosen_ms"] = to_numpy(std::move(r.chosen_ms));
  out["greedy_ms"] = to_numpy(std::move(r.greedy_ms));
  out["oracle_ms"] = to_numpy(std::move(r.oracle_ms));
  out["chosen_cost"] = to_numpy(std::move(r.chosen_cost));
  out["greedy_cost"] = to_numpy(std::move(r.greedy_cost));
  out["oracle_cost"] = to_numpy(std::move(r.oracle_cost));
  out["learn_ns"] = to_numpy(std::move(r.learn_ns));
  out["oracle"] = oracle_dict(space, r.oracle);
  out["converged_step"] = r.converged_step;
  out["mean_region_size"] = r.mean_region_size;
  out["states"] = r.states;
  out["state_width_qps"] = r.state_width_qps;
  return out;
}

void bind_tuning(py::module_& m) {
  m.def(
      "tune",
      [](std::shared_ptr<ConfigSpace> space, const py::object& arrivals, const std::string& method,
         const std::string& objective, double slo_ms, const py::dict& model, const py::dict& learner,
         const py::dict& options, const py::object& seed) {
        const auto process = to_arrivals(arrivals);
        const auto obj = Objective::parse(objective, slo_ms);
        const auto pm = to_model(model);
        const auto lo = to_learner(learner);
        const auto to = to_tuning(options, seed);
        auto r = run_long([&] { return run_tuning(*space, pm, *process, obj, method, lo, to); });
        return result_dict(*space, std::move(r));
      },
      py::arg("space"), py::arg("arrivals"), py::arg("method") = "rrl", py::arg("objective") = "mean",
      py::arg("slo_ms") = 0.0, py::arg("model") = py::dict(), py::arg("learner") = py::dict(),
      py::arg("options") = py::dict(), py::arg("seed") = 0,
      "A simulated tuning experiment; columns per episode, the oracle and the convergence step.");
  m.def("convergence_step", &convergence_step, py::arg("greedy"), py::arg("oracle"), py::arg("tolerance"),
        py::arg("window"));
}

}  // namespace

void init_rrl(py::module_& m) {
  publish_plugin_record(m, "_estimator_plugins", estimator_plugin_table, kEstimatorPluginCapsule);
  m.def(
      "estimator_backends",
      [] {
        std::map<std::string, std::string> out;
        for (const auto& name : estimator_backends()) out[name] = estimator_backend_origin(name);
        return out;
      },
      "The registered estimator backends and the module each came from ('libtorch' joins when\n"
      "servelab's torch backend loads).");
  bind_space(m);
  bind_model(m);
  bind_learning(m);
  bind_tuning(m);
}

}  // namespace servelab::bindings
