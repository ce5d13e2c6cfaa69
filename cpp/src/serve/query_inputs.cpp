#include "servelab/serve/query_inputs.hpp"

#include <cstddef>
#include <cstring>

#include "servelab/core/errors.hpp"

namespace servelab::serve {

std::string array_text(const InputArray& input) {
  std::string shape = "(";
  for (std::size_t i = 0; i < input.shape.size(); ++i) shape += str(i ? ", " : "", input.shape[i]);
  shape += input.shape.size() == 1 ? ",)" : ")";
  return str("array(", dtype_name(input.dtype), ", shape=", shape, ")");
}

void fill_rows_from(const InputArray& input, workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                    const std::string& executor, std::string_view source) {
  const bool float32 = input.dtype == DType::Float32;
  const bool one_row = float32 && input.shape.size() == 1 && input.shape[0] == width;
  const bool all_rows = float32 && input.shape.size() == 2 && input.shape[0] == size && input.shape[1] == width;
  if (!one_row && !all_rows) {
    throw ValueError(str(executor.empty() ? "" : executor + ": ", "takes float32 rows of ", width, " features; ",
                         source, " for query ", query, " (", size, " items) is ", array_text(input),
                         ": expected a float32 array of shape (", width, ",) or (", size, ", ", width, ")"));
  }
  const auto row_bytes = static_cast<std::size_t>(width) * sizeof(float);
  for (std::int32_t r = 0; r < size; ++r) {
    const auto* from = input.data.data() + (all_rows ? static_cast<std::size_t>(r) * row_bytes : 0);
    std::memcpy(out + static_cast<std::ptrdiff_t>(r) * width, from, row_bytes);
  }
}

void fill_batch_rows(const QueryInputs& inputs, std::span<const workload::QueryId> queries,
                     std::span<const std::int32_t> sizes, std::int64_t width, float* out, const std::string& executor) {
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::int32_t size = sizes.empty() ? 1 : sizes[q];
    inputs.fill_rows(queries[q], size, width, out, executor);
    out += static_cast<std::ptrdiff_t>(size) * width;
  }
}

}  // namespace servelab::serve
