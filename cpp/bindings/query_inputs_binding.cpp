#include "query_inputs_binding.hpp"

#include <Python.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "servelab/core/errors.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

std::string shape_text(const py::array& a) {
  std::string out = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) out += (d ? ", " : "") + std::to_string(a.shape(d));
  return out + (a.ndim() == 1 ? ",)" : ")");
}

std::string array_text(const py::array& a) {
  return str("array(", py::str(a.dtype()).cast<std::string>(), ", shape=", shape_text(a), ")");
}

bool is_float32(const py::array& a) { return a.dtype().equal(py::dtype::of<float>()); }

// "<executor>: " before a message, or nothing when the caller's errors already name the executor.
std::string prefix(const std::string& executor) { return executor.empty() ? "" : executor + ": "; }

// The first line of a Python exception, as "TypeError: message".
std::string first_line(const py::error_already_set& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

// The remote protocol's dtype of a numpy dtype; none for other kinds, sizes or byte orders.
std::optional<serve::DType> sendable_dtype(const py::dtype& dtype) {
  using serve::DType;
  if (!dtype.attr("isnative").cast<bool>()) return std::nullopt;
  const auto size = dtype.itemsize();
  // By item size 1, 2, 4, 8; nullopt where a kind has no such size.
  const auto by_size = [&](std::optional<DType> one, DType two, DType four, DType eight) -> std::optional<DType> {
    if (size == 1) return one;
    if (size == 2) return two;
    if (size == 4) return four;
    if (size == 8) return eight;
    return std::nullopt;
  };
  switch (dtype.kind()) {
    case 'b':
      return size == 1 ? std::optional(DType::Bool) : std::nullopt;
    case 'i':
      return by_size(DType::Int8, DType::Int16, DType::Int32, DType::Int64);
    case 'u':
      return by_size(DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64);
    case 'f':
      return by_size(std::nullopt, DType::Float16, DType::Float32, DType::Float64);
    default:
      return std::nullopt;
  }
}

std::string unsendable(const py::dtype& dtype) {
  return str("dtype ", py::str(dtype).cast<std::string>(),
             " cannot be sent to a worker process (bool, int8-64, uint8-64 and float16-64 in native byte order can)");
}

}  // namespace

serve::InputArray array_from_python(const py::handle& value, const std::string& what) {
  const auto numpy = py::module_::import("numpy");
  serve::InputArray out;
  out.scalar = py::isinstance(value, numpy.attr("generic"));
  py::array a;
  try {
    a = numpy.attr("asarray")(value, py::arg("order") = "C");
  } catch (const py::error_already_set& e) {
    throw ValueError(
        str(what, py::repr(value).cast<std::string>().substr(0, 120), " is not an array: ", first_line(e)));
  }
  const auto dtype = sendable_dtype(a.dtype());
  if (!dtype) {
    throw ValueError(str(what, array_text(a), " has dtype ", py::str(a.dtype()).cast<std::string>(),
                         ": bool, int8-64, uint8-64 and float16-64 in native byte order are taken"));
  }
  out.dtype = *dtype;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) out.shape.push_back(a.shape(d));
  const auto* from = static_cast<const std::uint8_t*>(a.data());
  out.data.assign(from, from + a.nbytes());
  return out;
}

py::object array_to_python(const serve::InputArray& input) {
  const py::dtype dtype{std::string(serve::dtype_name(input.dtype))};
  const py::array array(dtype, input.shape, input.data.data());  // no base: numpy copies the bytes
  if (input.scalar) return array[py::tuple()];
  return array;
}

PyQueryInputs::PyQueryInputs(const py::object& source) {
  const std::string given = py::repr(source).cast<std::string>().substr(0, 120);
  if (!py::isinstance<py::array>(source) && PyCallable_Check(source.ptr())) {
    source_ = source;
    callable_ = true;
    const auto name = py::getattr(source, "__qualname__", py::none());
    description_ = py::isinstance<py::str>(name) ? "callable " + name.cast<std::string>() : given;
    return;
  }
  py::array array;
  try {
    const auto numpy = py::module_::import("numpy");
    array = numpy.attr("asarray")(source);  // ascontiguousarray alone would make a scalar 1-D
    if (array.ndim() >= 1) array = numpy.attr("ascontiguousarray")(array);
  } catch (const py::error_already_set& e) {
    throw ValueError(
        str("inputs=", given,
            " is neither an array with one row per query nor a callable of the query id: ", first_line(e)));
  }
  if (array.ndim() < 1 || array.dtype().kind() == 'O') {
    throw ValueError(str("inputs=", given,
                         " is neither an array with one row per query nor a callable of the query id (it is ",
                         array_text(array), "; for other objects pass a callable, e.g. lambda q: items[q])"));
  }
  source_ = array;
  rows_ = array.shape(0);
  width_ = array.ndim() == 2 ? array.shape(1) : 0;
  if (array.ndim() == 2 && is_float32(array)) data_ = static_cast<const float*>(array.data());
  description_ = array_text(array);
  bytes_ = static_cast<const std::uint8_t*>(array.data());
  row_dtype_ = sendable_dtype(array.dtype());
  if (!row_dtype_) unsendable_ = unsendable(array.dtype());
  row_bytes_ = static_cast<std::size_t>(array.itemsize());
  for (py::ssize_t d = 1; d < array.ndim(); ++d) {
    row_shape_.push_back(array.shape(d));
    row_bytes_ *= static_cast<std::size_t>(array.shape(d));
  }
}

PyQueryInputs::~PyQueryInputs() {
  if (!Py_IsInitialized()) {
    source_.release();  // the interpreter is gone: nothing left to release
    return;
  }
  py::gil_scoped_acquire gil;
  source_ = py::object();
}

void PyQueryInputs::fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                              const std::string& executor) const {
  const auto wants = [&] { return str(prefix(executor), "takes float32 rows of ", width, " features; inputs="); };
  if (callable_) {
    py::gil_scoped_acquire gil;
    py::object got;
    try {
      got = source_(query);
    } catch (const py::error_already_set& e) {
      throw RuntimeError(str(prefix(executor), "inputs(", query, ") raised ", first_line(e)));
    }
    const auto given = [&] {
      const std::string what = py::isinstance<py::array>(got) ? array_text(got.cast<py::array>())
                                                              : py::repr(got).cast<std::string>().substr(0, 120);
      return str(wants(), description_, " returned ", what, " for query ", query, " (", size,
                 " items): expected a float32 array of shape (", width, ",) or (", size, ", ", width, ")");
    };
    if (!py::isinstance<py::array>(got) || !is_float32(got.cast<py::array>())) throw ValueError(given());
    const auto array = py::array_t<float, py::array::c_style>::ensure(got);
    if (!array) throw ValueError(given());
    const bool one_row = array.ndim() == 1 && array.shape(0) == width;
    const bool all_rows = array.ndim() == 2 && array.shape(0) == size && array.shape(1) == width;
    if (!one_row && !all_rows) throw ValueError(given());
    for (std::int32_t r = 0; r < size; ++r) {
      const float* from = array.data() + (all_rows ? static_cast<std::ptrdiff_t>(r) * width : 0);
      std::copy(from, from + width, out + static_cast<std::ptrdiff_t>(r) * width);
    }
    return;
  }
  // An array: read without the GIL (this object keeps it alive, and it is never resized).
  if (data_ == nullptr || width_ != width) {
    const char* why = width_ != width && data_ != nullptr ? " has rows of another width"
                      : width_ == 0                       ? " must be 2-D: one row per query"
                                                          : " is not float32: pass x.astype(numpy.float32)";
    throw ValueError(str(wants(), description_, why));
  }
  if (query < 0 || query >= rows_) {
    throw ValueError(str(prefix(executor), "inputs=", description_, " has ", rows_, " rows (one per query); query ",
                         query, " has none"));
  }
  const float* row = data_ + static_cast<std::ptrdiff_t>(query) * width;
  for (std::int32_t r = 0; r < size; ++r) std::copy(row, row + width, out + static_cast<std::ptrdiff_t>(r) * width);
}

py::object PyQueryInputs::row(workload::QueryId query, const std::string& executor) const {
  py::gil_scoped_acquire gil;
  if (callable_) {
    try {
      return source_(query);
    } catch (const py::error_already_set& e) {
      throw RuntimeError(str(prefix(executor), "inputs(", query, ") raised ", first_line(e)));
    }
  }
  if (query < 0 || query >= rows_) {
    throw ValueError(str(prefix(executor), "inputs=", description_, " has ", rows_, " rows (one per query); query ",
                         query, " has none"));
  }
  return source_[py::int_(query)];
}

serve::InputArray PyQueryInputs::array(workload::QueryId query, const std::string& executor) const {
  serve::InputArray out;
  if (callable_) {
    py::gil_scoped_acquire gil;
    py::object got;
    try {
      got = source_(query);
    } catch (const py::error_already_set& e) {
      throw RuntimeError(str(prefix(executor), "inputs(", query, ") raised ", first_line(e)));
    }
    const auto numpy = py::module_::import("numpy");
    out.scalar = py::isinstance(got, numpy.attr("generic"));
    if (!out.scalar && !py::isinstance<py::array>(got)) {
      throw ValueError(str(prefix(executor), "inputs=", description_, " returned ",
                           py::repr(got).cast<std::string>().substr(0, 120), " for query ", query,
                           ": a worker process is sent numpy arrays and scalars only (return numpy.asarray(...))"));
    }
    const py::array a = numpy.attr("asarray")(got, py::arg("order") = "C");  // keeps 0-d arrays 0-d
    const auto dtype = sendable_dtype(a.dtype());
    if (!dtype) {
      throw ValueError(str(prefix(executor), "inputs=", description_, " returned ", array_text(a), " for query ", query,
                           ": ", unsendable(a.dtype())));
    }
    out.dtype = *dtype;
    for (py::ssize_t d = 0; d < a.ndim(); ++d) out.shape.push_back(a.shape(d));
    const auto* from = static_cast<const std::uint8_t*>(a.data());
    out.data.assign(from, from + a.nbytes());
    return out;
  }
  // An array: read without the GIL (this object keeps it alive, and it is never resized).
  if (!row_dtype_) throw ValueError(str(prefix(executor), "inputs=", description_, ": ", unsendable_));
  if (query < 0 || query >= rows_) {
    throw ValueError(str(prefix(executor), "inputs=", description_, " has ", rows_, " rows (one per query); query ",
                         query, " has none"));
  }
  out.dtype = *row_dtype_;
  out.shape = row_shape_;
  out.scalar = row_shape_.empty();  // a row of a 1-D array is a numpy scalar
  const auto* from = bytes_ + static_cast<std::size_t>(query) * row_bytes_;
  out.data.assign(from, from + row_bytes_);
  return out;
}

void PyQueryInputs::check_sendable(const std::string& executor) const {
  if (!callable_ && row_dtype_ && rows_ == 0) return;  // no query, nothing to send
  array(0, executor);
}

void PyQueryInputs::check_float_rows(std::int64_t width, const std::string& executor) const {
  if (!callable_ && rows_ == 0 && data_ != nullptr && width_ == width) return;  // no query, nothing to read
  std::vector<float> probe(static_cast<std::size_t>(std::max<std::int64_t>(width, 1)));
  fill_rows(0, 1, width, probe.data(), executor);
}

}  // namespace servelab::bindings
