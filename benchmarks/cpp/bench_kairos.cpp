// Kairos's distributor decision time. The paper (Sec. 6) reports that a 20-query x 20-instance
// matching takes under 0.05 ms including network delay; here:
//   BM_Decision20x20       one scheduling decision (cost matrix over 20 pending queries and 20
//                          instances, the assignment, the dispatches) on a fixed cluster state;
//                          counters: us/decision, its share of the paper's 50 us budget, and the
//                          ratio to a bare 20 x 20 assignment solve measured in the same run;
//   BM_SimulatedDecision   decisions inside the simulator, 20 instances, 20,000 queries: at 60 QPS
//                          (light: a few pending) and 90 QPS (saturated: about 20 pending, so
//                          about 20 x 20 matrices); counters: decisions/run, mean matrix rows, us
//                          per decision (Kairos's run time minus an FCFS run of the same workload,
//                          measured in the same process, per decision) and its share of 50 us.
#include <benchmark/benchmark.h>

#include <chrono>
#include <deque>
#include <memory>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/solvers/lap/assignment.hpp"
#include "servelab/systems/kairos/distributor.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab {
namespace {

constexpr double kPaperBudgetUs = 50.0;  // "within 0.05 ms" for 20 x 20 (Sec. 6)

// Kairos-like hardware: a GPU (20 + 0.25 b ms) and two CPU types (2 + 0.4 b, 3 + 0.8 b ms),
// sizes 1..1000.
std::shared_ptr<profile::Profile> rm2_like_profile() {
  auto p = std::make_shared<profile::Profile>();
  p->set_price("gpu", 0.526);
  p->set_price("cpu_a", 0.432);
  p->set_price("cpu_b", 0.149);
  for (std::int64_t b : {1, 1000}) {
    const auto x = static_cast<double>(b);
    p->set_latency("gpu", "m", b, profile::LatencyDistribution::from_samples({(20.0 + 0.25 * x) / 1e3}));
    p->set_latency("cpu_a", "m", b, profile::LatencyDistribution::from_samples({(2.0 + 0.4 * x) / 1e3}));
    p->set_latency("cpu_b", "m", b, profile::LatencyDistribution::from_samples({(3.0 + 0.8 * x) / 1e3}));
  }
  return p;
}

// A frozen cluster: n workers (every other one busy), n pending queries. Dispatches are not
// applied, so every iteration makes the same decision.
class FrozenCluster final : public sched::ClusterView, public sched::Actions {
 public:
  FrozenCluster(std::shared_ptr<const profile::Profile> profile, int n)
      : sched::ClusterView(central_), profile_(std::move(profile)) {
    Rng rng(3, "bench");
    now_ = 1000 * kNanosPerMilli;
    for (int w = 0; w < n; ++w) {
      hw_.push_back(w < n / 4 ? 0 : (w < n / 2 ? 1 : 2));
      const bool busy = w % 2 == 1;
      status_.push_back(busy ? sched::WorkerStatus::Busy : sched::WorkerStatus::Idle);
      busy_until_.push_back(busy ? now_ + static_cast<Nanos>(rng.uniform() * 2e8) : now_);
      if (!busy) idle_.push_back(w);
    }
    for (int q = 0; q < n; ++q) {
      sched::Query query;
      query.id = q;
      query.size = 10 * (1 + static_cast<std::int32_t>(rng.uniform() * 100));
      query.arrival = now_ - static_cast<Nanos>(rng.uniform() * 2e8);
      query.deadline = query.arrival + 350 * kNanosPerMilli;
      queries_.push_back(query);
      central_.push_back(q);
    }
    tables_.resize(profile_->hardware().size());
    for (std::size_t h = 0; h < tables_.size(); ++h)
      tables_[h] = profile_->decision_table(h, 0, profile::Statistic::Mean);
  }

  Nanos now() const override { return now_; }
  const profile::Profile& profile() const override { return *profile_; }
  profile::Statistic decision_statistic() const override { return profile::Statistic::Mean; }
  std::uint64_t seed() const override { return 1; }
  sched::WorkerId num_workers() const override { return static_cast<sched::WorkerId>(hw_.size()); }
  sched::HardwareId hardware(sched::WorkerId w) const override { return hw_[w]; }
  sched::WorkerStatus status(sched::WorkerId w) const override { return status_[w]; }
  std::span<const sched::WorkerId> idle_workers() const override { return idle_; }
  Nanos busy_until(sched::WorkerId w) const override { return busy_until_[w]; }
  const std::vector<sched::ModelId>& models(sched::WorkerId) const override { return models_; }
  bool has_model(sched::WorkerId, sched::ModelId m) const override { return m == 0; }
  std::int64_t config(sched::WorkerId, std::string_view, std::int64_t fallback) const override { return fallback; }
  Nanos last_latency(sched::WorkerId) const override { return -1; }
  const sched::QueryQueue& worker_queue(sched::WorkerId) const override { return empty_; }
  sched::Query query(sched::QueryId id) const override { return queries_[id]; }
  Nanos predicted_latency(sched::WorkerId w, sched::ModelId, std::int64_t items) const override {
    return tables_[hw_[w]][items];
  }
  std::int64_t max_batch(sched::WorkerId w, sched::ModelId) const override {
    return static_cast<std::int64_t>(tables_[hw_[w]].size()) - 1;
  }

  void dispatch(sched::WorkerId, sched::ModelId, std::span<const sched::QueryId>) override { ++dispatched; }
  void enqueue(sched::QueryId) override {}
  void enqueue_to_worker(sched::WorkerId, sched::QueryId) override {}
  void drop(sched::QueryId, std::string_view) override {}
  void set_timer(Nanos, std::int64_t) override {}
  sched::WorkerId add_worker(std::string_view, std::span<const sched::ModelId>, Nanos) override { return -1; }
  void remove_worker(sched::WorkerId) override {}
  void load_model(sched::WorkerId, sched::ModelId) override {}
  void unload_model(sched::WorkerId, sched::ModelId) override {}
  void set_config(sched::WorkerId, std::string_view, std::int64_t) override {}

  std::int64_t dispatched = 0;

 private:
  std::shared_ptr<const profile::Profile> profile_;
  Nanos now_ = 0;
  std::vector<sched::HardwareId> hw_;
  std::vector<sched::WorkerStatus> status_;
  std::vector<Nanos> busy_until_;
  std::vector<sched::WorkerId> idle_;
  std::vector<sched::ModelId> models_{0};
  std::deque<sched::QueryId> central_;
  sched::QueryQueue empty_;
  std::vector<sched::Query> queries_;
  std::vector<std::vector<Nanos>> tables_;
};

// The time of one bare n x n assignment solve, for reference (seconds).
double lap_reference_seconds(int n) {
  Rng rng(5, "bench/lap");
  std::vector<double> cost(static_cast<std::size_t>(n * n));
  for (double& c : cost) c = rng.uniform() * 300.0;
  solvers::AssignmentSolver solver;
  const int reps = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) benchmark::DoNotOptimize(solver.solve(cost, n, n).cost);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
}

void BM_Decision20x20(benchmark::State& state, kairos::Variant variant) {
  const int n = static_cast<int>(state.range(0));
  FrozenCluster cluster(rm2_like_profile(), n);
  auto options = kairos::KairosOptions::defaults(variant);
  options.predictor = kairos::PredictorSource::Profile;
  options.window = 1;  // exactly the n oldest queries: an n x n matrix in both variants
  kairos::KairosDistributor kairos(options);
  kairos.on_start(cluster, cluster);
  for (auto _ : state) benchmark::DoNotOptimize(kairos.decide_once(cluster, cluster));

  // The ratios, timed here against a bare solve of the same size.
  const int reps = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) benchmark::DoNotOptimize(kairos.decide_once(cluster, cluster));
  const double decision_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
  const double lap_s = lap_reference_seconds(n);
  state.counters["rows"] = static_cast<double>(kairos.stats().max_rows);
  state.counters["us/decision"] = decision_s * 1e6;
  state.counters["vs_paper_50us"] = decision_s * 1e6 / kPaperBudgetUs;
  state.counters["lap_us"] = lap_s * 1e6;
  state.counters["vs_lap"] = decision_s / lap_s;
}

void BM_DecisionPaper(benchmark::State& state) { BM_Decision20x20(state, kairos::Variant::Paper); }
void BM_DecisionArtifact(benchmark::State& state) { BM_Decision20x20(state, kairos::Variant::Artifact); }

// 20 instances (5 GPU, 5 + 10 CPUs) of the rm2-like profile near saturation.
cluster::RunSpec saturated_spec(std::int64_t queries, double rate) {
  workload::Application app{"a", 1.0, 350 * kNanosPerMilli, std::make_shared<workload::UniformSize>(1, 1000, 10), 0.0};
  cluster::RunSpec spec;
  spec.profile = rm2_like_profile();
  spec.workers = {{"gpu", 5, {}, {}}, {"cpu_a", 5, {}, {}}, {"cpu_b", 10, {}, {}}};
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(rate), std::vector{app}, queries);
  spec.seed = 11;
  return spec;
}

double seconds_of(const cluster::RunSpec& spec, const char* scheduler) {
  auto policy = catalogue::schedulers().make(scheduler);
  const auto start = std::chrono::steady_clock::now();
  auto result = sim::simulate(spec, *policy);
  benchmark::DoNotOptimize(result.queries.finish.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_SimulatedDecision(benchmark::State& state) {
  const auto spec = saturated_spec(20000, static_cast<double>(state.range(0)));
  const double fcfs_s = seconds_of(spec, "fcfs");
  double kairos_s = 0;
  std::int64_t decisions = 0, rows = 0;
  for (auto _ : state) {
    // window=1: at most 20 rows, so a full queue gives the 20 x 20 matrix of the paper's number.
    auto policy = catalogue::schedulers().make("kairos(variant='artifact', window=1)");
    auto* k = dynamic_cast<kairos::KairosDistributor*>(policy.get());
    const auto start = std::chrono::steady_clock::now();
    auto result = sim::simulate(spec, *policy);
    kairos_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(result.queries.finish.data());
    decisions = k->stats().decisions;
    rows = k->stats().total_rows;
  }
  const double per_run = kairos_s / static_cast<double>(state.iterations());
  state.counters["decisions"] = static_cast<double>(decisions);
  state.counters["mean_rows"] = static_cast<double>(rows) / static_cast<double>(decisions);
  state.counters["us/decision"] = (per_run - fcfs_s) / static_cast<double>(decisions) * 1e6;
  state.counters["vs_paper_50us"] = (per_run - fcfs_s) / static_cast<double>(decisions) * 1e6 / kPaperBudgetUs;
  state.counters["run_vs_fcfs"] = per_run / fcfs_s;
}

BENCHMARK(BM_DecisionPaper)->Arg(20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecisionArtifact)->Arg(20)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulatedDecision)->Arg(60)->Arg(90)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace servelab

BENCHMARK_MAIN();
