#include "servelab/serve/remote/received_inputs.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::serve::remote {
namespace {

std::string prefix(const std::string& executor) { return executor.empty() ? "" : executor + ": "; }

std::string array_text(const InputArray& input) {
  std::string shape = "(";
  for (std::size_t i = 0; i < input.shape.size(); ++i) shape += str(i ? ", " : "", input.shape[i]);
  shape += input.shape.size() == 1 ? ",)" : ")";
  return str("array(", dtype_name(input.dtype), ", shape=", shape, ")");
}

}  // namespace

ReceivedInputs::ReceivedInputs(std::span<const workload::QueryId> queries, std::vector<InputArray> inputs)
    : inputs_(std::move(inputs)) {
  if (inputs_.size() != queries.size()) {
    throw ValueError(str("received inputs: ", inputs_.size(), " inputs for ", queries.size(), " queries"));
  }
  index_.reserve(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) index_.emplace(queries[i], i);
}

const InputArray& ReceivedInputs::find(workload::QueryId query, const std::string& executor) const {
  const auto it = index_.find(query);
  if (it == index_.end()) throw ValueError(str(prefix(executor), "no input was sent for query ", query));
  return inputs_[it->second];
}

void ReceivedInputs::fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                               const std::string& executor) const {
  const InputArray& input = find(query, executor);
  const bool float32 = input.dtype == DType::Float32;
  const bool one_row = float32 && input.shape.size() == 1 && input.shape[0] == width;
  const bool all_rows = float32 && input.shape.size() == 2 && input.shape[0] == size && input.shape[1] == width;
  if (!one_row && !all_rows) {
    throw ValueError(str(prefix(executor), "takes float32 rows of ", width, " features; the input sent for query ",
                         query, " (", size, " items) is ", array_text(input), ": expected a float32 array of shape (",
                         width, ",) or (", size, ", ", width, ")"));
  }
  const auto row_bytes = static_cast<std::size_t>(width) * sizeof(float);
  for (std::int32_t r = 0; r < size; ++r) {
    const auto* from = input.data.data() + (all_rows ? static_cast<std::size_t>(r) * row_bytes : 0);
    std::memcpy(out + static_cast<std::ptrdiff_t>(r) * width, from, row_bytes);
  }
}

InputArray ReceivedInputs::array(workload::QueryId query, const std::string& executor) const {
  return find(query, executor);
}

}  // namespace servelab::serve::remote
