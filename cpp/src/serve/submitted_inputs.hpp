// The inputs of a session's queries, as submitted: one typed array per query, kept from the
// query's arrival until it ends. The controller adds and removes them, worker threads read them
// (torchscript through fill_rows, executors written in Python through array()).
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "servelab/core/errors.hpp"
#include "servelab/serve/query_inputs.hpp"

namespace servelab::serve {

class SubmittedInputs final : public QueryInputs {
 public:
  void add(workload::QueryId query, InputArray input) {
    std::lock_guard lock(mutex_);
    inputs_.insert_or_assign(query, std::move(input));
  }
  bool contains(workload::QueryId query) const {
    std::lock_guard lock(mutex_);
    return inputs_.count(query) != 0;
  }
  void remove(workload::QueryId query) {
    std::lock_guard lock(mutex_);
    inputs_.erase(query);
  }
  void fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                 const std::string& executor) const override {
    std::lock_guard lock(mutex_);
    fill_rows_from(find(query, executor), query, size, width, out, executor, "the input submitted");
  }
  std::string describe() const override { return "the inputs submitted to the session"; }
  InputArray array(workload::QueryId query, const std::string& executor) const override {
    std::lock_guard lock(mutex_);
    return find(query, executor);
  }

 private:
  const InputArray& find(workload::QueryId query, const std::string& executor) const {
    const auto it = inputs_.find(query);
    if (it == inputs_.end()) {
      throw ValueError(str(executor.empty() ? "" : executor + ": ", "query ", query,
                           " was submitted without an input, and this executor needs one"));
    }
    return it->second;
  }

  mutable std::mutex mutex_;
  std::unordered_map<workload::QueryId, InputArray> inputs_;
};

}  // namespace servelab::serve
