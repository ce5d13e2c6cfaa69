// _core.kairos: the LP-based fluid bound and the size classes it reads (servelab.kairos.fluid
// wraps both).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/kairos/fluid_bound.hpp"
#include "servelab/workload/sizes.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

// The bound as a dict; the per-(size class, type) arrays are [class, type].
py::dict fluid_bound_dict(kairos::FluidBound&& b) {
  py::dict out;
  out["throughput"] = b.throughput;
  out["types"] = b.types;
  out["counts"] = to_numpy(std::move(b.counts));
  out["sizes"] = to_numpy(std::move(b.sizes));
  out["probabilities"] = to_numpy(std::move(b.probabilities));
  out["tail"] = b.tail;
  const auto types = static_cast<py::ssize_t>(b.types.size());
  const auto rows = static_cast<py::ssize_t>(b.dropped.size());
  out["rate"] = to_numpy(std::move(b.rate), {rows, types});
  out["service_s"] = to_numpy(std::move(b.service_s), {rows, types});
  out["success"] = to_numpy(std::move(b.success), {rows, types});
  out["dropped"] = to_numpy(std::move(b.dropped));
  out["type_rate"] = to_numpy(std::move(b.type_rate));
  out["utilisation"] = to_numpy(std::move(b.utilisation));
  out["miss_rate"] = b.miss_rate;
  out["solver"] = b.solver;
  return out;
}

void bind_size_classes(py::module_& kairos) {
  kairos.def(
      "fluid_size_classes",
      [](const workload::SizeDistribution& sizes, const IntArg& max_size_arg, const IntArg& max_classes_arg) {
        const auto max_size = to_int<std::int64_t>(max_size_arg, "max_size");
        const auto max_classes = to_int<std::int64_t>(max_classes_arg, "max_classes");
        auto classes = run_long([&] { return kairos::size_classes(sizes, max_size, max_classes); });
        std::vector<std::int64_t> size;
        std::vector<double> probability;
        for (const auto& c : classes.classes) {
          size.push_back(c.size);
          probability.push_back(c.probability);
        }
        return py::make_tuple(to_numpy(std::move(size)), to_numpy(std::move(probability)), classes.tail);
      },
      py::arg("sizes"), py::arg("max_size"), py::arg("max_classes"),
      "(sizes, probabilities, tail): the exact size mix of a distribution up to max_size.");
}

void bind_fluid_bound(py::module_& kairos) {
  kairos.def(
      "fluid_upper_bound",
      [](const profile::Profile& profile, const std::string& model,
         const std::vector<std::pair<std::string, IntArg>>& config_arg, double qos_s, const py::object& class_sizes_arg,
         const std::vector<double>& class_probabilities, double tail, double violation, const std::string& statistic,
         const std::optional<std::string>& eligibility, double time_limit_s) {
        const auto config = to_int_pairs<std::int64_t>(config_arg, "config");
        const auto class_sizes = to_int_list<std::int64_t>(class_sizes_arg, "class_sizes");
        kairos::FluidOptions options;
        options.violation = violation;
        options.statistic = profile::parse_statistic(statistic, "statistic");
        if (eligibility) options.eligibility = profile::parse_statistic(*eligibility, "eligibility");
        options.solver.time_limit_s = time_limit_s;
        if (class_sizes.size() != class_probabilities.size())
          throw ValueError(str("class sizes (", class_sizes.size(), ") and probabilities (", class_probabilities.size(),
                               ") differ in length"));
        std::vector<kairos::SizeClass> list;
        for (std::size_t k = 0; k < class_sizes.size(); ++k) list.push_back({class_sizes[k], class_probabilities[k]});
        const auto classes = kairos::size_classes(std::move(list), tail);
        return fluid_bound_dict(
            run_long([&] { return kairos::fluid_upper_bound(profile, model, config, qos_s, classes, options); }));
      },
      py::arg("profile"), py::arg("model"), py::arg("config"), py::arg("qos_s"), py::arg("class_sizes"),
      py::arg("class_probabilities"), py::arg("tail"), py::arg("violation"), py::arg("statistic"),
      py::arg("eligibility").none(true), py::arg("time_limit_s"),
      "The fluid upper bound of one configuration (servelab.kairos.fluid_upper_bound wraps it).");
}

}  // namespace

void init_kairos_fluid(py::module_& kairos) {
  bind_size_classes(kairos);
  bind_fluid_bound(kairos);
}

}  // namespace servelab::bindings
