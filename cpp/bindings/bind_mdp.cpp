// _core.solvers.mdp: finite MDPs in CSR layout and their solvers (servelab.solvers.mdp wraps it).
// Arrays go in as numpy (copied once into the Mdp, which owns them) and come back without a
// copy: the Mdp's own arrays as read-only views, results as arrays that own their vectors.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/solvers/mdp/mdp.hpp"
#include "servelab/solvers/mdp/solve.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::solvers::mdp;

std::vector<double> doubles(const py::handle& object, const char* name) {
  const auto a = DoubleArray::ensure(object);
  if (!a) {
    PyErr_Clear();
    throw ValueError(str(name, " must be an array of numbers"));
  }
  if (a.ndim() != 1) throw ValueError(str(name, " must be 1-D, got shape ", shape_of(a)));
  return {a.data(), a.data() + a.size()};
}

// Integers only: a float array would be truncated silently by a cast.
template <typename T>
std::vector<T> integers(const py::handle& object, const char* name) {
  auto a = py::array::ensure(object);
  if (!a) {
    PyErr_Clear();
    throw ValueError(str(name, " must be an array of integers"));
  }
  if (a.size() > 0 && a.dtype().kind() != 'i' && a.dtype().kind() != 'u') {  // empty: any dtype
    throw ValueError(str(name, " must hold integers, got dtype ", std::string(py::str(a.dtype()))));
  }
  if (a.ndim() != 1) throw ValueError(str(name, " must be 1-D, got shape ", shape_of(a)));
  const auto wide = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!wide) throw py::error_already_set();
  std::vector<T> out(static_cast<std::size_t>(wide.size()));
  for (py::ssize_t i = 0; i < wide.size(); ++i) {
    const std::int64_t x = wide.data()[i];
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
      throw ValueError(str(name, "[", i, "]=", x, " is out of range: it must be in ", std::numeric_limits<T>::min(),
                           "..", std::numeric_limits<T>::max()));
    }
    out[static_cast<std::size_t>(i)] = static_cast<T>(x);
  }
  return out;
}

// A read-only numpy view of a vector the Mdp owns; `owner` keeps the Mdp alive.
template <typename T>
py::array view(const std::vector<T>& v, py::handle owner) {
  py::array_t<T> a({static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))}, v.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

SolveOptions solve_options(double discount, double tolerance, const IntArg& max_iterations,
                           const IntArg& min_iterations, const IntArg& threads, bool relative,
                           const IntArg& reference_state, const std::optional<py::object>& initial_values) {
  SolveOptions o{.discount = discount,
                 .tolerance = tolerance,
                 .max_iterations = to_int<std::int32_t>(max_iterations, "max_iterations"),
                 .min_iterations = to_int<std::int32_t>(min_iterations, "min_iterations"),
                 .threads = to_int<std::int32_t>(threads, "threads"),
                 .relative = relative,
                 .reference_state = to_int<std::int32_t>(reference_state, "reference_state")};
  if (initial_values && !initial_values->is_none()) o.initial_values = doubles(*initial_values, "initial_values");
  return o;
}

py::dict to_python(Solution&& s) {
  py::dict out;
  out["policy"] = to_numpy(std::move(s.policy));
  out["values"] = to_numpy(std::move(s.values));
  out["iterations"] = s.iterations;
  out["residual"] = s.residual;
  out["converged"] = s.converged;
  out["gain"] = s.gain;
  out["gain_lower"] = s.gain_lower;
  out["gain_upper"] = s.gain_upper;
  return out;
}

#define SOLVE_ARGS                                                                                                    \
  py::arg("discount") = 1.0, py::arg("tolerance") = 1e-9, py::arg("max_iterations") = 10000,                          \
  py::arg("min_iterations") = 0, py::arg("threads") = 0, py::arg("relative") = false, py::arg("reference_state") = 0, \
  py::arg("initial_values") = py::none()

const char* const kMdpDoc =
    "A finite MDP in CSR layout: state s owns pairs [state_begin[s], state_begin[s+1]), pair a owns "
    "transitions [pair_begin[a], pair_begin[a+1]) of next_state/probability; reward[a] is pair a's "
    "expected immediate reward (reward, plus the expectation of transition_reward if given; None: 0). "
    "Validated on construction (ValueError naming the state/pair and value). "
    "The array properties are read-only views, not copies.";

// The Mdp from Python's arrays (each converted in argument order, so the first bad one is named).
Mdp mdp_from_python(const py::object& state_begin, const py::object& pair_begin, const py::object& next_state,
                    const py::object& probability, const py::object& reward, const py::object& transition_reward,
                    double tolerance) {
  auto states = integers<std::int64_t>(state_begin, "state_begin");
  auto pairs = integers<std::int64_t>(pair_begin, "pair_begin");
  auto next = integers<std::int32_t>(next_state, "next_state");
  auto p = doubles(probability, "probability");
  std::optional<std::vector<double>> r;
  if (!reward.is_none()) r = doubles(reward, "reward");
  Mdp mdp = make_mdp(std::move(states), std::move(pairs), std::move(next), std::move(p), std::move(r), tolerance);
  if (!transition_reward.is_none()) {
    add_transition_rewards(mdp, doubles(transition_reward, "transition_reward"), tolerance);
  }
  return mdp;
}

void bind_mdp_class(py::module_& m) {
  py::class_<Mdp>(m, "Mdp", kMdpDoc)
      .def(py::init(&mdp_from_python), py::arg("state_begin"), py::arg("pair_begin"), py::arg("next_state"),
           py::arg("probability"), py::arg("reward") = py::none(), py::arg("transition_reward") = py::none(),
           py::arg("tolerance") = 1e-9)
      .def_property_readonly("num_states", &Mdp::num_states)
      .def_property_readonly("num_pairs", &Mdp::num_pairs)
      .def_property_readonly("num_transitions", &Mdp::num_transitions)
      .def_property_readonly("state_begin",
                             [](py::object self) { return view(self.cast<const Mdp&>().state_begin, self); })
      .def_property_readonly("pair_begin",
                             [](py::object self) { return view(self.cast<const Mdp&>().pair_begin, self); })
      .def_property_readonly("next_state",
                             [](py::object self) { return view(self.cast<const Mdp&>().next_state, self); })
      .def_property_readonly("probability",
                             [](py::object self) { return view(self.cast<const Mdp&>().probability, self); })
      .def_property_readonly("reward", [](py::object self) { return view(self.cast<const Mdp&>().reward, self); })
      .def("validate", &Mdp::validate, py::arg("tolerance") = 1e-9,
           "Checks the MDP again (it was checked on construction); ValueError naming the state/pair.");
}

// The solvers: value and policy iteration, policy evaluation, average reward.
void bind_solve_functions(py::module_& m) {
  m.def(
      "value_iteration",
      [](const Mdp& mdp, double discount, double tolerance, const IntArg& max_iterations, const IntArg& min_iterations,
         const IntArg& threads, bool relative, const IntArg& reference_state, std::optional<py::object> initial) {
        const auto o = solve_options(discount, tolerance, max_iterations, min_iterations, threads, relative,
                                     reference_state, initial);
        return to_python(run_long([&] { return value_iteration(mdp, o); }));
      },
      py::arg("mdp"), SOLVE_ARGS, "Value iteration; releases the GIL, Ctrl-C stops it between sweeps.");

  m.def(
      "policy_iteration",
      [](const Mdp& mdp, double discount, double tolerance, const IntArg& max_iterations, const IntArg& min_iterations,
         const IntArg& threads, bool relative, const IntArg& reference_state, std::optional<py::object> initial) {
        const auto o = solve_options(discount, tolerance, max_iterations, min_iterations, threads, relative,
                                     reference_state, initial);
        return to_python(run_long([&] { return policy_iteration(mdp, o); }));
      },
      py::arg("mdp"), SOLVE_ARGS, "Policy iteration; releases the GIL, Ctrl-C stops it between rounds.");

  m.def(
      "policy_evaluation",
      [](const Mdp& mdp, const py::object& policy, double discount, double tolerance, const IntArg& max_iterations,
         const IntArg& min_iterations, const IntArg& threads, bool relative, const IntArg& reference_state,
         std::optional<py::object> initial) {
        const auto o = solve_options(discount, tolerance, max_iterations, min_iterations, threads, relative,
                                     reference_state, initial);
        const Policy p = integers<std::int32_t>(policy, "policy");
        return to_python(run_long([&] { return policy_evaluation(mdp, p, o); }));
      },
      py::arg("mdp"), py::arg("policy"), SOLVE_ARGS,
      "Values of a fixed policy; releases the GIL, Ctrl-C stops it between sweeps.");

  m.def(
      "average_reward",
      [](const Mdp& mdp, const py::object& policy, const IntArg& reference_state) {
        const Policy p = integers<std::int32_t>(policy, "policy");
        const auto reference = to_int<std::int32_t>(reference_state, "reference_state");
        auto gb = run_long([&] { return average_reward(mdp, p, reference); });
        return py::make_tuple(gb.gain, to_numpy(std::move(gb.bias)));
      },
      py::arg("mdp"), py::arg("policy"), py::arg("reference_state") = 0, "(gain, bias) of a unichain policy.");
}

// A policy's chain: its stationary distribution and expectations under it.
void bind_policy_functions(py::module_& m) {
  m.def(
      "stationary_distribution",
      [](const Mdp& mdp, const py::object& policy, double tolerance, const IntArg& max_iterations,
         const IntArg& min_iterations, bool lazy, const IntArg& threads, std::optional<py::object> start) {
        const Policy p = integers<std::int32_t>(policy, "policy");
        const StationaryOptions o{.tolerance = tolerance,
                                  .max_iterations = to_int<std::int32_t>(max_iterations, "max_iterations"),
                                  .min_iterations = to_int<std::int32_t>(min_iterations, "min_iterations"),
                                  .lazy = lazy,
                                  .threads = to_int<std::int32_t>(threads, "threads")};
        std::vector<double> first;
        if (start && !start->is_none()) first = doubles(*start, "start");
        auto st = run_long([&] { return stationary_distribution(mdp, p, o, first); });
        py::dict out;
        out["distribution"] = to_numpy(std::move(st.distribution));
        out["iterations"] = st.iterations;
        out["residual"] = st.residual;
        out["converged"] = st.converged;
        return out;
      },
      py::arg("mdp"), py::arg("policy"), py::arg("tolerance") = 1e-12, py::arg("max_iterations") = 100000,
      py::arg("min_iterations") = 0, py::arg("lazy") = false, py::arg("threads") = 0, py::arg("start") = py::none(),
      "Power iteration on the policy's chain; releases the GIL, Ctrl-C stops it between steps.");

  m.def(
      "expectation",
      [](const Mdp& mdp, const py::object& policy, const py::object& distribution, const py::object& per_pair) {
        return expectation(mdp, integers<std::int32_t>(policy, "policy"), doubles(distribution, "distribution"),
                           doubles(per_pair, "per_pair"));
      },
      py::arg("mdp"), py::arg("policy"), py::arg("distribution"), py::arg("per_pair"));
}

// What follows from values or rewards: Q-values, greedy policies, expected rewards, chosen pairs.
void bind_value_functions(py::module_& m) {
  m.def(
      "q_values",
      [](const Mdp& mdp, const py::object& values, double discount) {
        const auto v = doubles(values, "values");
        return to_numpy(run_long([&] { return q_values(mdp, v, discount); }));
      },
      py::arg("mdp"), py::arg("values"), py::arg("discount") = 1.0);

  m.def(
      "greedy_policy",
      [](const Mdp& mdp, const py::object& values, double discount) {
        const auto v = doubles(values, "values");
        return to_numpy(run_long([&] { return greedy_policy(mdp, v, discount); }));
      },
      py::arg("mdp"), py::arg("values"), py::arg("discount") = 1.0);

  m.def(
      "expected_rewards",
      [](const Mdp& mdp, const py::object& transition_reward) {
        return to_numpy(expected_rewards(mdp, doubles(transition_reward, "transition_reward")));
      },
      py::arg("mdp"), py::arg("transition_reward"));

  m.def(
      "policy_pairs",
      [](const Mdp& mdp, const py::object& policy) {
        return to_numpy(policy_pairs(mdp, integers<std::int32_t>(policy, "policy")));
      },
      py::arg("mdp"), py::arg("policy"));
}

}  // namespace

void init_mdp(py::module_& solvers) {
  auto m = solvers.def_submodule("mdp", "Finite MDPs (CSR) and their solvers; use servelab.solvers.mdp.");
  bind_mdp_class(m);
  bind_solve_functions(m);
  bind_policy_functions(m);
  bind_value_functions(m);
}

}  // namespace servelab::bindings
