// numpy inputs: float64 arrays viewed in place, and the shape checks whose messages name them.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <span>
#include <string>

#include "servelab/core/errors.hpp"

namespace servelab::bindings {

// Any sequence of numbers as C-contiguous float64 (numpy converts other dtypes first).
using DoubleArray = pybind11::array_t<double, pybind11::array::c_style | pybind11::array::forcecast>;

// The array's shape as Python writes it: "(3,)", "(2, 3)", "()".
inline std::string shape_of(const pybind11::array& array) {
  std::string shape;
  for (pybind11::ssize_t d = 0; d < array.ndim(); ++d) shape += str(d ? ", " : "", array.shape(d));
  return "(" + shape + (array.ndim() == 1 ? ",)" : ")");
}

// The values of a 1-D array, viewed in place; ValueError "<name> must be 1-D, got shape (...)".
inline std::span<const double> as_span(const DoubleArray& array, const char* name) {
  if (array.ndim() != 1) throw ValueError(str(name, " must be 1-D, got shape ", shape_of(array)));
  return {array.data(), static_cast<std::size_t>(array.size())};
}

// ValueError "<name> must be 1-D, got N dimensions" unless the array is 1-D.
inline void require_1d(const pybind11::array& array, const std::string& name) {
  if (array.ndim() != 1) throw ValueError(str(name, " must be 1-D, got ", array.ndim(), " dimensions"));
}

}  // namespace servelab::bindings
