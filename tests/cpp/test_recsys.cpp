// The recommendation models' C++ parts: the embedding bag, the input generator, every built-in
// model's shapes on the reference backend, bad input, the executor, and oneDNN against the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stop_token>
#include <vector>

#include "servelab/build_config.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/exec/recsys/backends.hpp"
#include "servelab/exec/recsys/embedding_bag.hpp"
#include "servelab/exec/recsys/executor.hpp"
#include "servelab/exec/recsys/inputs.hpp"
#include "servelab/exec/recsys/machine_peaks.hpp"
#include "servelab/exec/recsys/model.hpp"
#include "servelab/exec/recsys/spec.hpp"
#include "servelab/exec/recsys/stage_inputs.hpp"
#include "servelab/exec/recsys/zipf.hpp"
#if SERVELAB_HAS_ONEDNN
#include "servelab/exec/recsys/onednn_recsys.hpp"
#endif

namespace sr = servelab::exec::recsys;
using servelab::exec::Matrix;

namespace {

// A model small enough for the reference backend: tables at 1/10000 of their rows.
sr::Spec small(const std::string& name) { return sr::scaled(sr::builtin(name), 1e-4); }

}  // namespace

TEST(RecsysEmbeddingBag, SumsTheLookedUpRows) {
  const std::int64_t rows = 50, dim = 37;  // an odd width exercises the vector loop's tail
  std::vector<float> table(rows * dim);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
  const int lookups = 11;
  const std::int64_t batch = 5;
  std::vector<std::int64_t> idx(batch * lookups);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>((i * 7 + 3) % rows);
  std::vector<float> out(batch * (dim + 2), -1.0f);  // a wider stride: columns outside stay untouched
  sr::embedding_bag_sum({table.data(), idx.data(), lookups, lookups, out.data(), dim + 2}, dim, 0, batch);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t c = 0; c < dim; ++c) {
      double want = 0;
      for (int l = 0; l < lookups; ++l) want += table[idx[b * lookups + l] * dim + c];
      EXPECT_NEAR(out[b * (dim + 2) + c], want, 1e-4);
    }
    EXPECT_EQ(out[b * (dim + 2) + dim], -1.0f);
  }
}

TEST(RecsysEmbeddingBag, ReportsAnIndexOutOfRangeInsteadOfReadingIt) {
  for (const std::int64_t dim : {std::int64_t{32}, std::int64_t{37}}) {  // the fixed-width and the run-time loops
    const std::int64_t rows = 20;
    std::vector<float> table(rows * dim, 1.0f);
    std::vector<std::int64_t> idx(7 * 30);
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>(i % rows);
    std::vector<float> out(7 * dim);
    const sr::BagJob job{table.data(), idx.data(), 30, 30, out.data(), dim, rows};
    EXPECT_TRUE(sr::embedding_bag_sum(job, dim, 0, 7));
    for (const std::int64_t bad : {std::int64_t{-1}, rows, std::int64_t{1} << 40}) {
      for (const std::size_t at : {std::size_t{0}, std::size_t{95}, idx.size() - 1}) {
        const std::int64_t kept = idx[at];
        idx[at] = bad;
        EXPECT_FALSE(sr::embedding_bag_sum(job, dim, 0, 7)) << bad << " at " << at;
        idx[at] = kept;
      }
    }
  }
}

TEST(RecsysWeights, TablesStartOnCacheLinesAndBigOnesOn2MBPages) {
  // A 256-byte row must span 4 cache lines, not 5 (malloc aligns to 16 bytes only); a table of
  // 1 MB or more starts on a 2 MB boundary so that all of it can be in 2 MB pages.
  const sr::Spec spec = sr::scaled(sr::builtin("rm2"), 0.01);  // 5,000 rows x 64 floats: 1.28 MB a table
  const sr::Weights w = sr::Weights::zeros(spec);
  ASSERT_EQ(w.tables.size(), spec.tables.size());
  for (const auto& t : w.tables) {
    EXPECT_EQ(t.rows, 5'000);
    EXPECT_EQ(t.data.size(), static_cast<std::size_t>(t.rows * t.cols));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data.data()) % (2u << 20), 0u);
  }
  for (const auto& t : sr::Weights::zeros(small("rm1")).tables) {  // 400 rows x 32 floats: 51 kB
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data.data()) % 64, 0u);
  }
}

TEST(RecsysZipf, StaysInRangeAndFavoursSmallRanks) {
  const sr::ZipfSampler zipf(1000, 1.05);
  servelab::Rng rng(1, "zipf");
  std::map<std::int64_t, int> counts;
  for (int i = 0; i < 20000; ++i) {
    const auto k = zipf(rng);
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 1000);
    ++counts[k];
  }
  EXPECT_GT(counts[1], counts[2]);
  EXPECT_GT(counts[2], counts[10]);
  // P(1) = 1 / H(1000, 1.05), about 0.14.
  EXPECT_NEAR(counts[1] / 20000.0, 0.14, 0.02);
  EXPECT_THROW(sr::ZipfSampler(0, 1.0), servelab::ValueError);
  EXPECT_THROW(sr::ZipfSampler(10, -1.0), servelab::ValueError);
}

TEST(RecsysInputs, DependOnlyOnSeedAndQuery) {
  const auto spec = small("rm1");
  const sr::InputGenerator gen(spec, 7, {sr::parse_distribution("zipf", "d")});
  const std::vector<std::int64_t> ids{5, 9, 5};
  const auto a = gen.queries(ids);
  EXPECT_EQ(a.dense.rows, 3);
  EXPECT_EQ(a.dense.cols, spec.dense);
  EXPECT_EQ(a.sparse_cols, spec.lookups_per_sample());
  // Query 5 gives the same row wherever it sits, and query 9 another one.
  const auto row = [&](const sr::Inputs& in, std::int64_t r) {
    return std::vector<std::int64_t>(in.sparse.begin() + r * in.sparse_cols,
                                     in.sparse.begin() + (r + 1) * in.sparse_cols);
  };
  EXPECT_EQ(row(a, 0), row(a, 2));
  EXPECT_NE(row(a, 0), row(a, 1));
  const std::vector<std::int64_t> one{9};
  EXPECT_EQ(row(gen.queries(one), 0), row(a, 1));
  // A served batch: item 0 of each query is the query's own row.
  const std::vector<std::int32_t> sizes{2, 1, 1};
  const auto served = gen.batch(ids, sizes);
  EXPECT_EQ(served.dense.rows, 4);
  EXPECT_EQ(row(served, 0), row(a, 0));
  EXPECT_EQ(row(served, 2), row(a, 1));
  EXPECT_NE(row(served, 1), row(served, 0));
  // Another seed, other inputs.
  EXPECT_NE(row(sr::InputGenerator(spec, 8).queries(one), 0), row(a, 1));
  for (std::size_t i = 0; i < a.sparse.size(); ++i) {
    const auto& f_rows = spec.tables[0].rows;  // all rm1 tables have the same rows
    ASSERT_GE(a.sparse[i], 0);
    ASSERT_LT(a.sparse[i], f_rows);
  }
}

TEST(RecsysInputs, RejectsBadDistributions) {
  EXPECT_THROW(sr::parse_distribution("pareto", "distribution"), servelab::ValueError);
  EXPECT_THROW(sr::parse_distribution("zipf:-1", "distribution"), servelab::ValueError);
  EXPECT_EQ(sr::parse_distribution("zipf:0.8", "d").exponent, 0.8);
  EXPECT_THROW(sr::InputGenerator(small("rm1"), 1, std::vector<sr::IndexDistribution>(3)), servelab::ValueError);
}

TEST(RecsysModels, EveryModelRunsWithTheRightShape) {
  for (const auto& name : sr::model_names()) {
    SCOPED_TRACE(name);
    const auto spec = small(name);
    const sr::ReferenceRecsys model(spec, sr::Weights::random(spec, 3));
    const std::vector<std::int64_t> ids{0, 1, 2};
    const auto in = sr::InputGenerator(spec, 1).queries(ids);
    const Matrix out = model.run(in.view());
    ASSERT_EQ(out.rows, 3);
    ASSERT_EQ(out.cols, spec.outputs());
    for (const float v : out.data) {
      EXPECT_TRUE(std::isfinite(v));
      if (!spec.predict.empty()) {
        EXPECT_GE(v, 0.0f);  // NCF: DeepRecSys's final layer, ReLU units
        continue;
      }
      EXPECT_GT(v, 0.0f);  // sigmoid and softmax outputs
      EXPECT_LT(v, 1.0f);
    }
    EXPECT_NE(out.at(0, 0), out.at(1, 0));  // different inputs, different scores
  }
}

TEST(RecsysModels, SameSeedSameWeights) {
  const auto spec = small("dien");
  auto a = sr::Weights::random(spec, 11), b = sr::Weights::random(spec, 11), c = sr::Weights::random(spec, 12);
  const auto na = a.named(), nb = b.named(), nc = c.named();
  ASSERT_EQ(na.size(), nb.size());
  for (std::size_t i = 0; i < na.size(); ++i) {
    EXPECT_TRUE(std::equal(na[i].data, na[i].data + na[i].size, nb[i].data)) << na[i].name;
  }
  EXPECT_FALSE(std::equal(na[0].data, na[0].data + na[0].size, nc[0].data));
}

TEST(RecsysModels, DescriptionsFollowTheArchitectures) {
  const auto rm1 = sr::builtin("rm1");
  EXPECT_EQ(rm1.tables.size(), 8u);
  EXPECT_EQ(rm1.tables[0].rows, 4'000'000);
  EXPECT_EQ(rm1.lookups_per_sample(), 8 * 80);
  EXPECT_EQ(rm1.interaction_width(), 9 * 32);
  EXPECT_EQ(sr::with_interaction(rm1, sr::Interaction::Dot).interaction_width(), 32 + 9 * 8 / 2);
  EXPECT_EQ(sr::builtin("mtwnd").outputs(), 128);  // one task: 512 -> 256 -> 128 sigmoids
  EXPECT_EQ(sr::builtin("din").outputs(), 2);
  // NCF (DeepRecSys's ncf.py): GMF over tables 0-1, the tower over tables 2-3, a 64-unit final layer.
  const auto ncf = sr::builtin("ncf");
  EXPECT_EQ(ncf.gmf, (std::vector<int>{0, 1}));
  EXPECT_EQ(ncf.dense_columns(), 0);
  EXPECT_EQ(ncf.interaction_width(), 2 * 64);
  EXPECT_EQ(ncf.predict_in(), 64 + 64);
  EXPECT_EQ(ncf.outputs(), 64);
  EXPECT_THROW(sr::with_interaction(ncf, sr::Interaction::Dot), servelab::ValueError);
  auto bad = ncf;
  bad.gmf = {0, 0};
  EXPECT_THROW(bad.validate(), servelab::ValueError);
  bad = ncf;
  bad.predict.clear();
  EXPECT_THROW(bad.validate(), servelab::ValueError);
  EXPECT_EQ(sr::scaled(rm1, 0.5).tables[0].rows, 2'000'000);
  EXPECT_THROW(sr::builtin("rm9"), servelab::KeyError);
  EXPECT_THROW(sr::scaled(rm1, 0.0), servelab::ValueError);
  EXPECT_THROW(sr::with_interaction(sr::builtin("wnd"), sr::Interaction::Dot), servelab::ValueError);
}

TEST(RecsysModels, BadInputNamesTheModelAndTheValue) {
  const auto spec = small("rm2");
  const sr::ReferenceRecsys model(spec, sr::Weights::random(spec, 1));
  const std::vector<std::int64_t> ids{0, 1};
  auto in = sr::InputGenerator(spec, 1).queries(ids);
  in.sparse[5] = spec.tables[0].rows;  // one past the end
  try {
    model.run(in.view());
    FAIL() << "no error";
  } catch (const servelab::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("rm2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(spec.tables[0].rows)), std::string::npos) << e.what();
  }
  in.sparse[5] = -1;
  EXPECT_THROW(model.run(in.view()), servelab::ValueError);
  in.sparse[5] = 0;
  sr::Batch narrow = in.view();
  narrow.dense.cols -= 1;
  EXPECT_THROW(model.run(narrow), servelab::ValueError);
  EXPECT_THROW(sr::make_model("tpu", spec, sr::Weights::random(spec, 1)), servelab::KeyError);
}

TEST(RecsysExecutor, RunsBatchesFromQueryIds) {
  const auto spec = small("wnd");
  auto model = std::make_shared<sr::ReferenceRecsys>(spec, sr::Weights::random(spec, 2));
  sr::RecsysExecutor executor(model, sr::InputGenerator(spec, 4), 0, "recsys(model='wnd')");
  EXPECT_TRUE(executor.knobs().empty());  // the reference backend does not parallelise
  const std::vector<std::int64_t> queries{10, 11};
  const std::vector<std::int32_t> sizes{3, 2};
  const servelab::serve::ConfigKnobs config;
  servelab::Rng rng(0, "service");
  servelab::serve::ExecReport report;
  executor.run(
      {.items = 5, .queries = queries, .config = config, .rng = rng, .stop = {}, .sizes = sizes, .report = &report});
  EXPECT_EQ(executor.last_output().rows, 5);
  EXPECT_GT(report.compute, 0);
  // The same queries in another batch score the same.
  const Matrix first = executor.last_output();
  const std::vector<std::int64_t> again{11};
  const std::vector<std::int32_t> two{2};
  executor.run({.items = 2, .queries = again, .config = config, .rng = rng, .stop = {}, .sizes = two});
  EXPECT_EQ(executor.last_output().at(0, 0), first.at(3, 0));
  EXPECT_EQ(executor.last_output().at(1, 0), first.at(4, 0));
}

TEST(RecsysStageInputs, NarrowsCopiesAndFindsIndicesOutOfRangeWhateverTheTeam) {
  const auto spec = small("rm2");
  const auto in = sr::InputGenerator(spec, 4).first(37);
  std::vector<std::uint64_t> limit;
  for (const auto& f : spec.features)
    limit.insert(limit.end(), static_cast<std::size_t>(f.lookups),
                 static_cast<std::uint64_t>(spec.tables[f.table].rows));
  for (const int team : {1, 2, 5, 64}) {
    SCOPED_TRACE(team);
    std::vector<std::int32_t> indices(in.sparse.size(), -7);
    std::vector<float> dense(in.dense.data.size(), -7.0f);
    ASSERT_TRUE(sr::stage_inputs(in.view(), limit, indices.data(), dense.data(), team));
    for (std::size_t i = 0; i < indices.size(); ++i) ASSERT_EQ(indices[i], in.sparse[i]);
    EXPECT_EQ(dense, in.dense.data);
    // One index out of range, at either end, in any row, is found by whichever thread has its row.
    for (const std::size_t row : {0UL, 18UL, 36UL}) {
      for (const bool below : {true, false}) {
        auto bad = in;
        const std::size_t column = 5 + row;
        bad.sparse[row * static_cast<std::size_t>(bad.sparse_cols) + column] =
            below ? -1 : static_cast<std::int64_t>(limit[column]);
        EXPECT_FALSE(sr::stage_inputs(bad.view(), limit, indices.data(), dense.data(), team));
      }
    }
  }
}

TEST(RecsysMachinePeaks, RandomRowsMeasureARateAndRefuseBadSizes) {
  EXPECT_GT(sr::measure_random_rows_gbps(4.0, 128, 2, 1), 0.0);
  EXPECT_THROW(sr::measure_random_rows_gbps(4.0, 100, 1, 1), servelab::ValueError);
  EXPECT_THROW(sr::measure_random_rows_gbps(4.0, 2048, 1, 1), servelab::ValueError);
  EXPECT_THROW(sr::measure_random_rows_gbps(0.0, 128, 1, 1), servelab::ValueError);
  EXPECT_THROW(sr::measure_random_rows_gbps(4.0, 128, 0, 1), servelab::ValueError);
  EXPECT_THROW(sr::measure_random_rows_gbps(4.0, 128, 1, 0), servelab::ValueError);
}

TEST(RecsysStageInputs, TeamGrowsWithTheBytesUpToItsLimit) {
  EXPECT_EQ(sr::staging_team(0, 8), 1);
  EXPECT_EQ(sr::staging_team(3 << 20, 8), 1);
  EXPECT_EQ(sr::staging_team(7 << 20, 8), 3);
  EXPECT_EQ(sr::staging_team(std::size_t{1} << 30, 8), 8);
  EXPECT_EQ(sr::staging_team(std::size_t{1} << 30, 0), 1);
}

#if SERVELAB_HAS_ONEDNN
TEST(RecsysOneDnn, MatchesTheReference) {
  for (const auto& name : sr::model_names()) {
    SCOPED_TRACE(name);
    const auto spec = small(name);
    auto weights = sr::Weights::random(spec, 5);
    const sr::ReferenceRecsys reference(spec, weights);
    const auto onednn = sr::make_onednn_recsys(spec, weights);
    const std::vector<std::int64_t> ids{0, 1, 2, 3, 4, 5, 6};
    const auto in = sr::InputGenerator(spec, 2, {sr::parse_distribution("zipf", "d")}).queries(ids);
    const Matrix want = reference.run(in.view());
    for (int threads : {1, 2}) {
      const Matrix got = onednn->run(in.view(), threads);
      ASSERT_EQ(got.rows, want.rows);
      ASSERT_EQ(got.cols, want.cols);
      for (std::size_t i = 0; i < got.data.size(); ++i) EXPECT_NEAR(got.data[i], want.data[i], 1e-5);
    }
  }
}
#endif
