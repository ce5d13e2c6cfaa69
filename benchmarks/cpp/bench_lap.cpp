// The assignment solver from C++, per call: square n x n (the paper's 20 x 20 query distribution,
// and 128 x 128), and a rectangular 20 x 128 (pending queries x instances). Each iteration solves
// the next matrix of a pool of distinct random ones, as a scheduler meets a new matrix every step.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "servelab/solvers/lap/assignment.hpp"

namespace servelab::solvers {
namespace {

std::vector<std::vector<double>> random_pool(std::int64_t rows, std::int64_t cols, int count) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<std::vector<double>> pool(count, std::vector<double>(rows * cols));
  for (auto& m : pool)
    for (auto& x : m) x = uniform(rng);
  return pool;
}

void BM_Assignment(benchmark::State& state) {
  const auto rows = state.range(0), cols = state.range(1);
  const auto pool = random_pool(rows, cols, 256);
  AssignmentSolver solver;  // scratch kept between calls, as in a scheduler
  std::size_t k = 0;
  for (auto _ : state) {
    const auto& result = solver.solve(pool[k], rows, cols);
    benchmark::DoNotOptimize(result.cost);
    k = (k + 1) % pool.size();
  }
  state.SetLabel(std::to_string(rows) + "x" + std::to_string(cols));
}

BENCHMARK(BM_Assignment)->Args({20, 20})->Args({128, 128})->Args({20, 128})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace servelab::solvers

BENCHMARK_MAIN();
