// _core.solvers: the LP/MILP model builder and solve() (servelab.solvers.lp wraps them).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/solvers/lp/lp.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using namespace servelab::solvers::lp;

using IndexArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// A 1-D array of `size` entries (size < 0: any).
void check_1d(const py::array& a, const char* name, py::ssize_t size) {
  require_1d(a, name);
  if (size >= 0 && a.shape(0) != size) throw ValueError(str(name, " has ", a.shape(0), " entries, expected ", size));
}

// Rows from compressed sparse row arrays: row r is indices/data[indptr[r]:indptr[r + 1]].
void add_rows(Model& model, const IndexArray& indptr, const IndexArray& indices, const DoubleArray& data,
              const DoubleArray& lower, const DoubleArray& upper, const std::vector<std::string>& names) {
  check_1d(indptr, "indptr", -1);
  if (indptr.shape(0) < 1) throw ValueError("indptr must have at least one entry (0)");
  const auto rows = indptr.shape(0) - 1;
  check_1d(indices, "indices", -1);
  check_1d(data, "data", indices.shape(0));
  check_1d(lower, "lower", rows);
  check_1d(upper, "upper", rows);
  if (!names.empty() && static_cast<py::ssize_t>(names.size()) != rows)
    throw ValueError(str("names has ", names.size(), " entries, expected ", rows));
  const auto* p = indptr.data();
  if (p[0] != 0) throw ValueError(str("indptr[0]=", p[0], " must be 0"));
  std::vector<Term> terms;
  for (py::ssize_t r = 0; r < rows; ++r) {
    if (p[r + 1] < p[r] || p[r + 1] > indices.shape(0))
      throw ValueError(str("indptr[", r + 1, "]=", p[r + 1], " must be in [indptr[", r, "], len(indices)]"));
    terms.clear();
    for (auto k = p[r]; k < p[r + 1]; ++k) {
      const auto var = indices.data()[k];
      if (var < 0 || var >= model.num_variables())
        throw ValueError(
            str("indices[", k, "]=", var, " is not a variable (the model has ", model.num_variables(), ")"));
      terms.push_back({static_cast<std::int32_t>(var), data.data()[k]});
    }
    model.add_constraint(names.empty() ? std::string() : names[r], terms, lower.data()[r], upper.data()[r]);
  }
}

// Duals and reduced costs are None unless the model is a pure LP solved to optimality.
py::dict to_dict(Solution&& s, bool pure_lp) {
  const bool marginals = pure_lp && s.status == Status::Optimal;
  py::dict out;
  out["status"] = std::string(status_name(s.status));
  out["has_solution"] = s.has_solution;
  out["objective"] = s.objective;
  out["values"] = s.has_solution ? py::object(to_numpy(std::move(s.values))) : py::none();
  out["duals"] = marginals ? py::object(to_numpy(std::move(s.duals))) : py::none();
  out["reduced_costs"] = marginals ? py::object(to_numpy(std::move(s.reduced_costs))) : py::none();
  out["best_bound"] = s.best_bound;
  out["iterations"] = s.iterations;
  out["solver"] = s.solver;
  out["message"] = s.message;
  return out;
}

using LpClass = py::class_<Model>;

// The sense, the variables, their bounds, types and objective coefficients.
void def_lp_variables(LpClass& lp) {
  lp.def(py::init([](bool maximize) { return Model(maximize ? Sense::Maximize : Sense::Minimize); }),
         py::arg("maximize") = false)
      .def_property(
          "maximize", [](const Model& m) { return m.sense() == Sense::Maximize; },
          [](Model& m, bool maximize) { m.set_sense(maximize ? Sense::Maximize : Sense::Minimize); })
      .def(
          "add_variable",
          [](Model& m, const std::string& name, double lower, double upper, bool integer, double objective) {
            return m.add_variable(name, lower, upper, integer ? VarType::Integer : VarType::Continuous, objective);
          },
          py::arg("name") = "", py::arg("lower") = 0.0, py::arg("upper") = kInf, py::arg("integer") = false,
          py::arg("objective") = 0.0)
      .def(
          "add_variables",
          [](Model& m, const DoubleArray& lower, const DoubleArray& upper, const DoubleArray& objective,
             const py::array_t<bool, py::array::c_style | py::array::forcecast>& integer,
             const std::vector<std::string>& names) {
            check_1d(lower, "lower", -1);
            const auto n = lower.shape(0);
            check_1d(upper, "upper", n);
            check_1d(objective, "objective", n);
            check_1d(integer, "integer", n);
            if (!names.empty() && static_cast<py::ssize_t>(names.size()) != n)
              throw ValueError(str("names has ", names.size(), " entries, expected ", n));
            const auto first = m.num_variables();
            for (py::ssize_t j = 0; j < n; ++j)
              m.add_variable(names.empty() ? std::string() : names[j], lower.data()[j], upper.data()[j],
                             integer.data()[j] ? VarType::Integer : VarType::Continuous, objective.data()[j]);
            return first;
          },
          py::arg("lower"), py::arg("upper"), py::arg("objective"), py::arg("integer"),
          py::arg("names") = std::vector<std::string>{}, "Adds len(lower) variables; returns the first index.")
      .def("set_objective", &Model::set_objective, py::arg("var"), py::arg("coef"))
      .def("set_objective_offset", &Model::set_objective_offset, py::arg("offset"))
      .def("set_bounds", &Model::set_bounds, py::arg("var"), py::arg("lower"), py::arg("upper"))
      .def(
          "set_integer",
          [](Model& m, std::int32_t var, bool integer) {
            m.set_type(var, integer ? VarType::Integer : VarType::Continuous);
          },
          py::arg("var"), py::arg("integer") = true);
}

// The constraints: one from index and coefficient arrays, or many from CSR arrays.
void def_lp_constraints(LpClass& lp) {
  lp.def(
        "add_constraint",
        [](Model& m, const IndexArray& vars, const DoubleArray& coefs, double lower, double upper,
           const std::string& name) {
          check_1d(vars, "vars", -1);
          check_1d(coefs, "coefs", vars.shape(0));
          std::vector<Term> terms;
          for (py::ssize_t k = 0; k < vars.shape(0); ++k) {
            const auto var = vars.data()[k];
            if (var < 0 || var >= m.num_variables())
              throw ValueError(str("constraint '", name, "': variable index ", var, " is out of range (the model has ",
                                   m.num_variables(), " variables)"));
            terms.push_back({static_cast<std::int32_t>(var), coefs.data()[k]});
          }
          return m.add_constraint(name, terms, lower, upper);
        },
        py::arg("vars"), py::arg("coefs"), py::arg("lower"), py::arg("upper"), py::arg("name") = "")
      .def(
          "add_constraints_csr",
          [](Model& m, const IndexArray& indptr, const IndexArray& indices, const DoubleArray& data,
             const DoubleArray& lower, const DoubleArray& upper, const std::vector<std::string>& names) {
            const auto first = m.num_constraints();
            add_rows(m, indptr, indices, data, lower, upper, names);
            return first;
          },
          py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("lower"), py::arg("upper"),
          py::arg("names") = std::vector<std::string>{}, "Adds one constraint per CSR row; returns the first index.");
}

// Names, indices and sizes.
void def_lp_lookups(LpClass& lp) {
  lp.def("variable", &Model::variable, py::arg("name"), "The index of a variable by name (KeyError if unknown).")
      .def("constraint", &Model::constraint, py::arg("name"))
      .def("variable_name", &Model::variable_name, py::arg("var"))
      .def("constraint_name", &Model::constraint_name, py::arg("row"))
      .def_property_readonly("num_variables", &Model::num_variables)
      .def_property_readonly("num_constraints", &Model::num_constraints)
      .def_property_readonly("num_nonzeros", &Model::num_nonzeros)
      .def_property_readonly("has_integers", &Model::has_integers);
}

void bind_solve(py::module_& solvers) {
  solvers.def(
      "solve_lp_model",
      [](const Model& model, double time_limit_s, const IntArg& iteration_limit, double mip_relative_gap,
         bool verbose) {
        Options options{time_limit_s, to_int<std::int64_t>(iteration_limit, "iteration_limit"), mip_relative_gap,
                        verbose};
        auto solution = run_long([&] { return solve(model, options); });
        return to_dict(std::move(solution), !model.has_integers());
      },
      py::arg("model"), py::arg("time_limit_s") = kInf, py::arg("iteration_limit") = -1,
      py::arg("mip_relative_gap") = 1e-9, py::arg("verbose") = false,
      "Solves an LpModel with CLP (LP) or CBC (MILP); returns a dict (servelab.solvers.lp wraps it).");
  solvers.def("lp_available", &available, "Whether servelab was built with an LP/MILP solver.");
  solvers.def("lp_backend_version", &backend_version, "The LP/MILP solver libraries, e.g. 'cbc 2.10.8, clp 1.17.6'.");
}

}  // namespace

void init_lp(py::module_& solvers) {  // servelab._lp
  LpClass lp(solvers, "LpModel", "A linear or mixed-integer program under construction.");
  def_lp_variables(lp);
  def_lp_constraints(lp);
  def_lp_lookups(lp);
  bind_solve(solvers);
}

}  // namespace servelab::bindings
