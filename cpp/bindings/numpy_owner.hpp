// Hands a std::vector to numpy without copying: the array owns the vector through a capsule.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "servelab/core/time.hpp"

namespace servelab::bindings {

// Any allocator: the record columns' leaves rows unwritten until they are filled.
template <typename T, typename A>
pybind11::array_t<T> to_numpy(std::vector<T, A>&& values, std::vector<pybind11::ssize_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<pybind11::ssize_t>(values.size())};
  auto owner = std::make_unique<std::vector<T, A>>(std::move(values));
  T* data = owner->data();
  pybind11::capsule free_when_done(owner.get(), [](void* p) { delete static_cast<std::vector<T, A>*>(p); });
  owner.release();  // the capsule owns it now
  return pybind11::array_t<T>(std::move(shape), data, free_when_done);
}

// A copy of values a C++ object keeps (its array properties), as an array of its own.
template <typename T>
pybind11::array_t<T> to_numpy_copy(const std::vector<T>& values) {
  return to_numpy(std::vector<T>(values));
}

// int64 nanoseconds as a new float64 array of seconds.
inline pybind11::array_t<double> to_numpy_seconds(std::span<const Nanos> times) {
  std::vector<double> out(times.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = nanos_to_seconds(times[i]);
  return to_numpy(std::move(out));
}

}  // namespace servelab::bindings
