// User-supplied per-query inputs from Python (servelab.serve(inputs=...)): a numpy array with one
// row per query (query q takes row q), or a callable of the query id returning its input.
//
// The torchscript executor reads float32 rows through serve::QueryInputs::fill_rows: from an array,
// without the GIL (the array is a C-contiguous copy this object keeps); from a callable, taking
// the GIL per query. A Python executor receives each query's input as the user gave it (row()).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "servelab/serve/query_inputs.hpp"

namespace servelab::bindings {

// `value` (a numpy array or scalar, or anything numpy.asarray takes) as a typed array, copied. Call
// with the GIL held. ValueError starting with `what` and naming the value when it is not numeric
// (bool, int8-64, uint8-64, float16-64 in native byte order).
serve::InputArray array_from_python(const pybind11::handle& value, const std::string& what);
// A typed array as numpy has it (a copy): an array, or a numpy scalar. Call with the GIL held.
pybind11::object array_to_python(const serve::InputArray& array);

class PyQueryInputs final : public serve::QueryInputs {
 public:
  // Call with the GIL held. ValueError naming `inputs` and the value when `source` is neither.
  explicit PyQueryInputs(const pybind11::object& source);
  ~PyQueryInputs() override;  // takes the GIL to release the Python objects
  PyQueryInputs(const PyQueryInputs&) = delete;
  PyQueryInputs& operator=(const PyQueryInputs&) = delete;

  void fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                 const std::string& executor) const override;
  std::string describe() const override { return description_; }
  // For a worker process (the remote executor): numeric arrays and numpy scalars, copied. An array
  // is read without the GIL; a callable is called with it.
  serve::InputArray array(workload::QueryId query, const std::string& executor) const override;

  // Query `query`'s input as given: row `query` of the array, or what the callable returned.
  // Takes the GIL; ValueError naming `executor` ("": no name) when the array has no such row.
  pybind11::object row(workload::QueryId query, const std::string& executor) const;
  // Checks, before a run, that `executor` can read float32 rows of `width` features: the whole
  // array, or the callable's answer for query 0. ValueError naming `executor` and the value.
  void check_float_rows(std::int64_t width, const std::string& executor) const;
  // Checks, before a run, that the inputs can be sent to `executor` in a worker process: the
  // array's dtype, or the callable's answer for query 0. ValueError naming `executor` and the value.
  void check_sendable(const std::string& executor) const;
  // The array's rows (one per query), or -1 for a callable.
  std::int64_t rows() const { return callable_ ? -1 : rows_; }

 private:
  pybind11::object source_;  // the C-contiguous array, or the callable
  bool callable_ = false;
  const float* data_ = nullptr;  // set when the array is 2-D float32
  std::int64_t rows_ = 0, width_ = 0;
  // An array's rows as bytes, for array(): its dtype (unset: not sendable, `unsendable_` says why),
  // the shape of one row and whether a row is a scalar (a 1-D array).
  const std::uint8_t* bytes_ = nullptr;
  std::optional<serve::DType> row_dtype_;
  std::vector<std::int64_t> row_shape_;
  std::size_t row_bytes_ = 0;
  std::string unsendable_;
  std::string description_;
};

}  // namespace servelab::bindings
