// Run seeds from Python: any integer (int, numpy integer) in [0, 2**64).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "servelab/core/errors.hpp"

namespace servelab::bindings {

inline std::uint64_t to_seed(const pybind11::object& seed) {
  const auto fail = [&] {
    PyErr_Clear();
    throw ValueError(str("seed=", std::string(pybind11::repr(seed)), " must be an integer in [0, 2**64)"));
  };
  const auto index = pybind11::reinterpret_steal<pybind11::object>(PyNumber_Index(seed.ptr()));
  if (!index) fail();
  const unsigned long long value = PyLong_AsUnsignedLongLong(index.ptr());
  if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) fail();
  return value;
}

}  // namespace servelab::bindings
