#include "servelab/serve/query_inputs.hpp"

#include <cstddef>

namespace servelab::serve {

void fill_batch_rows(const QueryInputs& inputs, std::span<const workload::QueryId> queries,
                     std::span<const std::int32_t> sizes, std::int64_t width, float* out, const std::string& executor) {
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::int32_t size = sizes.empty() ? 1 : sizes[q];
    inputs.fill_rows(queries[q], size, width, out, executor);
    out += static_cast<std::ptrdiff_t>(size) * width;
  }
}

}  // namespace servelab::serve
