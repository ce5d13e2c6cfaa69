// User-supplied per-query inputs (ServeOptions::inputs) reach every batch of a C++ executor
// (ExecRequest::inputs), each query's rows laid out back to back by fill_batch_rows, and an input
// that does not fit fails only its own batch, with the executor named in the drop reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/serve/executor.hpp"
#include "servelab/serve/executor_registry.hpp"
#include "servelab/serve/query_inputs.hpp"
#include "servelab/serve/server.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/sizes.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::serve {
namespace {

using cluster::QueryStatus;
using cluster::RunResult;
using cluster::RunSpec;

constexpr std::int64_t kWidth = 3;
constexpr workload::QueryId kRejected = 5;  // the one query whose input does not fit

// Query q's row r is (q, r, 0.5): which query and which of its rows, readable by the executor.
class IdRows final : public QueryInputs {
 public:
  void fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                 const std::string& executor) const override {
    // An empty `executor` names none (inside a run, whose drop reason names the executor).
    const std::string who = executor.empty() ? "" : executor + ": ";
    if (width != kWidth) throw ValueError(str(who, "width=", width, " but the inputs have ", kWidth));
    if (query == kRejected) throw ValueError(str(who, "no input for query ", query));
    for (std::int32_t r = 0; r < size; ++r) {
      out[r * width] = static_cast<float>(query);
      out[r * width + 1] = static_cast<float>(r);
      out[r * width + 2] = 0.5f;
    }
  }
  std::string describe() const override { return "inputs=id rows"; }
  InputArray array(workload::QueryId, const std::string& executor) const override {
    throw ValueError(str(executor, ": not sendable"));
  }
};

TEST(QueryInputs, FillBatchRowsLaysQueriesBackToBack) {
  const IdRows inputs;
  const std::vector<workload::QueryId> queries{7, 2, 9};
  const std::vector<std::int32_t> sizes{2, 1, 3};
  std::vector<float> out(6 * kWidth, -1.0f);
  fill_batch_rows(inputs, queries, sizes, kWidth, out.data(), "probe");
  const std::vector<float> expected{7, 0, 0.5f, 7, 1, 0.5f, 2, 0, 0.5f, 9, 0, 0.5f, 9, 1, 0.5f, 9, 2, 0.5f};
  EXPECT_EQ(out, expected);
  // No sizes: one row per query.
  std::vector<float> one(3 * kWidth, -1.0f);
  fill_batch_rows(inputs, queries, {}, kWidth, one.data(), "probe");
  EXPECT_EQ(one[0], 7.0f);
  EXPECT_EQ(one[kWidth], 2.0f);
  EXPECT_EQ(one[2 * kWidth], 9.0f);
}

TEST(QueryInputs, AnInputThatDoesNotFitNamesTheExecutor) {
  const IdRows inputs;
  std::vector<float> out(kWidth * 4);
  const std::vector<workload::QueryId> ok{1};
  try {
    fill_batch_rows(inputs, ok, {}, 4, out.data(), "reader(model='m')");
    FAIL() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "reader(model='m'): width=4 but the inputs have 3");
  }
}

// Reads each batch's rows and checks that they are its own queries' rows.
class RowReader final : public Executor {
 public:
  explicit RowReader(std::shared_ptr<std::atomic<int>> batches) : batches_(std::move(batches)) {}
  void run(const ExecRequest& request) override {
    if (request.inputs == nullptr) throw RuntimeError("no inputs");
    std::vector<float> rows(static_cast<std::size_t>(request.items * kWidth));
    fill_batch_rows(*request.inputs, request.queries, request.sizes, kWidth, rows.data(), "");
    std::size_t row = 0;
    for (std::size_t q = 0; q < request.queries.size(); ++q) {
      const std::int32_t size = request.sizes.empty() ? 1 : request.sizes[q];
      for (std::int32_t r = 0; r < size; ++r, ++row) {
        if (rows[row * kWidth] != static_cast<float>(request.queries[q]) ||
            rows[row * kWidth + 1] != static_cast<float>(r)) {
          throw RuntimeError(str("row ", row, " is not query ", request.queries[q], "'s row ", r));
        }
      }
    }
    ++*batches_;
  }
  std::string describe() const override { return "reader()"; }

 private:
  std::shared_ptr<std::atomic<int>> batches_;
};

class RowReaderBuilder final : public ExecutorBuilder {
 public:
  std::shared_ptr<std::atomic<int>> batches = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<Executor> build(const ExecutorContext&) const override {
    return std::make_unique<RowReader>(batches);
  }
  std::string describe() const override { return "reader()"; }
};

RunSpec spec_with_sizes() {
  auto profile = std::make_shared<profile::Profile>();
  profile->set_price("cpu", 1.0);
  profile->set_accuracy("m", 0.8);
  profile->set_latency("cpu", "m", 1, profile::LatencyDistribution::from_samples({0.001}));
  profile->set_latency("cpu", "m", 16, profile::LatencyDistribution::from_samples({0.002}));
  RunSpec spec;
  spec.profile = profile;
  spec.workers = {{"cpu", 2, {"m"}}};
  workload::Application app{"app", 1.0, 500 * kNanosPerMilli, std::make_shared<workload::UniformSize>(1, 4), 0.0};
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(400),
                                           std::vector<workload::Application>{app}, 80, workload::kUnlimitedHorizon);
  spec.seed = 3;
  return spec;
}

TEST(QueryInputs, EveryBatchOfAServingRunGetsItsOwnQueriesRows) {
  const auto spec = spec_with_sizes();
  const auto builder = std::make_shared<RowReaderBuilder>();
  ServeOptions options;
  options.executor = executors_by_group({builder});
  options.inputs = std::make_shared<IdRows>();
  const auto scheduler = catalogue::schedulers().make("batching(max_batch=4, timeout_ms=2)");
  const RunResult r = serve(spec, *scheduler, options);
  ASSERT_EQ(r.queries.size_of(), 80u);
  // Only the batch holding the rejected query failed; the executor read every other batch.
  const auto reason = std::find(r.drop_reasons.begin(), r.drop_reasons.end(),
                                std::string("executor failed: reader(): no input for query 5"));
  ASSERT_NE(reason, r.drop_reasons.end()) << (r.drop_reasons.empty() ? "" : r.drop_reasons[0]);
  const auto failed_reason = static_cast<std::int8_t>(reason - r.drop_reasons.begin());
  EXPECT_EQ(r.queries.drop_reason[kRejected], failed_reason);
  int failed = 0, completed = 0;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    if (r.queries.status[i] == static_cast<std::int8_t>(QueryStatus::Completed)) ++completed;
    if (r.queries.drop_reason[i] == failed_reason) ++failed;
  }
  EXPECT_LE(failed, 4);  // one batch (max_batch=4)
  EXPECT_EQ(completed + failed, 80);
  EXPECT_GT(builder->batches->load(), 0);
}

}  // namespace
}  // namespace servelab::serve
