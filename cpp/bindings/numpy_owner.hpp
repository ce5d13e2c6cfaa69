// Hands a std::vector to numpy without copying: the array owns the vector through a capsule.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <utility>
#include <vector>

namespace servelab::bindings {

template <typename T>
pybind11::array_t<T> to_numpy(std::vector<T>&& values, std::vector<pybind11::ssize_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<pybind11::ssize_t>(values.size())};
  auto owner = std::make_unique<std::vector<T>>(std::move(values));
  T* data = owner->data();
  pybind11::capsule free_when_done(owner.get(), [](void* p) { delete static_cast<std::vector<T>*>(p); });
  owner.release();  // the capsule owns it now
  return pybind11::array_t<T>(std::move(shape), data, free_when_done);
}

}  // namespace servelab::bindings
