// The recommendation models' inter-op parallelism: the pool runs every task once and reports
// errors, and a forward pass whose branches run side by side scores bit for bit what the
// sequential pass scores, for every built-in model, backend, and inter-op and intra-op setting.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "servelab/build_config.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/exec/recsys/executor.hpp"
#include "servelab/exec/recsys/inputs.hpp"
#include "servelab/exec/recsys/inter_op_pool.hpp"
#include "servelab/exec/recsys/model.hpp"
#include "servelab/exec/recsys/spec.hpp"
#if SERVELAB_HAS_ONEDNN
#include "servelab/exec/recsys/onednn_recsys.hpp"
#endif

namespace sr = servelab::exec::recsys;
using servelab::exec::Matrix;

namespace {

sr::Spec small(const std::string& name) { return sr::scaled(sr::builtin(name), 1e-4); }

void expect_identical(const Matrix& got, const Matrix& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.data, want.data);  // bit for bit, not within a tolerance
}

void check_every_model(const std::function<std::shared_ptr<sr::RecsysModel>(sr::Spec, sr::Weights)>& make,
                       const std::vector<int>& intra) {
  for (const auto& name : sr::model_names()) {
    SCOPED_TRACE(name);
    const auto spec = small(name);
    const auto model = make(spec, sr::Weights::random(spec, 7));
    const std::vector<std::int64_t> ids{0, 1, 2, 3, 4, 5, 6, 7, 8};
    const auto in = sr::InputGenerator(spec, 3, {sr::parse_distribution("zipf", "d")}).queries(ids);
    for (int threads : intra) {
      const Matrix want = model->run(in.view(), threads);
      for (int team : {1, 2, 3, 8}) {
        SCOPED_TRACE(team);
        sr::InterOpPool pool(team);
        for (int repeat = 0; repeat < 3; ++repeat) expect_identical(model->run(in.view(), threads, &pool), want);
      }
    }
  }
}

}  // namespace

TEST(RecsysInterOpPool, RunsEveryTaskOnceOnEveryTeamSize) {
  for (int team : {1, 2, 5}) {
    sr::InterOpPool pool(team);
    EXPECT_EQ(pool.threads(), team);
    for (int round = 0; round < 20; ++round) {
      std::vector<std::atomic<int>> ran(37);
      std::vector<std::function<void()>> tasks;
      for (auto& r : ran) tasks.emplace_back([&r] { r.fetch_add(1); });
      pool.run(tasks);
      for (const auto& r : ran) EXPECT_EQ(r.load(), 1);
    }
    pool.run({});  // nothing to do is fine
  }
}

TEST(RecsysInterOpPool, RethrowsTheFirstFailingTaskAfterAllFinished) {
  sr::InterOpPool pool(3);
  std::atomic<int> finished{0};
  std::vector<std::function<void()>> tasks{[&] { ++finished; }, [] { throw std::runtime_error("first"); },
                                           [&] { ++finished; }, [] { throw std::logic_error("second"); },
                                           [&] { ++finished; }};
  try {
    pool.run(tasks);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_EQ(finished.load(), 3);
  // The pool is still usable.
  std::atomic<int> again{0};
  pool.run({[&] { ++again; }, [&] { ++again; }});
  EXPECT_EQ(again.load(), 2);
}

TEST(RecsysInterOpPool, RefusesTeamSizesOutOfRange) {
  EXPECT_THROW(sr::InterOpPool(0), servelab::ValueError);
  EXPECT_THROW(sr::InterOpPool(sr::InterOpPool::kMaxThreads + 1), servelab::ValueError);
}

// The gather checks each index as it reads it: an index out of range in any group of bags, run on
// any thread of the pool, fails the batch with the message naming it, and nothing else changes.
TEST(RecsysInterOp, AnIndexOutOfRangeIsAValueErrorOnEveryTeam) {
  const auto spec = small("rm2");
  const auto model = std::make_shared<sr::ReferenceRecsys>(spec, sr::Weights::random(spec, 7));
  const std::vector<std::int64_t> ids{0, 1, 2, 3, 4, 5};
  auto in = sr::InputGenerator(spec, 3, {}).queries(ids);
  const Matrix want = model->run(in.view());
  const std::size_t last = in.sparse.size() - 1;
  for (const std::int64_t bad : {std::int64_t{-1}, spec.tables.back().rows}) {
    const std::int64_t kept = in.sparse[last];
    in.sparse[last] = bad;
    for (int team : {1, 2, 3}) {
      SCOPED_TRACE(team);
      sr::InterOpPool pool(team);
      try {
        model->run(in.view(), 0, &pool);
        ADD_FAILURE() << "no error for index " << bad;
      } catch (const servelab::ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("is out of range"), std::string::npos) << e.what();
      }
    }
    in.sparse[last] = kept;
  }
  expect_identical(model->run(in.view()), want);
}

TEST(RecsysInterOp, ReferenceScoresAreIdenticalForAnyTeam) {
  check_every_model([](sr::Spec s, sr::Weights w) { return std::make_shared<sr::ReferenceRecsys>(s, w); }, {0});
}

#if SERVELAB_HAS_ONEDNN
TEST(RecsysInterOp, OneDnnScoresAreIdenticalForAnyTeamAndIntraOpThreads) {
  check_every_model([](sr::Spec s, sr::Weights w) { return sr::make_onednn_recsys(s, w); }, {1, 2});
}

TEST(RecsysInterOp, TheExecutorReadsTheKnobAndScoresAlike) {
  const auto spec = small("rm2");
  const auto model = sr::make_onednn_recsys(spec, sr::Weights::random(spec, 2));
  sr::RecsysExecutor executor(model, sr::InputGenerator(spec, 4), 0, "recsys(model='rm2')");
  EXPECT_EQ(executor.knobs(), (std::vector<std::string>{"intra_op_threads", "inter_op_threads"}));
  const std::vector<std::int64_t> queries{10, 11, 12};
  const std::vector<std::int32_t> sizes{3, 2, 4};
  servelab::Rng rng(0, "service");
  const auto run = [&](const servelab::serve::ConfigKnobs& config) {
    executor.run({.items = 9, .queries = queries, .config = config, .rng = rng, .stop = {}, .sizes = sizes});
    return executor.last_output();
  };
  const Matrix want = run({{"intra_op_threads", 1}});
  for (std::int64_t inter : {0, 1, 2, 4, 2}) {  // a changed team size rebuilds the pool
    SCOPED_TRACE(inter);
    expect_identical(run({{"inter_op_threads", inter}, {"intra_op_threads", 1}}), want);
  }
  EXPECT_THROW(run({{"inter_op_threads", -1}}), servelab::ValueError);
  EXPECT_THROW(run({{"inter_op_threads", 100000}}), servelab::ValueError);
}
#endif
