// The run's own inputs (serve(inputs=...)) as a worker process receives them with a batch: one typed
// array per query. The hosted executor reads them as it would in-process: torchscript through
// fill_rows (float32 rows), an executor written in Python through array() (batch.inputs).
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "servelab/serve/query_inputs.hpp"

namespace servelab::serve::remote {

class ReceivedInputs final : public QueryInputs {
 public:
  // `inputs` parallel to `queries`.
  ReceivedInputs(std::span<const workload::QueryId> queries, std::vector<InputArray> inputs);

  // A query's float32 input of shape (width,) is repeated for each of its items; one of shape
  // (size, width) gives one row per item. ValueError naming `executor`, the query and the array
  // otherwise: the rules of a callable's answer in-process.
  void fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                 const std::string& executor) const override;
  std::string describe() const override { return "the inputs sent with the batch"; }
  InputArray array(workload::QueryId query, const std::string& executor) const override;

 private:
  const InputArray& find(workload::QueryId query, const std::string& executor) const;

  std::vector<InputArray> inputs_;
  std::unordered_map<workload::QueryId, std::size_t> index_;
};

}  // namespace servelab::serve::remote
