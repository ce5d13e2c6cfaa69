// Search configurations and Python objectives, shared by the generic searches (bind_search.cpp)
// and Kairos's search over its bound table (bind_kairos.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/search/search.hpp"

namespace servelab::bindings {

// A configuration as Python sees it: a tuple of counts.
inline pybind11::tuple config_to_python(const solvers::search::Config& config) {
  pybind11::tuple out(config.size());
  for (std::size_t d = 0; d < config.size(); ++d) out[d] = pybind11::int_(config[d]);
  return out;
}

// Wraps a Python callable config-tuple -> number; `what` names it in errors ("objective"). It takes
// the GIL for each call, so the search runs without it in between (and stops on Ctrl-C). It holds
// a borrowed handle: the caller keeps the callable alive for the whole search, and copies of the
// std::function never touch refcounts while the GIL is released.
inline std::function<double(const solvers::search::Config&)> python_function(pybind11::handle fn, std::string what) {
  return [fn, what = std::move(what)](const solvers::search::Config& config) {
    pybind11::gil_scoped_acquire gil;
    const pybind11::object value = fn(config_to_python(config));
    try {
      return value.cast<double>();
    } catch (const pybind11::cast_error&) {
      throw ValueError(str(what, solvers::search::SearchSpace::format(config), " returned ",
                           std::string(pybind11::repr(value)), ", which is not a number"));
    }
  };
}

}  // namespace servelab::bindings
