// Integers from Python, converted knowing the parameter's name.
//
// pybind11 converts an int argument itself and, when the value does not fit the C++ type (2**70
// for an int64_t) or is not an integer, reports only its overload signature dump, naming neither
// the parameter nor the value. A binding that takes integers from users declares them as IntArg
// (which accepts any object) and converts them with to_int<T>(arg, "name", lo, hi): a TypeError
// for a non-integer and a ValueError for an integer outside [lo, hi], both naming the parameter,
// the value and what is allowed. Valid values convert exactly as pybind11 would (int, bool, numpy
// integers, anything with __index__).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"

namespace servelab::bindings {

// An integer argument as Python passed it; convert it with to_int.
struct IntArg {
  pybind11::object value;
};

namespace detail {

// repr() for an error message, short: a huge integer is named by its size, other objects cut.
inline std::string shown_value(pybind11::handle value) {
  if (PyLong_Check(value.ptr())) {
    const std::int64_t bits = value.attr("bit_length")().cast<std::int64_t>();
    if (bits > 128) return str("<an integer of ", bits, " bits>");
  }
  std::string text = pybind11::repr(value).cast<std::string>();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

template <typename Int>
std::string allowed_range(Int lo, Int hi) {
  if (lo == std::numeric_limits<Int>::min()) return str("at most ", hi);
  if (hi == std::numeric_limits<Int>::max()) return str("at least ", lo);
  return str("in ", lo, "..", hi);
}

// The value of a Python int when it lies in [lo, hi]; nullopt otherwise (any size, no overflow).
template <typename Int>
std::optional<Int> in_range(pybind11::handle index, Int lo, Int hi) {
  if constexpr (std::is_signed_v<Int>) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (x == -1 && PyErr_Occurred()) throw pybind11::error_already_set();
    if (overflow != 0 || x < lo || x > hi) return std::nullopt;
    return static_cast<Int>(x);
  } else {
    if (PyObject_RichCompareBool(index.ptr(), pybind11::int_(0).ptr(), Py_LT) == 1) return std::nullopt;
    const unsigned long long x = PyLong_AsUnsignedLongLong(index.ptr());
    if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();  // above 2**64 - 1
      return std::nullopt;
    }
    if (x < lo || x > hi) return std::nullopt;
    return static_cast<Int>(x);
  }
}

}  // namespace detail

// `value` as an Int when it is an integer in [lo, hi]; nullopt when it is not (no error set).
template <typename Int>
std::optional<Int> converted(pybind11::handle value, Int lo, Int hi) {
  if (PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr())) return std::nullopt;
  const auto index = pybind11::reinterpret_steal<pybind11::object>(PyNumber_Index(value.ptr()));
  if (!index) {
    PyErr_Clear();
    return std::nullopt;
  }
  return detail::in_range<Int>(index, lo, hi);
}

// `value` as an Int in [lo, hi] (the type's whole range by default). TypeError when it is not an
// integer (a float, a string, None); ValueError naming `field`, the value and the range otherwise.
template <typename Int>
Int to_int(pybind11::handle value, std::string_view field, Int lo = std::numeric_limits<Int>::min(),
           Int hi = std::numeric_limits<Int>::max()) {
  static_assert(std::is_integral_v<Int>);
  if (const auto x = converted<Int>(value, lo, hi)) return *x;
  if (PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    throw pybind11::type_error(str(field, "=", detail::shown_value(value), " must be an integer"));
  }
  const auto index = pybind11::reinterpret_steal<pybind11::object>(PyNumber_Index(value.ptr()));
  if (!index) throw pybind11::error_already_set();  // __index__ itself failed: its own error
  throw ValueError(
      str(field, "=", detail::shown_value(index), " is out of range: it must be ", detail::allowed_range(lo, hi)));
}

template <typename Int>
Int to_int(const IntArg& arg, std::string_view field, Int lo = std::numeric_limits<Int>::min(),
           Int hi = std::numeric_limits<Int>::max()) {
  return to_int<Int>(arg.value, field, lo, hi);
}

// None stays nullopt.
template <typename Int>
std::optional<Int> to_optional_int(const std::optional<IntArg>& arg, std::string_view field,
                                   Int lo = std::numeric_limits<Int>::min(), Int hi = std::numeric_limits<Int>::max()) {
  if (!arg || arg->value.is_none()) return std::nullopt;
  return to_int<Int>(*arg, field, lo, hi);
}

// A sequence of integers (list, tuple, 1-D numpy array), each in [lo, hi]; errors name field[i].
template <typename Int>
std::vector<Int> to_int_list(pybind11::handle values, std::string_view field, Int lo = std::numeric_limits<Int>::min(),
                             Int hi = std::numeric_limits<Int>::max()) {
  if (PyUnicode_Check(values.ptr()) || PyBytes_Check(values.ptr()) || !PySequence_Check(values.ptr())) {
    throw pybind11::type_error(str(field, "=", detail::shown_value(values), " must be a sequence of integers"));
  }
  const auto sequence = pybind11::reinterpret_borrow<pybind11::sequence>(values);
  std::vector<Int> out;
  out.reserve(sequence.size());
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const pybind11::object item = sequence[i];
    const auto x = converted<Int>(item, lo, hi);
    out.push_back(x ? *x : to_int<Int>(item, str(field, "[", i, "]"), lo, hi));  // the name only when it fails
  }
  return out;
}

// A {name: integer} mapping (a dict or any Mapping); errors name field['key'].
template <typename Int>
std::map<std::string, Int> to_int_map(pybind11::handle values, std::string_view field,
                                      Int lo = std::numeric_limits<Int>::min(),
                                      Int hi = std::numeric_limits<Int>::max()) {
  const auto mapping = pybind11::module_::import("collections.abc").attr("Mapping");
  if (!pybind11::isinstance(values, mapping)) {
    throw pybind11::type_error(str(field, "=", detail::shown_value(values), " must map names to integers"));
  }
  std::map<std::string, Int> out;
  for (const auto item : values.attr("items")()) {
    const auto pair = pybind11::reinterpret_borrow<pybind11::tuple>(item);
    if (!PyUnicode_Check(pair[0].ptr())) {
      throw pybind11::type_error(str(field, ": key ", detail::shown_value(pair[0]), " must be a string"));
    }
    const auto name = pair[0].cast<std::string>();
    out[name] = to_int<Int>(pair[1], str(field, "['", name, "']"), lo, hi);
  }
  return out;
}

// (key, integer) pairs as given (order and repeats kept), e.g. {type: count} passed as a list of
// items; errors name field[key], a string key quoted: config['gpu'], at_least[2].
template <typename Int, typename Key>
std::vector<std::pair<Key, Int>> to_int_pairs(const std::vector<std::pair<Key, IntArg>>& pairs, std::string_view field,
                                              Int lo = std::numeric_limits<Int>::min(),
                                              Int hi = std::numeric_limits<Int>::max()) {
  std::vector<std::pair<Key, Int>> out;
  out.reserve(pairs.size());
  for (const auto& [key, value] : pairs) {
    const std::string name =
        std::is_convertible_v<const Key&, std::string_view> ? str(field, "['", key, "']") : str(field, "[", key, "]");
    out.emplace_back(key, to_int<Int>(value, name, lo, hi));
  }
  return out;
}

}  // namespace servelab::bindings

namespace pybind11::detail {

// IntArg takes any object, so that to_int can name the parameter when the value is wrong. Use it
// only in functions without overloads (it would match every overload's integer position).
template <>
struct type_caster<servelab::bindings::IntArg> {
  // Named as pybind11 names its own int arguments, so signatures and stubs read the same.
  PYBIND11_TYPE_CASTER(servelab::bindings::IntArg, io_name("typing.SupportsInt | typing.SupportsIndex", "int"));

  bool load(handle src, bool /*convert*/) {
    if (!src) return false;
    value.value = reinterpret_borrow<object>(src);
    return true;
  }
  static handle cast(const servelab::bindings::IntArg& src, return_value_policy, handle) { return src.value.inc_ref(); }
};

}  // namespace pybind11::detail
