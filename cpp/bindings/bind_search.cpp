// Search over integer configuration spaces (servelab.solvers.search). The search loop runs in C++
// with the GIL released; the objective and upper bound are Python callables, called with the GIL
// held, and an exception they raise leaves the search as the original Python exception.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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
#include "servelab/solvers/search/search.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

namespace ss = solvers::search;

using SpaceClass = py::class_<ss::SearchSpace>;
using ResultClass = py::class_<ss::SearchResult>;

// Configurations as an int64 array [configuration, dimension]; config_of(row) is a row's Config.
template <typename Rows, typename ConfigOf>
py::array_t<std::int64_t> configs_array(const Rows& rows, std::size_t dims, ConfigOf config_of) {
  std::vector<std::int64_t> flat;
  flat.reserve(rows.size() * dims);
  for (const auto& row : rows) {
    const ss::Config& config = config_of(row);
    flat.insert(flat.end(), config.begin(), config.end());
  }
  return to_numpy(std::move(flat), {static_cast<py::ssize_t>(rows.size()), static_cast<py::ssize_t>(dims)});
}

// One column of the dimensions: get(dimension) for each.
template <typename Get>
auto dimension_column(const ss::SearchSpace& space, Get get) {
  std::vector<decltype(get(space.dimensions().front()))> out;
  for (const auto& d : space.dimensions()) out.push_back(get(d));
  return out;
}

// The space's dimensions, budget and minimum counts, as given.
void def_space_properties(SpaceClass& space) {
  space
      .def_property_readonly(
          "names",
          [](const ss::SearchSpace& s) { return dimension_column(s, [](const ss::Dimension& d) { return d.name; }); })
      .def_property_readonly(
          "lower",
          [](const ss::SearchSpace& s) { return dimension_column(s, [](const ss::Dimension& d) { return d.lower; }); })
      .def_property_readonly(
          "upper",
          [](const ss::SearchSpace& s) { return dimension_column(s, [](const ss::Dimension& d) { return d.upper; }); })
      .def_property_readonly("unit_cost",
                             [](const ss::SearchSpace& s) {
                               return dimension_column(s, [](const ss::Dimension& d) { return d.unit_cost; });
                             })
      .def_property_readonly("budget", [](const ss::SearchSpace& s) { return s.budget(); })
      .def_property_readonly("at_least",
                             [](const ss::SearchSpace& s) {
                               std::vector<std::pair<std::size_t, std::int64_t>> out;
                               for (const auto& c : s.at_least()) out.emplace_back(c.dimension, c.count);
                               return out;
                             })
      .def_property_readonly("min_total", &ss::SearchSpace::min_total);
}

void bind_space(py::module_& m) {
  SpaceClass space(m, "_SearchSpace",
                   "Integer boxes of counts with unit costs, an optional budget and minimum counts.");
  space.def(py::init([](const std::vector<std::string>& names, const py::object& lower, const py::object& upper,
                        const std::vector<double>& unit_cost, std::optional<double> budget,
                        const std::vector<std::pair<std::size_t, IntArg>>& at_least, const IntArg& min_total) {
              const auto lows = to_int_list<std::int64_t>(lower, "lower");
              const auto highs = to_int_list<std::int64_t>(upper, "upper");
              auto dims = ss::dimensions_from_columns(names, lows, highs, unit_cost);
              std::vector<ss::AtLeast> minimums;
              for (const auto& [dim, count] : to_int_pairs<std::int64_t>(at_least, "at_least")) {
                minimums.push_back({dim, count});
              }
              return ss::SearchSpace(std::move(dims), budget, std::move(minimums),
                                     to_int<std::int64_t>(min_total, "min_total"));
            }),
            py::arg("names"), py::arg("lower"), py::arg("upper"), py::arg("unit_cost"), py::arg("budget"),
            py::arg("at_least"), py::arg("min_total"));
  def_space_properties(space);
  space.def_property_readonly("box_points", &ss::SearchSpace::box_points)
      .def("__len__", &ss::SearchSpace::size)
      .def("cost", &ss::SearchSpace::cost, py::arg("config"), "Price of a config, $/h.")
      .def("feasible", &ss::SearchSpace::feasible, py::arg("config"),
           "Within the box, the budget and the minimum counts.")
      .def(
          "enumerate",
          [](const ss::SearchSpace& s) {
            return configs_array(s.enumerate(), s.size(), [](const ss::Config& c) -> const ss::Config& { return c; });
          },
          "Every feasible config as an (n, dimensions) int64 array, lexicographic order.");
}

// The outcome: the best config, counts and why the search stopped.
void def_result_outcome(ResultClass& result) {
  result.def_readonly("method", &ss::SearchResult::method)
      .def_property_readonly("goal", [](const ss::SearchResult& r) { return std::string(ss::goal_name(r.goal)); })
      .def_readonly("found", &ss::SearchResult::found, "False: no feasible configuration was evaluated.")
      .def_property_readonly("best_config",
                             [](const ss::SearchResult& r) -> py::object {
                               return r.found ? py::object(config_to_python(r.best_config)) : py::none();
                             })
      .def_readonly("best_value", &ss::SearchResult::best_value)
      .def_readonly("best_cost", &ss::SearchResult::best_cost)
      .def_readonly("best_index", &ss::SearchResult::best_index,
                    "Evaluations used to reach the best config (1-based), 0 when none was found.")
      .def_property_readonly("evaluations", &ss::SearchResult::evaluations)
      .def_readonly("space_points", &ss::SearchResult::space_points)
      .def_property_readonly("share", &ss::SearchResult::share,
                             "Evaluations as a share of the feasible points of the space (NaN for an empty space).")
      .def_readonly("pruned", &ss::SearchResult::pruned)
      .def_readonly("unexplored", &ss::SearchResult::unexplored)
      .def_readonly("stop_reason", &ss::SearchResult::stop_reason)
      .def("__repr__", [](const ss::SearchResult& r) {
        return str("SearchResult(method=", r.method, ", found=", r.found ? "True" : "False",
                   r.found
                       ? str(", best_config=", ss::SearchSpace::format(r.best_config), ", best_value=", r.best_value,
                             ", best_cost=", r.best_cost, ", best_index=", r.best_index)
                       : std::string(),
                   ", evaluations=", r.evaluations(), ", pruned=", r.pruned, ", space_points=", r.space_points,
                   ", stop_reason='", r.stop_reason, "')");
      });
}

// The evaluation trace, as columns.
void def_result_trace(ResultClass& result) {
  result
      .def_property_readonly(
          "trace_configs",
          [](const ss::SearchResult& r) {
            const std::size_t dims = r.trace.empty() ? 0 : r.trace.front().config.size();
            return configs_array(r.trace, dims, [](const ss::Evaluation& e) -> const ss::Config& { return e.config; });
          })
      .def_property_readonly("trace_values",
                             [](const ss::SearchResult& r) {
                               std::vector<double> out;
                               for (const auto& e : r.trace) out.push_back(e.value);
                               return to_numpy(std::move(out));
                             })
      .def_property_readonly("trace_costs",
                             [](const ss::SearchResult& r) {
                               std::vector<double> out;
                               for (const auto& e : r.trace) out.push_back(e.cost);
                               return to_numpy(std::move(out));
                             })
      .def_property_readonly("trace_feasible",
                             [](const ss::SearchResult& r) {
                               py::array_t<bool> out(static_cast<py::ssize_t>(r.trace.size()));
                               auto view = out.mutable_unchecked<1>();
                               for (std::size_t k = 0; k < r.trace.size(); ++k) view(k) = r.trace[k].feasible;
                               return out;
                             })
      .def("evaluations_to_reach", &ss::evaluations_to_reach, py::arg("target"), py::arg("tolerance") = 1e-9,
           "Evaluations after which a config at least as good as `target` was evaluated (maximize: value >= "
           "target; minimize_cost: feasible and cost <= target); 0 if never.");
}

void bind_result(py::module_& m) {
  ResultClass result(m, "SearchResult", "A search's outcome: the best config, the evaluation trace, pruning counts.");
  def_result_outcome(result);
  def_result_trace(result);
}

// The registered methods (SearchMethod, list_/make_search_method) and run_search.
void bind_methods(py::module_& solvers) {
  py::class_<ss::Searcher, std::shared_ptr<ss::Searcher>>(solvers, "SearchMethod", "A registered search method.")
      .def("describe", &ss::Searcher::describe)
      .def("__repr__", &ss::Searcher::describe);
  bind_registry<ss::Searcher>(solvers, "search_method", "search_methods", &ss::searcher_registry);

  solvers.def(
      "run_search",
      [](const ss::SearchSpace& space, const py::object& objective, const std::string& goal, const std::string& method,
         const py::object& seed, const IntArg& max_evaluations, std::optional<double> stop_at,
         const py::object& upper_bound, double target, bool monotone_pruning, bool bound_pruning,
         const std::vector<std::size_t>& strict_dimensions, const py::dict& params) {
        if (!PyCallable_Check(objective.ptr())) {
          throw ValueError(str("objective=", std::string(py::repr(objective)), " is not callable"));
        }
        if (!upper_bound.is_none() && !PyCallable_Check(upper_bound.ptr())) {
          throw ValueError(str("upper_bound=", std::string(py::repr(upper_bound)), " is not callable"));
        }
        ss::Problem problem{space,
                            python_function(objective, "objective"),
                            ss::parse_goal(goal),
                            monotone_pruning,
                            upper_bound.is_none() ? ss::UpperBound{} : python_function(upper_bound, "upper_bound"),
                            bound_pruning,
                            target,
                            strict_dimensions};
        ss::SearchOptions options{to_seed(seed), to_int<std::int64_t>(max_evaluations, "max_evaluations"), stop_at};
        py::kwargs kwargs;
        for (const auto& [key, value] : params) kwargs[key] = value;
        const ParamArgs args = args_from_python(kwargs);
        return run_long([&] { return ss::run_search(problem, method, options, args); });
      },
      py::arg("space"), py::arg("objective"), py::arg("goal"), py::arg("method"), py::arg("seed"),
      py::arg("max_evaluations"), py::arg("stop_at"), py::arg("upper_bound"), py::arg("target"),
      py::arg("monotone_pruning"), py::arg("bound_pruning"), py::arg("strict_dimensions"), py::arg("params"),
      "Runs a registered search method; servelab.solvers.search.maximize / minimize_cost are the friendly API.");
}

}  // namespace

void init_search(py::module_& solvers) {
  bind_space(solvers);
  bind_result(solvers);
  bind_methods(solvers);
}

}  // namespace servelab::bindings
