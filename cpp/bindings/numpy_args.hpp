// numpy inputs: float64 arrays viewed in place, integer arrays checked (no float or wrapped value slips
// through a cast), and the shape checks whose messages name them.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
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

// An array of integers (indices, ids, counts) as C-contiguous T. ValueError "<name> must hold integers, got
// dtype float64" for any other dtype: forcecast alone would truncate 3.7 to 3 without a word.
template <typename T>
pybind11::array_t<T, pybind11::array::c_style | pybind11::array::forcecast> integer_array(const pybind11::array& array,
                                                                                          const std::string& name) {
  const char kind = array.dtype().kind();
  if (kind != 'i' && kind != 'u') {
    throw ValueError(str(name, " must hold integers, got dtype ", pybind11::str(array.dtype()).cast<std::string>()));
  }
  if constexpr (sizeof(T) < sizeof(std::int64_t)) {  // a narrowing cast would wrap round: range first
    const auto wide = integer_array<std::int64_t>(array, name);
    for (pybind11::ssize_t i = 0; i < wide.size(); ++i) {
      const std::int64_t v = wide.data()[i];
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        throw ValueError(str(name, " holds ", v, ", out of the range of ", 8 * sizeof(T), "-bit integers"));
      }
    }
  }
  auto out = pybind11::array_t<T, pybind11::array::c_style | pybind11::array::forcecast>::ensure(array);
  if (!out) throw ValueError(str(name, " could not be read as ", 8 * sizeof(T), "-bit integers"));
  return out;
}

// ValueError "<name> must be 1-D, got N dimensions" unless the array is 1-D.
inline void require_1d(const pybind11::array& array, const std::string& name) {
  if (array.ndim() != 1) throw ValueError(str(name, " must be 1-D, got ", array.ndim(), " dimensions"));
}

}  // namespace servelab::bindings
