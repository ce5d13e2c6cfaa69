#include "servelab/serve/remote/received_inputs.hpp"

#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::serve::remote {

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
  if (it == index_.end())
    throw ValueError(str(executor.empty() ? "" : executor + ": ", "no input was sent for query ", query));
  return inputs_[it->second];
}

void ReceivedInputs::fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                               const std::string& executor) const {
  fill_rows_from(find(query, executor), query, size, width, out, executor, "the input sent");
}

InputArray ReceivedInputs::array(workload::QueryId query, const std::string& executor) const {
  return find(query, executor);
}

}  // namespace servelab::serve::remote
