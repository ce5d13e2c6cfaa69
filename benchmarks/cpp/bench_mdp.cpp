// MDP solvers on random sparse MDPs the size RAMSIS builds: per worker 3,334 states and about
// 4,000 state-action pairs (maximal batching), about 100k pairs with variable batching; about 30
// transitions per pair. Reports the wall-clock time per value-iteration sweep or power-iteration
// step ("per_step") for a given thread count (0: automatic).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "servelab/solvers/mdp/mdp.hpp"
#include "servelab/solvers/mdp/solve.hpp"

namespace mdp = servelab::solvers::mdp;

namespace {

constexpr int kStates = 3334;

// `pairs` pairs spread evenly over the states, each with 1..59 transitions (30 on average) to
// random states with random probabilities; rewards uniform in [0, 1).
mdp::Mdp random_mdp(std::int64_t pairs, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  mdp::MdpBuilder b;
  b.reserve(kStates, pairs, pairs * 30);
  for (int s = 0; s < kStates; ++s) {
    b.add_state();
    const std::int64_t actions = pairs * (s + 1) / kStates - pairs * s / kStates;
    for (std::int64_t a = 0; a < actions; ++a) {
      b.add_action(unit(rng));
      const int k = 1 + static_cast<int>(rng() % 59);
      std::vector<double> w(k);
      double total = 0;
      for (auto& x : w) total += (x = 0.05 + unit(rng));
      for (int i = 0; i < k; ++i) b.add_transition(static_cast<int>(rng() % kStates), w[i] / total);
    }
  }
  return b.finish(1e-12);
}

const mdp::Mdp& mdp_with(std::int64_t pairs) {
  static const mdp::Mdp ramsis = random_mdp(4000, 1);
  static const mdp::Mdp variable = random_mdp(100000, 2);
  return pairs <= 4000 ? ramsis : variable;
}

void per_step_counter(benchmark::State& state, std::int64_t steps_per_iteration) {
  state.counters["per_step"] = benchmark::Counter(static_cast<double>(state.iterations() * steps_per_iteration),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["transitions"] = static_cast<double>(mdp_with(state.range(0)).num_transitions());
}

// 100 undiscounted sweeps, as RAMSIS runs (plus the final greedy-policy pass).
void BM_ValueIteration100(benchmark::State& state) {
  const auto& m = mdp_with(state.range(0));
  const mdp::SolveOptions options{.tolerance = 0, .max_iterations = 100, .threads = static_cast<int>(state.range(1))};
  for (auto _ : state) benchmark::DoNotOptimize(mdp::value_iteration(m, options));
  per_step_counter(state, 100);
}
BENCHMARK(BM_ValueIteration100)
    ->ArgNames({"pairs", "threads"})
    ->Args({4000, 1})
    ->Args({4000, 2})
    ->Args({4000, 0})
    ->Args({100000, 1})
    ->Args({100000, 2})
    ->Args({100000, 4})
    ->Args({100000, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// 1,000 power-iteration steps on the 100-sweep policy's chain, as RAMSIS's expectations use.
void BM_Stationary1000(benchmark::State& state) {
  const auto& m = mdp_with(state.range(0));
  const auto policy = mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 100}).policy;
  const mdp::StationaryOptions options{
      .tolerance = 0, .max_iterations = 1000, .threads = static_cast<int>(state.range(1))};
  std::vector<double> start(kStates, 0.0);
  start[0] = 1.0;
  for (auto _ : state) benchmark::DoNotOptimize(mdp::stationary_distribution(m, policy, options, start));
  per_step_counter(state, 1000);
}
BENCHMARK(BM_Stationary1000)
    ->ArgNames({"pairs", "threads"})
    ->Args({4000, 1})
    ->Args({4000, 2})
    ->Args({4000, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Discounted policy iteration (exact evaluation by a sparse solve per round).
void BM_PolicyIteration(benchmark::State& state) {
  const auto& m = mdp_with(state.range(0));
  const mdp::SolveOptions options{.discount = 0.95};
  std::int32_t rounds = 0;
  for (auto _ : state) rounds = mdp::policy_iteration(m, options).iterations;
  state.counters["rounds"] = rounds;
}
BENCHMARK(BM_PolicyIteration)->ArgNames({"pairs"})->Arg(4000)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
