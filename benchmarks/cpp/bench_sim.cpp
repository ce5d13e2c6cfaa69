// Simulator throughput: FCFS over 100 workers (the issue's headline case), and the other generic
// policies on the same cluster. Reports simulated queries per second.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab {
namespace {

// `workers` identical workers, latency 8 ms + 0.5 ms per item (batch 1..16), ~80% utilisation.
cluster::RunSpec make_spec(std::int64_t queries, bool sampled, std::int32_t workers = 100) {
  auto profile = std::make_shared<profile::Profile>();
  profile->set_price("cpu", 0.1);
  for (std::int64_t b = 1; b <= 16; ++b) {
    const double ms = 8.0 + 0.5 * static_cast<double>(b - 1);
    profile->set_latency("cpu", "m", b,
                         profile::LatencyDistribution::from_samples({0.9 * ms / 1e3, ms / 1e3, 1.1 * ms / 1e3}));
  }
  workload::Application app{"a", 1.0, 100 * kNanosPerMilli, std::make_shared<workload::UniformSize>(1, 16), 0.0};
  auto arrivals = std::make_shared<workload::Poisson>(0.8 * workers / 0.01175);
  cluster::RunSpec spec;
  spec.profile = profile;
  spec.workers = {{"cpu", workers, {"m"}, {}}};
  spec.workload = std::make_shared<workload::Workload>(arrivals, std::vector{app}, queries);
  spec.seed = 7;
  if (!sampled) spec.service_statistic = profile::Statistic::Mean;
  return spec;
}

void run(benchmark::State& state, const char* scheduler, bool sampled, std::int32_t workers = 100,
         const char* records = "all") {
  auto spec = make_spec(state.range(0), sampled, workers);
  spec.records = cluster::parse_record_mode(records);
  for (auto _ : state) {
    auto policy = catalogue::schedulers().make(scheduler);
    auto result = sim::simulate(spec, *policy);
    benchmark::DoNotOptimize(result.queries.finish.data());
  }
  state.counters["queries/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)), benchmark::Counter::kIsRate);
}

// The issue's headline case: 100 workers, every query 10 ms (size 1), Poisson 8,000 q/s.
cluster::RunSpec make_issue_spec(std::int64_t queries) {
  auto profile = std::make_shared<profile::Profile>();
  profile->set_price("cpu", 0.1);
  profile->set_latency("cpu", "m", 1, profile::LatencyDistribution::from_samples({0.010}));
  workload::Application app{"a", 1.0, 100 * kNanosPerMilli, nullptr, 0.0};
  cluster::RunSpec spec;
  spec.profile = profile;
  spec.workers = {{"cpu", 100, {"m"}, {}}};
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(8000.0), std::vector{app}, queries);
  spec.seed = 7;
  spec.service_statistic = profile::Statistic::Mean;
  return spec;
}

// The floor the engine is compared with: the same queries from the same workload stream, then
// the plain heap-of-free-times loop (reference_heapq.py in C++) writing one finish time each.
std::vector<Nanos> heap_loop(const cluster::RunSpec& spec, bool generate_only) {
  auto stream = spec.workload->start(spec.seed);
  std::vector<sched::Query> block(256);
  std::vector<Nanos> finish;
  finish.reserve(static_cast<std::size_t>(spec.workload->max_count()));
  std::priority_queue<Nanos, std::vector<Nanos>, std::greater<>> free(std::greater<>{}, std::vector<Nanos>(100, 0));
  const Nanos service = 10 * kNanosPerMilli;
  while (const std::size_t n = stream->next_block(block.data(), block.size())) {
    for (std::size_t i = 0; i < n; ++i) {
      if (generate_only) {
        finish.push_back(block[i].arrival);
        continue;
      }
      const Nanos done = std::max(block[i].arrival, free.top()) + service;
      free.pop();
      free.push(done);
      finish.push_back(done);
    }
  }
  return finish;
}

// This thread's CPU time in ns: on a machine shared with other work, wall time also counts the
// time the thread waited for a core.
double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// CPU nanoseconds per query of `fn` over `queries` (the best of 3 runs), timed once per process.
double ns_per_query(const std::function<void()>& fn, std::int64_t queries) {
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    const double t = thread_cpu_ns();
    fn();
    best = std::min(best, thread_cpu_ns() - t);
  }
  return best / static_cast<double>(queries);
}

// Times fcfs runs of the spec and sets the queries/s and ns/query counters; returns the queries run.
double run_fcfs(benchmark::State& state, const cluster::RunSpec& spec) {
  for (auto _ : state) {
    auto policy = catalogue::schedulers().make("fcfs");
    auto result = sim::simulate(spec, *policy);
    benchmark::DoNotOptimize(result.queries.finish.data());
  }
  const double queries = static_cast<double>(state.iterations() * state.range(0));
  state.counters["queries/s"] = benchmark::Counter(queries, benchmark::Counter::kIsRate);
  state.counters["ns/query"] =
      benchmark::Counter(queries * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  return queries;
}

// Engine on the issue's case, with ratios against the heap loop and the workload alone, both
// measured in this process: "x heap loop" is how many times slower than that floor it runs.
void BM_FcfsIssueCase(benchmark::State& state) {
  const auto spec = make_issue_spec(state.range(0));
  const double heap_ns = ns_per_query([&] { benchmark::DoNotOptimize(heap_loop(spec, false).data()); }, state.range(0));
  const double gen_ns = ns_per_query([&] { benchmark::DoNotOptimize(heap_loop(spec, true).data()); }, state.range(0));
  const double queries = run_fcfs(state, spec);
  state.counters["heap_loop_ns"] = heap_ns;
  state.counters["workload_ns"] = gen_ns;
  state.counters["x_heap_loop"] =
      benchmark::Counter(queries * 1e-9 * heap_ns, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The same run without the in-process references (what a profile of the engine should sample).
void BM_FcfsIssueCaseEngine(benchmark::State& state) { run_fcfs(state, make_issue_spec(state.range(0))); }

// Co-located instances (bench_colocated.py's case): 100 machines x 4 instances, fixed 10 ms,
// Poisson at 60% of the instances' capacity alone; the second argument 1 adds per_corunner(0.1)
// interference (each batch re-timed as its machine's co-runners start and end), 0 runs the same
// machines without it.
void BM_FcfsColocated(benchmark::State& state) {
  auto spec = make_issue_spec(state.range(0));
  spec.machines = {{"box", 100, "", {}}};
  spec.workers = {{"cpu", 4, {"m"}, {}, "box"}};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(24000.0),
                                                       std::vector{spec.workload->apps()}, state.range(0));
  if (state.range(1) != 0) spec.interference = catalogue::interference_models().make("per_corunner(slowdown=0.1)");
  run_fcfs(state, spec);
}

void BM_Fcfs100Workers(benchmark::State& state) { run(state, "fcfs", false); }
void BM_Fcfs100WorkersSampled(benchmark::State& state) { run(state, "fcfs", true); }
// records="none": summaries and sketches online instead of per-query columns.
void BM_Fcfs100WorkersStreamed(benchmark::State& state) { run(state, "fcfs", false, 100, "none"); }
void BM_Jsq100Workers(benchmark::State& state) { run(state, "jsq", true); }
void BM_LeastFinishTime100Workers(benchmark::State& state) { run(state, "least_finish_time", true); }
void BM_Batching100Workers(benchmark::State& state) { run(state, "batching", true); }

// Scaling in the number of workers (second argument), same utilisation: indexed decisions should
// cost about the same at 10,000 workers as at 100. With sampled service times each worker's
// random stream (2.5 KB of mt19937_64 state) adds memory traffic that grows with the workers.
void BM_FcfsScaling(benchmark::State& state) {
  run(state, "fcfs", state.range(2) != 0, static_cast<std::int32_t>(state.range(1)));
}
void BM_JsqScaling(benchmark::State& state) {
  run(state, "jsq", state.range(2) != 0, static_cast<std::int32_t>(state.range(1)));
}
void BM_LeastFinishTimeScaling(benchmark::State& state) {
  run(state, "least_finish_time", state.range(2) != 0, static_cast<std::int32_t>(state.range(1)));
}
void BM_ClockworkScaling(benchmark::State& state) {
  run(state, "clockwork(qos_ms=100)", state.range(2) != 0, static_cast<std::int32_t>(state.range(1)));
}
// The same with sampled service times over 10M queries and records="none" (memory constant in
// the run's length): at 1M queries a 10,000-worker run's one-off costs (each worker's stream and
// slot made and first touched) are a large share of its time; here they are a small one, so the
// ratio between 100 and 10,000 workers is that of the per-query cost.
void BM_FcfsScalingLongRun(benchmark::State& state) {
  run(state, "fcfs", true, static_cast<std::int32_t>(state.range(1)), "none");
}
void BM_JsqScalingLongRun(benchmark::State& state) {
  run(state, "jsq", true, static_cast<std::int32_t>(state.range(1)), "none");
}
void long_run_args(benchmark::internal::Benchmark* b) {
  for (const std::int64_t workers : {100, 10000}) b->Args({10'000'000, workers});
}
void scaling_args(benchmark::internal::Benchmark* b) {
  // Third argument: 1 samples service times (a per-worker random stream), 0 uses the mean.
  for (const std::int64_t sampled : {0, 1}) {
    for (const std::int64_t workers : {10, 100, 1000, 10000}) b->Args({1'000'000, workers, sampled});
  }
}

BENCHMARK(BM_FcfsIssueCase)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FcfsIssueCaseEngine)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FcfsColocated)->Args({1'000'000, 0})->Args({1'000'000, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fcfs100Workers)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fcfs100WorkersSampled)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fcfs100WorkersStreamed)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Jsq100Workers)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LeastFinishTime100Workers)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Batching100Workers)->Arg(1'000'000)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FcfsScaling)->Apply(scaling_args)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JsqScaling)->Apply(scaling_args)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LeastFinishTimeScaling)->Apply(scaling_args)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ClockworkScaling)->Apply(scaling_args)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FcfsScalingLongRun)->Apply(long_run_args)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_JsqScalingLongRun)->Apply(long_run_args)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace servelab

BENCHMARK_MAIN();
