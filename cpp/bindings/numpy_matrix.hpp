// numpy <-> exec::Matrix: inputs are viewed in place, outputs handed over without a copy.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <utility>

#include "numpy_owner.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/exec/tensor.hpp"

namespace servelab::bindings {

// C-contiguous float32; numpy converts other dtypes/layouts (copying only then).
using FloatArray = pybind11::array_t<float, pybind11::array::c_style | pybind11::array::forcecast>;

inline exec::MatrixView as_matrix_view(const FloatArray& array, const char* name) {
  if (array.ndim() != 2) {
    std::string shape;
    for (pybind11::ssize_t d = 0; d < array.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(array.shape(d));
    throw ValueError(str(name, " must be 2-D [batch, features], got shape (", shape, ")"));
  }
  return {array.data(), array.shape(0), array.shape(1)};
}

inline exec::Matrix to_matrix(const FloatArray& array, const char* name) {
  const auto view = as_matrix_view(array, name);
  exec::Matrix m(view.rows, view.cols);
  std::copy_n(view.data, m.data.size(), m.data.begin());
  return m;
}

inline pybind11::array_t<float> to_numpy(exec::Matrix&& matrix) {
  return to_numpy(std::move(matrix.data), {matrix.rows, matrix.cols});
}

}  // namespace servelab::bindings
