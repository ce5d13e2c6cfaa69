// One query's input as a typed array: what serve(inputs=...) gave for that query, in a form that
// crosses a process boundary (the remote protocol carries it byte for byte; docs/scale-out.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace servelab::serve {

// numpy's fixed-size numeric dtypes. The values are the remote protocol's dtype codes: never
// renumber them.
enum class DType : std::uint8_t {
  Bool = 1,
  Int8 = 2,
  Int16 = 3,
  Int32 = 4,
  Int64 = 5,
  UInt8 = 6,
  UInt16 = 7,
  UInt32 = 8,
  UInt64 = 9,
  Float16 = 10,
  Float32 = 11,
  Float64 = 12,
};
inline constexpr std::uint8_t kMaxDTypeCode = 12;

// Bytes per element.
constexpr std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8:
      return 1;
    case DType::Int16:
    case DType::UInt16:
    case DType::Float16:
      return 2;
    case DType::Int32:
    case DType::UInt32:
    case DType::Float32:
      return 4;
    case DType::Int64:
    case DType::UInt64:
    case DType::Float64:
      return 8;
  }
  return 0;
}

// numpy's name: "float32".
constexpr std::string_view dtype_name(DType dtype) {
  constexpr std::string_view names[] = {"?",      "bool",   "int8",   "int16",   "int32",   "int64",  "uint8",
                                        "uint16", "uint32", "uint64", "float16", "float32", "float64"};
  const auto code = static_cast<std::uint8_t>(dtype);
  return code <= kMaxDTypeCode ? names[code] : names[0];
}

struct InputArray {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;  // empty: a scalar (e.g. a row of a 1-D array)
  std::vector<std::uint8_t> data;   // C order, little-endian: dtype_size(dtype) x the shape's product bytes
  // A numpy scalar (np.float32(1.5)) rather than an array, which may have no dimension either.
  bool scalar = false;
};

}  // namespace servelab::serve
