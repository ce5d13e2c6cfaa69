// servelab._core.kairos: Kairos's configuration space, upper bounds, one-shot selection and the
// Kairos+ wiring to the generic searches. servelab.kairos wraps these in a pandas-facing API.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "registry_binding.hpp"
#include "search_args.hpp"
#include "seed.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/kairos/bound_profile.hpp"
#include "servelab/systems/kairos/config_space.hpp"
#include "servelab/systems/kairos/kairos_plus.hpp"
#include "servelab/systems/kairos/selection.hpp"
#include "servelab/systems/kairos/upper_bound.hpp"
#include "servelab/workload/sizes.hpp"
#include "workload_args.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using namespace servelab::kairos;

// vio_batch / all_batch thresholds: kNoViolation crosses as None.
py::object threshold_to_py(std::int64_t s) { return s == kNoViolation ? py::none() : py::object(py::int_(s)); }
std::int64_t threshold_from_py(const py::handle& v, const char* field) {
  if (v.is_none()) return kNoViolation;
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v)) {
    throw ValueError(str(field, "=", py::repr(v).cast<std::string>(), " must be an integer batch size or None"));
  }
  return to_int<std::int64_t>(v, field);
}

InstanceSpace make_space(std::vector<std::string> types, std::vector<double> prices, const py::object& max_count,
                         double budget, const IntArg& min_base) {
  InstanceSpace s{std::move(types), std::move(prices), to_int_list<std::int64_t>(max_count, "max_count"), budget,
                  to_int<std::int64_t>(min_base, "min_base")};
  s.validate();
  return s;
}

// The configurations' counts as an int64 array [configuration, type].
py::array_t<std::int64_t> counts_array(const ConfigTable& t) {
  return to_numpy(std::vector<std::int64_t>(t.counts()),
                  {static_cast<py::ssize_t>(t.size()), static_cast<py::ssize_t>(t.n_types())});
}

void bind_instance_space(py::module_& m) {
  py::class_<InstanceSpace>(m, "InstanceSpace",
                            "Instance counts per type (types[0] is the base type) within max_count, costing at most "
                            "budget $/h, with at least min_base base instances.")
      .def(py::init(&make_space), py::arg("types"), py::arg("prices"), py::arg("max_count"), py::arg("budget"),
           py::arg("min_base") = 1)
      .def_readonly("types", &InstanceSpace::types)
      .def_readonly("prices", &InstanceSpace::prices)
      .def_readonly("max_count", &InstanceSpace::max_count)
      .def_readonly("budget", &InstanceSpace::budget)
      .def_readonly("min_base", &InstanceSpace::min_base)
      .def(
          "enumerate",
          [](const InstanceSpace& s) {
            const ConfigTable t = enumerate_configs(s);
            return py::make_tuple(counts_array(t), to_numpy_copy(t.costs()));
          },
          "(counts [n, types] int64, cost [n] $/h) of every configuration, the first type varying slowest.")
      .def("__repr__", [](const InstanceSpace& s) {
        std::string types;
        for (std::size_t k = 0; k < s.types.size(); ++k) {
          types += str(k ? ", " : "", s.types[k], " x<=", s.max_count[k], " @", s.prices[k]);
        }
        return str("InstanceSpace([", types, "], budget=", s.budget, ", min_base=", s.min_base, ")");
      });
}

void bind_auxiliary_profile(py::module_& m) {
  py::class_<AuxiliaryProfile>(m, "AuxiliaryProfile",
                               "One auxiliary type's entry of the bound inputs (allocator_profile.json).")
      .def(py::init([](std::string type, double qps, const py::object& vio_batch, double small_ratio, double time_ratio,
                       const py::dict& all_batch) {
             AuxiliaryProfile a;
             a.type = std::move(type);
             a.qps = qps;
             a.vio_batch = threshold_from_py(vio_batch, "vio_batch");
             a.small_ratio = small_ratio;
             a.time_ratio = time_ratio;
             for (const auto& [k, v] : all_batch) a.all_batch[threshold_from_py(k, "all_batch key")] = v.cast<double>();
             return a;
           }),
           py::arg("type"), py::arg("qps"), py::arg("vio_batch"), py::arg("small_ratio"), py::arg("time_ratio"),
           py::arg("all_batch"))
      .def_readonly("type", &AuxiliaryProfile::type)
      .def_readonly("qps", &AuxiliaryProfile::qps)
      .def_property_readonly("vio_batch", [](const AuxiliaryProfile& a) { return threshold_to_py(a.vio_batch); })
      .def_readonly("small_ratio", &AuxiliaryProfile::small_ratio)
      .def_readonly("time_ratio", &AuxiliaryProfile::time_ratio)
      .def_property_readonly("all_batch",
                             [](const AuxiliaryProfile& a) {
                               py::dict d;
                               for (const auto& [k, v] : a.all_batch) d[threshold_to_py(k)] = v;
                               return d;
                             })
      .def("__repr__", [](const AuxiliaryProfile& a) {
        return str("AuxiliaryProfile('", a.type, "', qps=", a.qps,
                   ", vio_batch=", a.vio_batch == kNoViolation ? std::string("None") : str(a.vio_batch),
                   ", small_ratio=", a.small_ratio, ", time_ratio=", a.time_ratio, ")");
      });
}

// The bound's inputs: BoundProfile, as read from the artifact or derived from a latency profile.
void bind_bound_profile(py::module_& m) {
  py::class_<BoundProfile>(m, "BoundProfile",
                           "The inputs of Kairos's upper bound: the base type's qps and one AuxiliaryProfile per "
                           "auxiliary type (the artifact's allocator_profile.json for one model).")
      .def(py::init([](std::string base, double base_qps, std::vector<AuxiliaryProfile> auxiliaries,
                       double base_violation_share) {
             BoundProfile p{std::move(base), base_qps, std::move(auxiliaries), base_violation_share};
             p.validate();
             return p;
           }),
           py::arg("base"), py::arg("base_qps"), py::arg("auxiliaries"), py::arg("base_violation_share") = 0.0)
      .def_readonly("base", &BoundProfile::base)
      .def_readonly("base_qps", &BoundProfile::base_qps)
      .def_readonly("auxiliaries", &BoundProfile::auxiliaries)
      .def_readonly("base_violation_share", &BoundProfile::base_violation_share)
      .def("find", &BoundProfile::find, py::arg("type"), py::return_value_policy::copy)
      .def("__repr__", [](const BoundProfile& p) {
        return str("BoundProfile(base='", p.base, "', base_qps=", p.base_qps, ", ", p.auxiliaries.size(),
                   " auxiliary types)");
      });

  m.def(
      "derive_bound_profile",
      [](const profile::Profile& profile, const std::vector<std::string>& types, const std::string& model,
         double qos_ms, const py::object& sizes, const std::string& statistic, const std::string& qos_statistic,
         const std::string& region, double max_tail) {
        DeriveOptions options;
        options.statistic = profile::parse_statistic(statistic);
        options.qos_statistic = profile::parse_statistic(qos_statistic, "qos_statistic");
        options.region = parse_region(region);
        options.max_tail = max_tail;
        const workload::SizePtr dist = to_sizes(sizes, "sizes", NoneSizes::Rejected, "'kairos_mix'");
        return run_long([&] { return derive_bound_profile(profile, types, model, qos_ms / 1e3, *dist, options); });
      },
      py::arg("profile"), py::arg("types"), py::arg("model"), py::arg("qos_ms"), py::arg("sizes") = "kairos_mix",
      py::arg("statistic") = "mean_without_max", py::arg("qos_statistic") = "p50", py::arg("region") = "artifact",
      py::arg("max_tail") = 1e-6,
      "The bound inputs of `model` on `types` (types[0] the base) from a latency profile, a size distribution and a "
      "QoS target in ms. statistic sets the rates, qos_statistic is compared with QoS. region: 'artifact' (sizes <= "
      "vio_batch count as small) or 'paper' (sizes < vio_batch).");
}

// BoundTable and the functions that bound configurations: upper_bounds, table_from_bounds, upper_bound.
void bind_bound_table(py::module_& m) {
  py::class_<BoundTable>(m, "BoundTable", "Kairos's upper bound of every configuration of a space, ranked.")
      .def_readonly("space", &BoundTable::space)
      .def_property_readonly("formula",
                             [](const BoundTable& t) { return std::string(aggregation_name(t.aggregation)); })
      .def_property_readonly("counts", [](const BoundTable& t) { return counts_array(t.configs); })
      .def_property_readonly("cost", [](const BoundTable& t) { return to_numpy_copy(t.configs.costs()); })
      .def_property_readonly("bound", [](const BoundTable& t) { return to_numpy_copy(t.bound); })
      .def_property_readonly("rank", [](const BoundTable& t) { return to_numpy_copy(t.rank); })
      .def_property_readonly("order",
                             [](const BoundTable& t) {
                               std::vector<std::int64_t> o(t.order.begin(), t.order.end());
                               return to_numpy(std::move(o));
                             })
      .def_property_readonly("regime",
                             [](const BoundTable& t) {
                               std::vector<std::string> r;
                               for (Regime g : t.regime) r.emplace_back(regime_name(g));
                               return r;
                             })
      .def("__len__", [](const BoundTable& t) { return t.configs.size(); });

  m.def(
      "upper_bounds",
      [](const BoundProfile& profile, const InstanceSpace& space, const std::string& formula) {
        const Aggregation agg = parse_aggregation(formula);
        return run_long([&] { return upper_bounds(profile, space, agg); });
      },
      py::arg("profile"), py::arg("space"), py::arg("formula") = "artifact",
      "Bounds and ranks every configuration of `space`. formula: 'artifact' (max of each auxiliary parameter) or "
      "'paper' (the auxiliary type with the largest vio_batch stands for all).");

  m.def(
      "table_from_bounds",
      [](const InstanceSpace& space, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& counts,
         const std::vector<double>& bounds, const std::string& formula) {
        if (counts.ndim() != 2 || counts.shape(1) != static_cast<py::ssize_t>(space.types.size())) {
          throw ValueError(str("counts must be a 2-D array with one column per type (", space.types.size(), ")"));
        }
        std::vector<std::int64_t> flat(counts.data(), counts.data() + counts.size());
        return table_from_bounds(space, flat, bounds, parse_aggregation(formula));
      },
      py::arg("space"), py::arg("counts"), py::arg("bounds"), py::arg("formula") = "artifact",
      "A table of given bounds: counts lists every configuration of the space once, in any order.");

  m.def(
      "upper_bound",
      [](const BoundProfile& profile, const std::vector<std::string>& types, const py::object& counts,
         const std::string& formula) {
        Regime regime{};
        const auto n = to_int_list<std::int64_t>(counts, "counts");
        const double b = UpperBound(profile, types, parse_aggregation(formula)).bound(n, &regime);
        return py::make_tuple(b, std::string(regime_name(regime)));
      },
      py::arg("profile"), py::arg("types"), py::arg("counts"), py::arg("formula") = "artifact",
      "(bound, regime) of one configuration.");
}

// Choosing a configuration: select_config (one shot) and search (Kairos+ and the generic searches).
void bind_selection(py::module_& m) {
  m.def(
      "select_config",
      [](const BoundTable& table, const IntArg& same_base_top, const IntArg& top_k) {
        const Selection s = select_config(table, to_int<std::size_t>(same_base_top, "same_base_top"),
                                          to_int<std::size_t>(top_k, "top_k"));
        py::dict out;
        out["index"] = s.index;
        out["rule"] = s.rule;
        out["candidates"] = s.candidates;
        out["distance_sums"] = s.distance_sums;
        return out;
      },
      py::arg("table"), py::arg("same_base_top") = 3, py::arg("top_k") = 10,
      "Kairos's one-shot choice: {'index', 'rule', 'candidates', 'distance_sums'}.");

  m.def(
      "search",
      [](const BoundTable& table, const py::function& objective, const std::string& method, const py::object& seed,
         const IntArg& max_evaluations, std::optional<double> stop_at, bool bound_pruning, bool monotone_pruning,
         const py::kwargs& kwargs) {
        solvers::search::SearchOptions options;
        options.seed = to_seed(seed);
        options.max_evaluations = to_int<std::int64_t>(max_evaluations, "max_evaluations");
        options.stop_at = stop_at;
        const ParamArgs args = args_from_python(kwargs);
        // The objective is Python: it takes the GIL back for each call. Between calls the search
        // runs without it and stops on Ctrl-C.
        const solvers::search::Objective f = python_function(objective, "objective");
        return run_long(
            [&] { return search_configs(table, f, method, options, args, bound_pruning, monotone_pruning); });
      },
      py::arg("table"), py::arg("objective"), py::arg("method") = "kairos_plus", py::arg("seed") = 0,
      py::arg("max_evaluations") = 0, py::arg("stop_at") = py::none(), py::arg("bound_pruning") = false,
      py::arg("monotone_pruning") = true,
      "Searches the table's space with a registered method; objective(counts tuple) -> value. Returns the solvers' "
      "SearchResult (configs as counts tuples in the space's type order). Kairos+ always prunes by bound; "
      "bound_pruning gives the other methods the same; monotone_pruning=False turns off the sub-configuration "
      "pruning (for objectives that removing an instance can raise). Extra keywords are the method's parameters.");
}

}  // namespace

void init_kairos(py::module_& m) {
  bind_instance_space(m);
  bind_auxiliary_profile(m);
  bind_bound_profile(m);
  bind_bound_table(m);
  bind_selection(m);
}

}  // namespace servelab::bindings
