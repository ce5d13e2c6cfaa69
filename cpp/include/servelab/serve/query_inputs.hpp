// Per-query inputs a user supplies to a serving run (servelab.serve(inputs=...)), used by the
// executors that take float rows (torchscript, Python executors) instead of the inputs they would
// derive from the run's seed and the query id.
//
// The source is shared by every worker thread of the run, so its methods must be thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "servelab/serve/input_array.hpp"
#include "servelab/workload/query.hpp"

namespace servelab::serve {

class QueryInputs {
 public:
  virtual ~QueryInputs() = default;
  // Writes query `query`'s `size` rows of `width` float32 features to out[0, size * width).
  // `executor` names the executor (and its model) that asks, for the ValueError raised when the
  // query's input does not fit: another width or dtype, or no input for that query. Empty: the
  // message names none (inside a serving run, whose drop reason already names the executor).
  virtual void fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                         const std::string& executor) const = 0;
  // What the inputs are, for messages: "inputs=array(float32, shape=(100, 16))".
  virtual std::string describe() const = 0;
  // Query `query`'s input as given, as a typed array: what the remote executor sends to an
  // executor in another process. ValueError naming `executor` (as fill_rows) when it is not a
  // numeric array or scalar.
  virtual InputArray array(workload::QueryId query, const std::string& executor) const = 0;
};

// "array(float32, shape=(8, 16))", for messages.
std::string array_text(const InputArray& input);

// Writes a query's `size` rows of `width` float32 features from its given array: one of shape
// (width,) is repeated for each item, one of shape (size, width) gives one row per item.
// ValueError naming `executor` (as QueryInputs::fill_rows), the query and the array otherwise;
// `source` says where the array came from ("the input sent").
void fill_rows_from(const InputArray& input, workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                    const std::string& executor, std::string_view source);

// Fills a batch's rows, query after query (sizes empty: one row per query).
void fill_batch_rows(const QueryInputs& inputs, std::span<const workload::QueryId> queries,
                     std::span<const std::int32_t> sizes, std::int64_t width, float* out, const std::string& executor);

}  // namespace servelab::serve
