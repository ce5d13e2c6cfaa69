// servelab._core bindings of the profile area: Profile, its latency statistics, and the online
// LatencyEstimator. File formats and importers live in Python (servelab.profiles).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "seed.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/estimator.hpp"
#include "servelab/profile/profile.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::profile;

// A hardware type or model given by name (str) or index (int).
std::int32_t resolve(const Profile& profile, const py::handle& key, bool hardware) {
  const char* what = hardware ? "hardware" : "model";
  if (py::isinstance<py::str>(key)) {
    const auto name = key.cast<std::string>();
    return hardware ? profile.hardware_index(name) : profile.model_index(name);
  }
  if (py::isinstance<py::bool_>(key) || !PyIndex_Check(key.ptr())) {
    throw py::type_error(str(what, "=", std::string(py::repr(key)), " must be a name (str) or an index (int)"));
  }
  const auto value = to_int<std::int64_t>(key, what);
  const auto size = static_cast<std::int64_t>(hardware ? profile.hardware().size() : profile.models().size());
  if (value < 0 || value >= size) {
    throw KeyError(str(what, " index ", value, " is out of range (the profile has ", size, ")"));
  }
  return static_cast<std::int32_t>(value);
}

std::int32_t hw(const Profile& p, const py::handle& key) { return resolve(p, key, true); }
std::int64_t to_batch(const IntArg& batch) { return to_int<std::int64_t>(batch, "batch"); }
std::int32_t md(const Profile& p, const py::handle& key) { return resolve(p, key, false); }

LatencyDistribution to_distribution(const std::optional<DoubleArray>& samples_s, const std::optional<py::dict>& pct) {
  if (samples_s.has_value() == pct.has_value()) {
    throw ValueError("give exactly one of samples_s (seconds) and percentiles ({percentile: seconds})");
  }
  if (samples_s) {
    require_1d(*samples_s, "samples_s");
    return LatencyDistribution::from_samples(
        std::vector<double>(samples_s->data(), samples_s->data() + samples_s->size()));
  }
  std::vector<std::pair<double, double>> points;
  for (const auto& [key, value] : *pct) {
    if (!PyNumber_Check(key.ptr()) || py::isinstance<py::str>(key)) {
      throw ValueError(str("percentiles key ", std::string(py::repr(key)), " must be a number in (0, 100]"));
    }
    points.emplace_back(key.cast<double>(), value.cast<double>());
  }
  return LatencyDistribution::from_percentiles(std::move(points));
}

py::object optional_float(std::optional<double> value) {
  return value ? py::object(py::float_(*value)) : py::object(py::none());
}

// Profile.to_dict / from_dict are written in Python (servelab.profiles.format); pickling uses them.
py::object format_module() { return py::module_::import("servelab.profiles.format"); }

using ProfileClass = py::class_<Profile>;

// Building a profile: hardware, models, prices, accuracies, latencies, memory and load times.
void def_profile_building(ProfileClass& profile) {
  profile
      .def(py::init([](std::string source) {
             Profile p;
             p.set_source(std::move(source));
             return p;
           }),
           py::arg("source") = "", "An empty profile; source says where its numbers come from.")
      .def_property(
          "source", [](const Profile& p) { return p.source(); },
          [](Profile& p, std::string source) { p.set_source(std::move(source)); },
          "Where the numbers come from (paper, artifact, measurement run): free text.")
      .def(
          "add_hardware",
          [](Profile& p, const std::string& name, std::optional<double> price_per_hour) {
            if (price_per_hour) p.set_price(name, *price_per_hour);
            return p.add_hardware(name);
          },
          py::arg("name"), py::arg("price_per_hour") = py::none(),
          "Adds a hardware type (idempotent) and optionally sets its price in $/h; returns its index.")
      .def(
          "add_model",
          [](Profile& p, const std::string& name, std::optional<double> accuracy) {
            if (accuracy) p.set_accuracy(name, *accuracy);
            return p.add_model(name);
          },
          py::arg("name"), py::arg("accuracy") = py::none(),
          "Adds a model (idempotent) and optionally sets its accuracy in [0, 1]; returns its index.")
      .def("set_price", &Profile::set_price, py::arg("hardware"), py::arg("price_per_hour"),
           "Sets the price of a hardware type in $/h (>= 0), adding it when new.")
      .def("set_accuracy", &Profile::set_accuracy, py::arg("model"), py::arg("accuracy"),
           "Sets a model's accuracy in [0, 1] (e.g. ImageNet top-1 as a fraction), adding it when new.")
      .def(
          "set_latency",
          [](Profile& p, const std::string& hardware, const std::string& model, const IntArg& batch_arg,
             std::optional<DoubleArray> samples_s, std::optional<py::dict> percentiles) {
            const auto batch = to_int<std::int64_t>(batch_arg, "batch");
            p.set_latency(hardware, model, batch, to_distribution(samples_s, percentiles));  // checks batch >= 1
          },
          py::arg("hardware"), py::arg("model"), py::arg("batch"), py::arg("samples_s") = py::none(),
          py::arg("percentiles") = py::none(),
          "Sets the latency of one batch size: samples_s (seconds, each > 0) or percentiles, a dict\n"
          "{percentile in (0, 100]: seconds}, e.g. {50: 0.010, 95: 0.014}. Replaces an earlier entry.")
      .def("set_memory_mb", &Profile::set_memory_mb, py::arg("hardware"), py::arg("model"), py::arg("mb"),
           "Memory the model takes on the hardware, MB (>= 0).")
      .def("set_load_time", &Profile::set_load_time, py::arg("hardware"), py::arg("model"), py::arg("seconds"),
           "Time to load the model onto the hardware, seconds (>= 0).");
}

// Looking up names, indices, prices, accuracies, memory, load times and measured batch sizes.
void def_profile_lookups(ProfileClass& profile) {
  profile
      .def_property_readonly(
          "hardware", [](const Profile& p) { return p.hardware(); }, "Hardware type names, in index order.")
      .def_property_readonly(
          "models", [](const Profile& p) { return p.models(); }, "Model names, in index order.")
      .def("hardware_index", &Profile::hardware_index, py::arg("name"),
           "Index of a hardware type; KeyError if unknown.")
      .def("model_index", &Profile::model_index, py::arg("name"), "Index of a model; KeyError if unknown.")
      .def(
          "price", [](const Profile& p, const py::object& h) { return p.price(hw(p, h)); }, py::arg("hardware"),
          "$/h of a hardware type; KeyError when not set.")
      .def(
          "has_price", [](const Profile& p, const py::object& h) { return p.has_price(hw(p, h)); }, py::arg("hardware"))
      .def(
          "accuracy",
          [](const Profile& p, const py::object& model) -> py::object {
            const double a = p.accuracy(md(p, model));
            return std::isnan(a) ? py::object(py::none()) : py::object(py::float_(a));
          },
          py::arg("model"), "A model's accuracy in [0, 1], or None when not set.")
      .def(
          "memory_mb",
          [](const Profile& p, const py::object& h, const py::object& model) {
            return optional_float(p.memory_mb(hw(p, h), md(p, model)));
          },
          py::arg("hardware"), py::arg("model"), "MB, or None when not set.")
      .def(
          "load_time_s",
          [](const Profile& p, const py::object& h, const py::object& model) {
            return optional_float(p.load_time(hw(p, h), md(p, model)));
          },
          py::arg("hardware"), py::arg("model"), "Seconds, or None when not set.")
      .def(
          "has_latency",
          [](const Profile& p, const py::object& h, const py::object& model) {
            return p.has_latency(hw(p, h), md(p, model));
          },
          py::arg("hardware"), py::arg("model"))
      .def(
          "batches",
          [](const Profile& p, const py::object& h, const py::object& model) {
            return p.batches(hw(p, h), md(p, model));
          },
          py::arg("hardware"), py::arg("model"), "Measured batch sizes, ascending.")
      .def(
          "max_batch",
          [](const Profile& p, const py::object& h, const py::object& model) {
            return p.max_batch(hw(p, h), md(p, model));
          },
          py::arg("hardware"), py::arg("model"), "The largest measured batch size (0 when none).");
}

// Latencies: decision statistics, the simulator's table and draws, the measured distributions.
void def_profile_latency(ProfileClass& profile) {
  profile
      .def(
          "latency",
          [](const Profile& p, const py::object& h, const py::object& model, const py::object& batch,
             const std::string& statistic) -> py::object {
            const auto s = parse_statistic(statistic);
            const auto hi = hw(p, h);
            const auto mi = md(p, model);
            if (PyIndex_Check(batch.ptr()) && !PySequence_Check(batch.ptr())) {
              return py::float_(p.latency(hi, mi, to_int<std::int64_t>(batch, "batch"), s));
            }
            const auto batches = to_int_list<std::int64_t>(batch, "batch");
            std::vector<double> out(batches.size());
            for (std::size_t i = 0; i < batches.size(); ++i) out[i] = p.latency(hi, mi, batches[i], s);
            return to_numpy(std::move(out));
          },
          py::arg("hardware"), py::arg("model"), py::arg("batch"), py::arg("statistic") = "mean",
          "Decision latency in seconds: the statistic at batch, linear between the measured batch sizes\n"
          "around it, the smallest measured batch's value below it; ValueError beyond max_batch. For a\n"
          "sequence of batch sizes, a float64 numpy array of seconds.")
      .def(
          "decision_table_ns",
          [](const Profile& p, const py::object& h, const py::object& model, const std::string& statistic) {
            return to_numpy(p.decision_table(hw(p, h), md(p, model), parse_statistic(statistic)));
          },
          py::arg("hardware"), py::arg("model"), py::arg("statistic") = "mean",
          "int64 ns latencies for batch 0..max_batch (entry b is batch b; entry 0 repeats batch 1), as the\n"
          "simulator uses them.")
      .def(
          "sample",
          [](const Profile& p, const py::object& h, const py::object& model, const IntArg& batch_arg,
             const py::object& seed, const IntArg& count_arg) {
            const auto batch = to_int<std::int64_t>(batch_arg, "batch");
            const auto count = to_int<std::int64_t>(count_arg, "count");
            const auto hi = hw(p, h);
            const auto mi = md(p, model);
            return to_numpy_seconds(sample_service_times(p, hi, mi, batch, to_seed(seed), count));
          },
          py::arg("hardware"), py::arg("model"), py::arg("batch"), py::kw_only(), py::arg("seed"), py::arg("count") = 1,
          "count service times in seconds (float64 numpy), drawn as the simulator draws them: a uniform\n"
          "choice of the samples (quantile(U) for percentiles), interpolated across batch sizes with one U,\n"
          "rounded to whole ns. Deterministic in seed.")
      .def(
          "distribution",
          [](const Profile& p, const py::object& h, const py::object& model, const IntArg& batch) {
            const auto& d = p.latency_at(hw(p, h), md(p, model), to_int<std::int64_t>(batch, "batch"));
            py::dict out;
            if (d.has_samples()) {
              out["samples_s"] = to_numpy_copy(d.sorted_values());
            } else {
              py::dict points;
              for (const auto& [pct, s] : d.percentile_points()) points[py::float_(pct)] = s;
              out["percentiles"] = points;
            }
            return out;
          },
          py::arg("hardware"), py::arg("model"), py::arg("batch"),
          "The measured distribution at one batch size: {'samples_s': sorted float64 array} or\n"
          "{'percentiles': {percentile: seconds}}; ValueError for a batch size that was not measured.");
}

// What the profile holds as a whole: warnings(), pairs(), repr and pickling.
void def_profile_summary(ProfileClass& profile) {
  profile
      .def(
          "warnings",
          [](const Profile& p, const std::string& statistic) { return p.warnings(parse_statistic(statistic)); },
          py::arg("statistic") = "mean",
          "One line per (hardware, model) whose statistic decreases as the batch grows (noisy data).")
      .def(
          "pairs",
          [](const Profile& p) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const auto& [h, model] : p.pairs()) out.emplace_back(p.hardware()[h], p.models()[model]);
            return out;
          },
          "(hardware, model) names of every pair with latency, memory or load time.")
      .def("__repr__",
           [](const Profile& p) {
             std::size_t entries = 0;
             for (const auto& [h, model] : p.pairs()) entries += p.batches(h, model).size();
             return str("Profile(hardware=", p.hardware().size(), ", models=", p.models().size(),
                        ", latency entries=", entries, ")");
           })
      .def(py::pickle([](const Profile& p) { return format_module().attr("to_dict")(p); },
                      [](const py::object& state) { return format_module().attr("from_dict")(state).cast<Profile>(); }))
      // The native dict form and equality are written in Python (servelab.profiles.format), where
      // the format's checks live; the class forwards to them.
      .def(
          "to_dict", [](const Profile& p) { return format_module().attr("to_dict")(p); },
          "The profile in the native format (servelab.profile, version 1) as a JSON-ready dict; samples sorted.")
      .def_static(
          "from_dict",
          [](const py::object& data, const std::string& where) {
            return format_module().attr("from_dict")(data, py::arg("where") = where).cast<Profile>();
          },
          py::arg("data"), py::kw_only(), py::arg("where") = "profile dict",
          "A Profile from the native format as a dict, every field checked; `where` starts each error message.")
      .def(
          "__eq__",
          [](const Profile& a, const py::object& b) -> py::object {
            return format_module().attr("profile_eq")(py::cast(a, py::return_value_policy::reference), b);
          },
          py::is_operator(), "Profiles are equal when their native dicts are.")
      .attr("__hash__") = py::none();
}

void bind_profile(py::module_& m) {
  ProfileClass profile(m, "Profile",
                       "Latency, accuracy, price, memory and load time of models on hardware types.\n\n"
                       "latency(hardware, model, batch) is a distribution per measured batch size (raw samples or\n"
                       "percentiles), interpolated linearly across batch sizes; decisions use one statistic ('mean',\n"
                       "'p50', 'p95', 'p99', 'mean_without_max'), simulated service times are sampled. Hardware and\n"
                       "models are given by name or by index (order of first mention). Times are seconds.\n"
                       "Picklable (through to_dict()); servelab.profiles.load/save read and write the JSON format.");
  def_profile_building(profile);
  def_profile_lookups(profile);
  def_profile_latency(profile);
  def_profile_summary(profile);
}

void bind_latency_estimator(py::module_& m) {
  py::class_<LatencyEstimator>(
      m, "LatencyEstimator",
      "Online latency estimate for one (hardware, model), as Kairos learns it (HPDC'23, Sec. 5.1): a\n"
      "least-squares line latency = intercept + slope * batch over all observations, replaced for a batch\n"
      "size by the running mean of its own observations once it has min_observations of them. With one\n"
      "distinct batch size (or where the line is not positive) the line through the origin and the mean\n"
      "point is used. Seconds.")
      .def(py::init([](const IntArg& min_observations) {
             return LatencyEstimator(to_int<std::int64_t>(min_observations, "min_observations"));
           }),
           py::arg("min_observations") = 3)
      .def(
          "observe",
          [](LatencyEstimator& e, const IntArg& batch, double seconds) { e.observe(to_batch(batch), seconds); },
          py::arg("batch"), py::arg("seconds"), "Records one measured service time.")
      .def(
          "predict", [](const LatencyEstimator& e, const IntArg& batch) { return e.predict(to_batch(batch)); },
          py::arg("batch"), "Predicted seconds; RuntimeError before any observation.")
      .def_property_readonly("ready", &LatencyEstimator::ready, "Whether predict() has anything to go on.")
      .def(
          "observations",
          [](const LatencyEstimator& e, const IntArg& batch) { return e.observations(to_batch(batch)); },
          py::arg("batch"), "Observations of this batch size.")
      .def(
          "table_mean", [](const LatencyEstimator& e, const IntArg& batch) { return e.table_mean(to_batch(batch)); },
          py::arg("batch"), "Their running mean (NaN when none).")
      .def(
          "uses_table", [](const LatencyEstimator& e, const IntArg& batch) { return e.uses_table(to_batch(batch)); },
          py::arg("batch"), "Whether predict(batch) returns the table's mean rather than the line.")
      .def_property_readonly("intercept", &LatencyEstimator::intercept, "Seconds (NaN before 2 batch sizes).")
      .def_property_readonly("slope", &LatencyEstimator::slope, "Seconds per item (NaN before 2 batch sizes).")
      .def_property_readonly("count", &LatencyEstimator::count, "Observations so far.")
      .def_property_readonly("min_observations", &LatencyEstimator::min_observations);
}

}  // namespace

void init_profile(py::module_& m) {
  bind_profile(m);
  bind_latency_estimator(m);
}

}  // namespace servelab::bindings
