#include "servelab/serve/query_outputs.hpp"

#include <cstddef>
#include <utility>

namespace servelab::serve {

void QueryOutputs::put(workload::QueryId query, InputArray output) {
  std::lock_guard lock(mutex_);
  outputs_.insert_or_assign(query, std::move(output));
}

std::optional<InputArray> QueryOutputs::take(workload::QueryId query) {
  std::lock_guard lock(mutex_);
  const auto it = outputs_.find(query);
  if (it == outputs_.end()) return std::nullopt;
  auto out = std::move(it->second);
  outputs_.erase(it);
  return out;
}

std::size_t QueryOutputs::size() const {
  std::lock_guard lock(mutex_);
  return outputs_.size();
}

void put_batch_rows(QueryOutputs& outputs, std::span<const workload::QueryId> queries,
                    std::span<const std::int32_t> sizes, DType dtype, std::span<const std::int64_t> row_shape,
                    const std::uint8_t* data) {
  std::size_t row_bytes = dtype_size(dtype);
  for (const auto d : row_shape) row_bytes *= static_cast<std::size_t>(d);
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::int32_t rows = sizes.empty() ? 1 : sizes[q];
    InputArray out;
    out.dtype = dtype;
    out.shape.push_back(rows);
    out.shape.insert(out.shape.end(), row_shape.begin(), row_shape.end());
    const std::size_t bytes = row_bytes * static_cast<std::size_t>(rows);
    out.data.assign(data, data + bytes);
    data += bytes;
    outputs.put(queries[q], std::move(out));
  }
}

}  // namespace servelab::serve
