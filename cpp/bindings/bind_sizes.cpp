// servelab._core bindings of request sizes, applications and workloads (arrival process x
// application mix).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "limits.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "registry_binding.hpp"
#include "seed.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/workload/arrival_registry.hpp"
#include "servelab/workload/size_registry.hpp"
#include "servelab/workload/sizes.hpp"
#include "servelab/workload/workload.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::workload;

using SizeHolder = std::shared_ptr<SizeDistribution>;

std::string py_repr(const py::handle& value) { return py::repr(value).cast<std::string>(); }

std::int64_t to_round_to(const IntArg& round_to) { return to_int<std::int64_t>(round_to, "round_to"); }

// A SizeDistribution, a registry spec string or (when allowed) None; `field` names it in errors.
SizePtr to_sizes(const py::handle& value, const std::string& field, bool allow_none) {
  if (value.is_none()) {
    if (allow_none) return nullptr;
    throw ValueError(str(field, "=None: give a size distribution or a spec string"));
  }
  if (py::isinstance<py::str>(value)) return size_registry().make(value.cast<std::string>());
  if (py::isinstance<SizeDistribution>(value)) return value.cast<SizeHolder>();
  throw ValueError(str(field, "=", py_repr(value), " is not a SizeDistribution or a spec string such as ",
                       "'uniform(low=1, high=10)'"));
}

std::vector<SizePtr> to_components(const py::sequence& components) {
  std::vector<SizePtr> out;
  for (std::size_t i = 0; i < components.size(); ++i) {
    out.push_back(to_sizes(components[i], str("components[", i, "]"), false));
  }
  return out;
}

std::shared_ptr<const ArrivalProcess> to_arrivals(const py::handle& value) {
  if (py::isinstance<py::str>(value)) return arrival_registry().make(value.cast<std::string>());
  if (py::isinstance<ArrivalProcess>(value)) return value.cast<std::shared_ptr<ArrivalProcess>>();
  throw ValueError(
      str("arrivals=", py_repr(value), " is not an ArrivalProcess or a spec string such as ", "'poisson(rate=100)'"));
}

Application make_application(const std::string& name, double slo_s, double share, const py::object& sizes,
                             double accuracy_floor) {
  if (!(slo_s > 0) || !std::isfinite(slo_s)) {
    throw ValueError(
        str("application '", name, "': slo_s=", py_repr(py::float_(slo_s)), " must be positive and finite"));
  }
  Nanos slo = 0;
  try {
    slo = seconds_to_nanos(slo_s, "slo_s");
  } catch (const ValueError& e) {  // beyond int64 nanoseconds
    throw ValueError(str("application '", name, "': ", e.what()));
  }
  Application app{name, share, slo, to_sizes(sizes, "sizes", true), accuracy_floor};
  if (app.slo <= 0) throw ValueError(str("application '", name, "': slo_s=", slo_s, " is below one nanosecond"));
  validate_application(app);
  return app;
}

std::string describe_application(const Application& a) {
  return str("Application(name=", py_repr(py::str(a.name)), ", slo_s=", py_repr(py::float_(nanos_to_seconds(a.slo))),
             ", share=", py_repr(py::float_(a.share)),
             ", sizes=", a.sizes ? py_repr(py::str(a.sizes->describe())) : "None",
             ", accuracy_floor=", py_repr(py::float_(a.accuracy_floor)), ")");
}

std::shared_ptr<Workload> make_workload(const py::object& arrivals, const std::vector<Application>& apps,
                                        const std::optional<IntArg>& count, std::optional<double> horizon_s) {
  const auto limits = to_limits(count, horizon_s);
  return std::make_shared<Workload>(to_arrivals(arrivals), apps, limits.count, limits.horizon);
}

py::dict columns_to_dict(QueryColumns&& c) {
  py::dict d;
  d["id"] = to_numpy(std::move(c.id));
  d["app"] = to_numpy(std::move(c.app));
  d["size"] = to_numpy(std::move(c.size));
  d["arrival_s"] = to_numpy(std::move(c.arrival_s));
  d["deadline_s"] = to_numpy(std::move(c.deadline_s));
  d["accuracy_floor"] = to_numpy(std::move(c.accuracy_floor));
  return d;
}

const char* const kRoundToDoc =
    "round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.";

}  // namespace

void init_sizes(py::module_& m) {
  py::class_<SizeDistribution, SizeHolder>(
      m, "SizeDistribution",
      "An immutable request-size distribution: how many items each query carries. Sizes are integers >= 1.\n"
      "A real draw x becomes a size in one step: with round_to == 1 the nearest integer (halves up, as Ribbon's\n"
      "round()), with round_to == k > 1 the next multiple of k above x (ceil(x / k) * k, as Kairos); then at least\n"
      "round_to, saturating at 2**31 - 1. generate() draws in bulk.")
      .def(
          "generate",
          [](const SizeDistribution& d, const py::object& seed, const IntArg& count_arg) {
            const auto s = to_seed(seed);
            const auto count = to_int<std::int64_t>(count_arg, "count");
            return to_numpy(run_long([&] { return generate_sizes(d, s, count); }));
          },
          py::kw_only(), py::arg("seed"), py::arg("count"),
          "`count` sizes as an int32 numpy array (no copy), from the stream \"sizes\" of `seed`: the same seed\n"
          "gives the same sizes bit for bit. Releases the GIL; Ctrl-C stops it.")
      .def_property_readonly("mean", &SizeDistribution::mean,
                             "Expected size after clipping and rounding: exact for discrete distributions, a fine "
                             "quadrature (relative error below 1e-3) for continuous ones.")
      .def_property_readonly("round_to", &SizeDistribution::round_to, "Sizes are multiples of this.")
      .def("describe", &SizeDistribution::describe,
           "The distribution and its parameters, e.g. 'lognormal(mu=5.1, sigma=0.2)' (a registry spec).")
      .def("__repr__", &SizeDistribution::describe);

  py::class_<ConstantSize, SizeDistribution, std::shared_ptr<ConstantSize>>(m, "ConstantSize",
                                                                            "Every query has `value` items.")
      .def(py::init([](const IntArg& value, const IntArg& round_to) {
             return std::make_shared<ConstantSize>(to_int<std::int64_t>(value, "value"), to_round_to(round_to));
           }),
           py::arg("value"), py::kw_only(), py::arg("round_to") = 1,
           (std::string("value: items per query, 1 .. 2**31 - 1. ") + kRoundToDoc).c_str())
      .def_property_readonly("value", &ConstantSize::value, "Items per query.");

  py::class_<UniformSize, SizeDistribution, std::shared_ptr<UniformSize>>(
      m, "UniformSize", "Integers uniform on low..high, both included.")
      .def(py::init([](const IntArg& low, const IntArg& high, const IntArg& round_to) {
             return std::make_shared<UniformSize>(to_int<std::int64_t>(low, "low"), to_int<std::int64_t>(high, "high"),
                                                  to_round_to(round_to));
           }),
           py::arg("low"), py::arg("high"), py::kw_only(), py::arg("round_to") = 1,
           (std::string("1 <= low <= high <= 2**31 - 1. ") + kRoundToDoc).c_str())
      .def_property_readonly("low", &UniformSize::low, "Smallest size.")
      .def_property_readonly("high", &UniformSize::high, "Largest size.");

  py::class_<LognormalSize, SizeDistribution, std::shared_ptr<LognormalSize>>(
      m, "LognormalSize",
      "Lognormal sizes exp(N(mu, sigma**2)): mu and sigma are those of the underlying normal, as "
      "numpy.random.lognormal.")
      .def(py::init([](double mu, double sigma, const IntArg& round_to) {
             return std::make_shared<LognormalSize>(mu, sigma, to_round_to(round_to));
           }),
           py::arg("mu"), py::arg("sigma"), py::kw_only(), py::arg("round_to") = 1,
           (std::string("mu finite, sigma > 0. ") + kRoundToDoc).c_str())
      .def_property_readonly("mu", &LognormalSize::mu, "Mean of the underlying normal.")
      .def_property_readonly("sigma", &LognormalSize::sigma, "Standard deviation of the underlying normal.");

  py::class_<ClippedGaussianSize, SizeDistribution, std::shared_ptr<ClippedGaussianSize>>(
      m, "ClippedGaussianSize",
      "A normal N(mean, std**2) clipped to [low, high]: draws outside move to the nearer bound (not redrawn).")
      .def(py::init([](double mean, double std, double low, double high, const IntArg& round_to) {
             return std::make_shared<ClippedGaussianSize>(mean, std, low, high, to_round_to(round_to));
           }),
           py::arg("mean"), py::arg("std"), py::arg("low") = 1.0,
           py::arg("high") = std::numeric_limits<double>::infinity(), py::kw_only(), py::arg("round_to") = 1,
           (std::string("mean finite, std > 0, low finite, high may be inf, low <= high. ") + kRoundToDoc).c_str())
      .def_property_readonly("gaussian_mean", &ClippedGaussianSize::gaussian_mean,
                             "Mean of the normal before clipping (`mean` is the size's expectation).")
      .def_property_readonly("std", &ClippedGaussianSize::stddev, "Standard deviation of the normal.")
      .def_property_readonly("low", &ClippedGaussianSize::low, "Lower clip.")
      .def_property_readonly("high", &ClippedGaussianSize::high, "Upper clip.");

  py::class_<EmpiricalSize, SizeDistribution, std::shared_ptr<EmpiricalSize>>(
      m, "EmpiricalSize",
      "One of `values`: chosen uniformly (weights=None: the values are samples, e.g. a trace's sizes) or with\n"
      "probability proportional to `weights` (a histogram).")
      .def(py::init([](std::vector<double> values, std::optional<std::vector<double>> weights, const IntArg& round_to) {
             return std::make_shared<EmpiricalSize>(std::move(values), weights.value_or(std::vector<double>{}),
                                                    to_round_to(round_to));
           }),
           py::arg("values"), py::arg("weights") = py::none(), py::kw_only(), py::arg("round_to") = 1,
           (std::string("values: positive sizes (floats are rounded); weights: one non-negative weight per value, "
                        "not all zero, or None. ") +
            kRoundToDoc)
               .c_str())
      .def_property_readonly(
          "values", [](const EmpiricalSize& e) { return to_numpy(std::vector<double>(e.values())); },
          "A copy of the values.")
      .def_property_readonly(
          "weights",
          [](const EmpiricalSize& e) -> py::object {
            if (e.weights().empty()) return py::none();
            return to_numpy(std::vector<double>(e.weights()));
          },
          "A copy of the weights, or None for a uniform choice.");

  py::class_<SizeMixture, SizeDistribution, std::shared_ptr<SizeMixture>>(
      m, "SizeMixture",
      "Draws from component i with probability weights[i] / sum(weights). The components' draws stay real\n"
      "until this mixture rounds them (so Kairos's ceil-to-10 sees the raw lognormal).")
      .def(py::init([](const py::sequence& components, std::vector<double> weights, const IntArg& round_to) {
             return std::make_shared<SizeMixture>(to_components(components), std::move(weights), to_round_to(round_to));
           }),
           py::arg("components"), py::arg("weights"), py::kw_only(), py::arg("round_to") = 1,
           (std::string("components: SizeDistributions or spec strings; weights: one non-negative weight each, not "
                        "all zero. ") +
            kRoundToDoc)
               .c_str())
      .def_property_readonly(
          "components",
          [](const SizeMixture& mix) {
            py::list out;
            for (const auto& c : mix.components()) out.append(std::const_pointer_cast<SizeDistribution>(c));
            return out;
          },
          "The components.")
      .def_property_readonly(
          "weights", [](const SizeMixture& mix) { return mix.weights(); }, "The weights, as given.");

  py::class_<FallbackSize, SizeDistribution, std::shared_ptr<FallbackSize>>(
      m, "FallbackSize",
      "Draws from `base`; a draw outside [low, high] is replaced by one draw from `fallback` (not checked again).\n"
      "Kairos keeps its lognormal sizes in [100, 200] this way, else U{190..199}.")
      .def(py::init(
               [](const py::object& base, double low, double high, const py::object& fallback, const IntArg& round_to) {
                 return std::make_shared<FallbackSize>(to_sizes(base, "base", false), low, high,
                                                       to_sizes(fallback, "fallback", false), to_round_to(round_to));
               }),
           py::arg("base"), py::arg("low"), py::arg("high"), py::arg("fallback"), py::kw_only(),
           py::arg("round_to") = 1,
           (std::string("base, fallback: SizeDistributions or spec strings; low <= high (high may be inf). ") +
            kRoundToDoc)
               .c_str())
      .def_property_readonly(
          "base", [](const FallbackSize& f) { return std::const_pointer_cast<SizeDistribution>(f.base()); },
          "The distribution drawn first.")
      .def_property_readonly(
          "fallback", [](const FallbackSize& f) { return std::const_pointer_cast<SizeDistribution>(f.fallback()); },
          "The distribution used when base's draw is outside [low, high].")
      .def_property_readonly("low", &FallbackSize::low, "Smallest kept value of base.")
      .def_property_readonly("high", &FallbackSize::high, "Largest kept value of base.");

  m.def(
      "kairos_sizes", [](const IntArg& round_to) { return kairos_sizes(to_round_to(round_to)); },
      py::arg("round_to") = 10,
      "The Kairos artifact's query sizes (helper.random_samp): with probability 8/99 U{1..99}, 22/99 U{200..599},\n"
      "5/99 U{600..999}, otherwise lognormal(mu=5.1, sigma=0.2) kept if in [100, 200] else U{190..199}; rounded up\n"
      "to a multiple of round_to (the artifact: 10). Registry name: 'kairos_mix'.");
  m.def(
      "ribbon_sizes", [](const IntArg& round_to) { return ribbon_sizes(to_round_to(round_to)); },
      py::arg("round_to") = 1,
      "The Ribbon artifact's query sizes (query/functions.py random_samp): with probability 2/99 U{1..99},\n"
      "10/99 U{250..499}, otherwise lognormal(mu=5.1, sigma=0.2), replaced by U{400..499} above 500; rounded to\n"
      "the nearest integer as its simulator's round(sample). Registry name: 'ribbon_mix'.");

  bind_registry<SizeDistribution>(m, "size_distribution", "size_distributions", &size_registry);

  // --- applications and workloads ---

  py::class_<Application>(m, "Application",
                          "One application of a workload: its name, latency SLO, share of the queries, request "
                          "sizes and the lowest model accuracy it accepts. Immutable.")
      .def(py::init(&make_application), py::arg("name"), py::arg("slo_s"), py::arg("share") = 1.0,
           py::arg("sizes") = py::none(), py::arg("accuracy_floor") = 0.0,
           "name: unique within a workload; slo_s: deadline = arrival + slo_s (seconds, > 0); share: relative rate\n"
           "share (> 0, normalised over the applications); sizes: a SizeDistribution, a spec string such as\n"
           "'lognormal(mu=5.1, sigma=0.2)', or None (every query has size 1); accuracy_floor: in [0, 1].")
      .def_property_readonly(
          "name", [](const Application& a) { return a.name; }, "The application's name.")
      .def_property_readonly(
          "slo_s", [](const Application& a) { return nanos_to_seconds(a.slo); }, "Latency SLO, seconds.")
      .def_property_readonly(
          "share", [](const Application& a) { return a.share; }, "Relative rate share (as given).")
      .def_property_readonly(
          "sizes",
          [](const Application& a) -> py::object {
            if (!a.sizes) return py::none();
            return py::cast(std::const_pointer_cast<SizeDistribution>(a.sizes));
          },
          "The size distribution, or None (size 1).")
      .def_property_readonly(
          "accuracy_floor", [](const Application& a) { return a.accuracy_floor; },
          "The lowest model accuracy the application accepts (0: any).")
      .def("__repr__", &describe_application);

  // Query itself is bound with the scheduler interface (bind_sched.cpp).
  py::class_<QueryStream>(m, "QueryStream", "The lazy queries of one run: iterate it for Query objects.")
      .def(
          "__iter__", [](py::object self) { return self; }, "The stream itself (an iterator).")
      .def(
          "__next__",
          [](QueryStream& s) {
            auto q = s.next();
            if (!q) throw py::stop_iteration();
            return *q;
          },
          "The next Query; StopIteration once the workload ends.");

  py::class_<Workload, std::shared_ptr<Workload>>(
      m, "Workload",
      "Arrival process x application mix. Each query picks its application by share (stream \"apps\"), its size\n"
      "from that application's distribution (stream \"sizes/<index>\") and gets deadline = arrival + slo. A run\n"
      "stops after `count` queries, at the first arrival at or after `horizon_s` (not included), or when a\n"
      "finite arrival trace ends.")
      .def(py::init(&make_workload), py::arg("arrivals"), py::arg("apps"), py::arg("count") = py::none(),
           py::arg("horizon_s") = py::none(),
           "arrivals: an ArrivalProcess or a spec string such as 'poisson(rate=100)'; apps: a list of Application\n"
           "with unique names; count and horizon_s: limits, either may be None but not both.")
      .def(
          "generate",
          [](const Workload& w, const py::object& seed) {
            const auto s = to_seed(seed);
            return columns_to_dict(run_long([&] { return w.generate_columns(s); }));
          },
          py::kw_only(), py::arg("seed"),
          "Every query of the run as a dict of numpy columns (no copies): id (int64), app (int32 index into apps),\n"
          "size (int32), arrival_s and deadline_s (float64 seconds), accuracy_floor (float32). The same seed gives\n"
          "the same queries bit for bit. Releases the GIL; Ctrl-C stops it.")
      .def(
          "start", [](const Workload& w, const py::object& seed) { return w.start(to_seed(seed)); }, py::kw_only(),
          py::arg("seed"), "A lazy QueryStream over the same queries generate(seed=seed) returns.")
      .def("describe", &Workload::describe, "The arrival process, every application and the limits.")
      .def("__repr__", &Workload::describe)
      .def_property_readonly(
          "arrivals", [](const Workload& w) { return std::const_pointer_cast<ArrivalProcess>(w.arrivals_ptr()); },
          "The arrival process.")
      .def_property_readonly(
          "apps", [](const Workload& w) { return w.apps(); }, "The applications (copies), in index order.")
      .def_property_readonly(
          "app_names",
          [](const Workload& w) {
            std::vector<std::string> names;
            for (const auto& a : w.apps()) names.push_back(a.name);
            return names;
          },
          "The applications' names, in index order (the `app` column indexes this).")
      .def_property_readonly(
          "shares", [](const Workload& w) { return to_numpy(std::vector<double>(w.shares())); },
          "Each application's share of the queries, normalised to sum to 1.")
      .def_property_readonly(
          "count",
          [](const Workload& w) -> std::optional<std::int64_t> {
            if (w.max_count() == kUnlimitedCount) return std::nullopt;
            return w.max_count();
          },
          "The query limit, or None.")
      .def_property_readonly(
          "horizon_s",
          [](const Workload& w) -> std::optional<double> {
            if (w.horizon() == kUnlimitedHorizon) return std::nullopt;
            return nanos_to_seconds(w.horizon());
          },
          "The time limit in seconds, or None.");

  m.def(
      "zipf_shares",
      [](const IntArg& n, double exponent) { return to_numpy(zipf_shares(to_int<std::int64_t>(n, "n"), exponent)); },
      py::arg("n"), py::arg("exponent") = 1.0,
      "Zipf popularity of n applications: share[i] proportional to 1 / (i + 1)**exponent, normalised to sum to 1\n"
      "(float64 array). exponent 0 gives equal shares.");
}

}  // namespace servelab::bindings
