#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "servelab/build_config.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/exec/grow_only_arena.hpp"
#include "servelab/exec/mlp.hpp"
#if SERVELAB_HAS_ONEDNN
#include "servelab/exec/onednn_mlp.hpp"
#endif

namespace servelab::exec {
namespace {

Matrix random_batch(std::int64_t rows, std::int64_t cols, unsigned seed) {
  Matrix m(rows, cols);
  std::srand(seed);
  for (auto& v : m.data) v = static_cast<float>(std::rand()) / RAND_MAX * 2.0f - 1.0f;
  return m;
}

// An allocator that counts what it hands out and can be made to run out.
struct CountingMemory {
  static constexpr const char* kName = "test memory";
  static inline int live = 0, allocations = 0;
  static inline bool full = false;
  static void* allocate(std::size_t bytes) {
    if (full) return nullptr;
    ++live;
    ++allocations;
    return std::malloc(bytes);
  }
  static void release(void* ptr) noexcept {
    --live;
    std::free(ptr);
  }
};

TEST(GrowOnlyArena, GrowsOnlyWhenAskedForMoreAndReleasesWhatItReplaces) {
  CountingMemory::live = CountingMemory::allocations = 0;
  CountingMemory::full = false;
  int described = 0;
  const auto describe = [&] {
    ++described;
    return std::string("model m with batch=9");
  };
  {
    GrowOnlyArena<CountingMemory> arena;
    EXPECT_EQ(arena.capacity(), 0U);
    char* first = arena.reserve(100, describe);
    EXPECT_EQ(arena.reserve(100, describe), first);  // big enough: the same block, no allocation
    EXPECT_EQ(arena.reserve(10, describe), first);
    EXPECT_EQ(CountingMemory::allocations, 1);
    arena.reserve(1000, describe);
    EXPECT_EQ(arena.capacity(), 1000U);
    EXPECT_EQ(CountingMemory::allocations, 2);
    EXPECT_EQ(CountingMemory::live, 1);  // the 100-byte block went back first
    CountingMemory::full = true;
    EXPECT_EQ(arena.reserve(500, describe), arena.reserve(1000, describe));  // fits: nothing asked
    EXPECT_EQ(described, 0);                                                 // the message is only made for a failure
    try {
      arena.reserve(4096, describe);
      ADD_FAILURE() << "no MemoryError";
    } catch (const MemoryError& e) {
      EXPECT_EQ(std::string(e.what()), "model m with batch=9 needs 4096 bytes of test memory, which are not free");
    }
    EXPECT_EQ(described, 1);
    EXPECT_EQ(arena.capacity(), 0U);  // the old block is gone, and nothing is held
    EXPECT_EQ(CountingMemory::live, 0);
    CountingMemory::full = false;
    EXPECT_NE(arena.reserve(64, describe), nullptr);  // usable again
  }
  EXPECT_EQ(CountingMemory::live, 0);  // released when the arena goes
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  float worst = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, std::abs(a.data[i] - b.data[i]));
  return worst;
}

TEST(Mlp, ReferenceComputesLinearReluLinear) {
  MlpWeights w;
  Matrix w0(2, 2);
  w0.data = {1, -1, 2, 0};  // h = relu([x0 - x1, 2 x0] + [0, -1])
  Matrix w1(1, 2);
  w1.data = {1, 1};  // y = h0 + h1 + 0.5
  w.layers = {{w0, {0.f, -1.f}}, {w1, {0.5f}}};
  Matrix x(2, 2);
  x.data = {3, 1, -1, 2};  // rows: h=[2,5] -> 7.5 ; h=relu([-3,-3]) = [0,0] -> 0.5
  const Matrix y = ReferenceMlp(w).run(x.view());
  ASSERT_EQ(y.rows, 2);
  ASSERT_EQ(y.cols, 1);
  EXPECT_FLOAT_EQ(y.data[0], 7.5f);
  EXPECT_FLOAT_EQ(y.data[1], 0.5f);
}

TEST(Mlp, ValidateNamesTheBadLayer) {
  auto w = MlpWeights::random({4, 8, 2}, 1);
  w.layers[1].bias.pop_back();
  try {
    w.validate();
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[1].bias"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MlpWeights::random({4}, 1), ValueError);
  EXPECT_THROW(MlpWeights::random({4, 0}, 1), ValueError);
}

TEST(Mlp, InputWidthIsChecked) {
  const ReferenceMlp model(MlpWeights::random({4, 3}, 1));
  const Matrix x = random_batch(2, 5, 1);
  EXPECT_THROW(model.run(x.view()), ValueError);
}

TEST(Mlp, RandomWeightsAreDeterministic) {
  const auto a = MlpWeights::random({5, 7, 3}, 42), b = MlpWeights::random({5, 7, 3}, 42);
  EXPECT_EQ(a.layers[0].weight.data, b.layers[0].weight.data);
  EXPECT_EQ(a.layers[1].bias, b.layers[1].bias);
}

#if SERVELAB_HAS_ONEDNN
TEST(OneDnnMlp, MatchesReferenceAcrossBatchSizes) {
  const auto weights = MlpWeights::random({64, 128, 32, 8}, 7);
  const ReferenceMlp reference(weights);
  const OneDnnMlp onednn(weights);
  EXPECT_FALSE(onednn_runtime_version().empty());
  for (const std::int64_t batch : {1, 3, 16, 100}) {
    const Matrix x = random_batch(batch, 64, static_cast<unsigned>(batch));
    EXPECT_LT(max_abs_diff(onednn.run(x.view()), reference.run(x.view())), 1e-4f) << "batch " << batch;
  }
}

TEST(OneDnnMlp, ConcurrentCallsAgree) {
  const auto weights = MlpWeights::random({32, 64, 4}, 3);
  const OneDnnMlp onednn(weights);
  const Matrix x = random_batch(8, 32, 5);
  const Matrix expected = ReferenceMlp(weights).run(x.view());
  std::vector<float> worst(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) worst[t] = std::max(worst[t], max_abs_diff(onednn.run(x.view()), expected));
    });
  }
  for (auto& th : threads) th.join();
  for (const float w : worst) EXPECT_LT(w, 1e-4f);
}
#endif

}  // namespace
}  // namespace servelab::exec
