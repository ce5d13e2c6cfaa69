// The recommendation models on the GPU (the whole forward pass on the device) against the reference
// backend: every built-in model and DLRM's dot interaction, batches staged through pinned memory
// and batches copied straight from the caller's memory, concurrent calls on their own lanes, and
// the stage times. Skipped, with the reason, where no GPU is usable.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/exec/cuda_mlp.hpp"
#include "servelab/exec/recsys/cuda_recsys.hpp"
#include "servelab/exec/recsys/inputs.hpp"
#include "servelab/exec/recsys/model.hpp"

namespace sr = servelab::exec::recsys;
using servelab::exec::Matrix;

namespace {

#define SKIP_WITHOUT_GPU()                                                                 \
  do {                                                                                     \
    const auto status = servelab::exec::cuda_status();                                     \
    if (status.device_count == 0) GTEST_SKIP() << "no usable CUDA GPU: " << status.reason; \
  } while (0)

sr::Spec small(const std::string& name) { return sr::scaled(sr::builtin(name), 1e-4); }

sr::Inputs batch_of(const sr::Spec& spec, std::int64_t rows, std::int64_t first_query) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) ids[static_cast<std::size_t>(i)] = first_query + i;
  return sr::InputGenerator(spec, 2, {sr::parse_distribution("zipf", "distribution")}).queries(ids);
}

void expect_close(const Matrix& got, const Matrix& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  for (std::size_t i = 0; i < got.data.size(); ++i)
    ASSERT_NEAR(got.data[i], want.data[i], 1e-5 + 1e-4 * std::abs(want.data[i])) << "element " << i;
}

void expect_matches_reference(const sr::Spec& spec) {
  const auto weights = sr::Weights::random(spec, 5);
  const sr::ReferenceRecsys reference(spec, weights);
  const auto gpu = sr::make_cuda_recsys(spec, weights);
  // 300 rows of rm2's 3,840 lookups are 9 MB: copied from the caller's memory, not staged.
  for (const std::int64_t rows : {1, 7, 300, 5}) {
    SCOPED_TRACE(rows);
    const auto in = batch_of(spec, rows, rows * 1000);
    expect_close(gpu->run(in.view()), reference.run(in.view()));
  }
}

TEST(RecsysCuda, MatchesTheReferenceForEveryModel) {
  SKIP_WITHOUT_GPU();
  for (const auto& name : sr::model_names()) {
    SCOPED_TRACE(name);
    expect_matches_reference(small(name));
  }
}

TEST(RecsysCuda, MatchesTheReferenceWithTheDotInteraction) {
  SKIP_WITHOUT_GPU();
  expect_matches_reference(sr::with_interaction(small("rm1"), sr::Interaction::Dot));
  expect_matches_reference(sr::with_interaction(small("rm3"), sr::Interaction::Dot));
}

TEST(RecsysCuda, ConcurrentCallsGiveWhatEachGivesAlone) {
  SKIP_WITHOUT_GPU();
  for (const char* name : {"rm2", "dien"}) {
    SCOPED_TRACE(name);
    const auto spec = small(name);
    const auto gpu = sr::make_cuda_recsys(spec, sr::Weights::random(spec, 9));
    std::vector<sr::Inputs> batches;
    std::vector<Matrix> alone;
    for (int i = 0; i < 8; ++i) {
      batches.push_back(batch_of(spec, 1 + 37 * i, 100 * i));
      alone.push_back(gpu->run(batches.back().view()));
    }
    std::vector<std::vector<Matrix>> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < 5; ++round) {
          for (int i = 0; i < 8; ++i) got[t].push_back(gpu->run(batches[static_cast<std::size_t>((i + t) % 8)].view()));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < 4; ++t) {
      ASSERT_EQ(got[t].size(), 40U);
      for (int k = 0; k < 40; ++k) expect_close(got[t][k], alone[static_cast<std::size_t>((k % 8 + t) % 8)]);
    }
  }
}

TEST(RecsysCuda, AnIndexOutOfRangeGetsTheReferencesMessage) {
  SKIP_WITHOUT_GPU();
  const auto spec = small("rm1");
  const auto weights = sr::Weights::random(spec, 1);
  const sr::ReferenceRecsys reference(spec, weights);
  const auto gpu = sr::make_cuda_recsys(spec, weights);
  for (const std::int64_t bad : {-1L, spec.tables[2].rows}) {
    auto in = batch_of(spec, 9, 0);
    in.sparse[static_cast<std::size_t>(4 * in.sparse_cols + 2 * 80 + 3)] = bad;
    std::string want;
    try {
      reference.run(in.view());
    } catch (const servelab::ValueError& e) {
      want = e.what();
    }
    ASSERT_NE(want.find("is out of range"), std::string::npos) << want;
    try {
      gpu->run(in.view());
      ADD_FAILURE() << "no error for index " << bad;
    } catch (const servelab::ValueError& e) {
      EXPECT_EQ(std::string(e.what()), want);
    }
    // The lane is usable again afterwards.
    const auto good = batch_of(spec, 9, 0);
    expect_close(gpu->run(good.view()), reference.run(good.view()));
  }
}

TEST(RecsysCuda, StageTimesAreDeviceTimesWithinTheTotal) {
  SKIP_WITHOUT_GPU();
  const auto spec = small("rm2");
  const auto gpu = sr::make_cuda_recsys(spec, sr::Weights::random(spec, 1));
  const auto in = batch_of(spec, 64, 0);
  sr::StageTimes times;
  gpu->run(in.view(), 0, times);
  EXPECT_GT(times.gather_s, 0);
  EXPECT_GT(times.mlp_s, 0);
  EXPECT_LE(times.gather_s + times.mlp_s, times.total_s);
}

}  // namespace
