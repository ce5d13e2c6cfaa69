// servelab._core bindings of request sizes: the SizeDistribution family, the artifacts' size mixes
// and the size registry. Applications and workloads, which use them, are in bind_workload.cpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "registry_binding.hpp"
#include "seed.hpp"
#include "servelab/workload/size_registry.hpp"
#include "servelab/workload/sizes.hpp"
#include "workload_args.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::workload;

using SizeHolder = std::shared_ptr<SizeDistribution>;

std::int64_t to_round_to(const IntArg& round_to) { return to_int<std::int64_t>(round_to, "round_to"); }

std::vector<SizePtr> to_components(const py::sequence& components) {
  std::vector<SizePtr> out;
  for (std::size_t i = 0; i < components.size(); ++i)
    out.push_back(to_sizes(components[i], str("components[", i, "]")));
  return out;
}

const char* const kRoundToDoc =
    "round_to: round sizes up to a multiple of this (Kairos uses 10); 1 rounds to the nearest integer.";

// A constructor docstring: what is particular to the class, then round_to.
std::string init_doc(const char* particular) { return std::string(particular) + kRoundToDoc; }

void bind_size_distribution(py::module_& m) {
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
}

// ConstantSize, UniformSize, LognormalSize: parametric distributions.
void bind_parametric_sizes(py::module_& m) {
  py::class_<ConstantSize, SizeDistribution, std::shared_ptr<ConstantSize>>(m, "ConstantSize",
                                                                            "Every query has `value` items.")
      .def(py::init([](const IntArg& value, const IntArg& round_to) {
             return std::make_shared<ConstantSize>(to_int<std::int64_t>(value, "value"), to_round_to(round_to));
           }),
           py::arg("value"), py::kw_only(), py::arg("round_to") = 1,
           init_doc("value: items per query, 1 .. 2**31 - 1. ").c_str())
      .def_property_readonly("value", &ConstantSize::value, "Items per query.");

  py::class_<UniformSize, SizeDistribution, std::shared_ptr<UniformSize>>(
      m, "UniformSize", "Integers uniform on low..high, both included.")
      .def(py::init([](const IntArg& low, const IntArg& high, const IntArg& round_to) {
             return std::make_shared<UniformSize>(to_int<std::int64_t>(low, "low"), to_int<std::int64_t>(high, "high"),
                                                  to_round_to(round_to));
           }),
           py::arg("low"), py::arg("high"), py::kw_only(), py::arg("round_to") = 1,
           init_doc("1 <= low <= high <= 2**31 - 1. ").c_str())
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
           init_doc("mu finite, sigma > 0. ").c_str())
      .def_property_readonly("mu", &LognormalSize::mu, "Mean of the underlying normal.")
      .def_property_readonly("sigma", &LognormalSize::sigma, "Standard deviation of the underlying normal.");
}

// ClippedGaussianSize, EmpiricalSize: distributions of measured data.
void bind_data_sizes(py::module_& m) {
  py::class_<ClippedGaussianSize, SizeDistribution, std::shared_ptr<ClippedGaussianSize>>(
      m, "ClippedGaussianSize",
      "A normal N(mean, std**2) clipped to [low, high]: draws outside move to the nearer bound (not redrawn).")
      .def(py::init([](double mean, double std, double low, double high, const IntArg& round_to) {
             return std::make_shared<ClippedGaussianSize>(mean, std, low, high, to_round_to(round_to));
           }),
           py::arg("mean"), py::arg("std"), py::arg("low") = 1.0,
           py::arg("high") = std::numeric_limits<double>::infinity(), py::kw_only(), py::arg("round_to") = 1,
           init_doc("mean finite, std > 0, low finite, high may be inf, low <= high. ").c_str())
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
           init_doc("values: positive sizes (floats are rounded); weights: one non-negative weight per value, "
                    "not all zero, or None. ")
               .c_str())
      .def_property_readonly(
          "values", [](const EmpiricalSize& e) { return to_numpy_copy(e.values()); }, "A copy of the values.")
      .def_property_readonly(
          "weights",
          [](const EmpiricalSize& e) -> py::object {
            if (e.weights().empty()) return py::none();
            return to_numpy_copy(e.weights());
          },
          "A copy of the weights, or None for a uniform choice.");
}

// SizeMixture, FallbackSize: distributions made of other distributions.
void bind_composite_sizes(py::module_& m) {
  py::class_<SizeMixture, SizeDistribution, std::shared_ptr<SizeMixture>>(
      m, "SizeMixture",
      "Draws from component i with probability weights[i] / sum(weights). The components' draws stay real\n"
      "until this mixture rounds them (so Kairos's ceil-to-10 sees the raw lognormal).")
      .def(py::init([](const py::sequence& components, std::vector<double> weights, const IntArg& round_to) {
             return std::make_shared<SizeMixture>(to_components(components), std::move(weights), to_round_to(round_to));
           }),
           py::arg("components"), py::arg("weights"), py::kw_only(), py::arg("round_to") = 1,
           init_doc("components: SizeDistributions or spec strings; weights: one non-negative weight each, not "
                    "all zero. ")
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
                 return std::make_shared<FallbackSize>(to_sizes(base, "base"), low, high,
                                                       to_sizes(fallback, "fallback"), to_round_to(round_to));
               }),
           py::arg("base"), py::arg("low"), py::arg("high"), py::arg("fallback"), py::kw_only(),
           py::arg("round_to") = 1,
           init_doc("base, fallback: SizeDistributions or spec strings; low <= high (high may be inf). ").c_str())
      .def_property_readonly(
          "base", [](const FallbackSize& f) { return std::const_pointer_cast<SizeDistribution>(f.base()); },
          "The distribution drawn first.")
      .def_property_readonly(
          "fallback", [](const FallbackSize& f) { return std::const_pointer_cast<SizeDistribution>(f.fallback()); },
          "The distribution used when base's draw is outside [low, high].")
      .def_property_readonly("low", &FallbackSize::low, "Smallest kept value of base.")
      .def_property_readonly("high", &FallbackSize::high, "Largest kept value of base.");
}

// The artifacts' mixes and the registry (list_size_distributions, make_size_distribution).
void bind_size_functions(py::module_& m) {
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
}

}  // namespace

void init_sizes(py::module_& m) {
  bind_size_distribution(m);
  bind_parametric_sizes(m);
  bind_data_sizes(m);
  bind_composite_sizes(m);
  bind_size_functions(m);
}

}  // namespace servelab::bindings
