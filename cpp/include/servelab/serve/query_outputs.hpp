// Per-query outputs of a serving session: what a batch's executor produced for each of its
// queries, handed back to whoever submitted the query (serve::Session, the front-end).
//
// Executors that compute real outputs (torchscript, executors written in Python) write them when
// ExecRequest::outputs is set; the others (emulated, constant) write none, and a query then ends
// with no output. Worker threads write, the controller takes: the methods are thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "servelab/serve/input_array.hpp"
#include "servelab/workload/query.hpp"

namespace servelab::serve {

class QueryOutputs {
 public:
  void put(workload::QueryId query, InputArray output);
  // The query's output, removed from the store; nullopt when its executor wrote none.
  std::optional<InputArray> take(workload::QueryId query);
  // Outputs stored and not taken yet.
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<workload::QueryId, InputArray> outputs_;
};

// Splits a batch's output among its queries: `data` holds one row per item (the batch's items in
// query order, `sizes` items each; empty sizes: one per query), each row `row_shape` of `dtype`;
// query q gets its rows as an array of shape (sizes[q], *row_shape).
void put_batch_rows(QueryOutputs& outputs, std::span<const workload::QueryId> queries,
                    std::span<const std::int32_t> sizes, DType dtype, std::span<const std::int64_t> row_shape,
                    const std::uint8_t* data);

}  // namespace servelab::serve
