// RAMSIS policy generation (build the MDP, 100 value-iteration sweeps, guarantees) for the
// paper's Table 2 cases: (a) the 9 Pareto image models, FLD D = 100, maximal batching, N = 32;
// (b) 60 synthetic models interpolated on that front; (c) MD with variable batching on (a).
// 60 workers, 2000 QPS, SLO 150 ms. Reads the artifact's latency table from ../shared/data when
// present, else uses a made-up 9-model table of the same shape (the numbers then differ).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "servelab/systems/ramsis/guarantees.hpp"

using namespace servelab;
using namespace servelab::ramsis;

namespace {

const std::vector<std::string> kModels = {"shufflenet_v2_x0_5", "mobilenet_v3_large", "efficientnet_b0",
                                          "efficientnet_b2",    "efficientnet_b3",    "efficientnet_b4",
                                          "efficientnet_v2_s",  "efficientnet_v2_m",  "efficientnet_v2_l"};
const std::vector<double> kAccuracy = {0.57972, 0.73004, 0.77692, 0.80608, 0.82008, 0.83384, 0.84228, 0.85112, 0.85808};

LatencyTable image_table() {
  static const LatencyTable table = [] {
    const auto path =
        std::filesystem::path(__FILE__).parent_path() / "../../../shared/data/ramsis/derived/mdp_latency_table.csv";
    std::ifstream in(path);
    std::vector<std::string> rm;
    std::vector<std::int64_t> rb;
    std::vector<double> rs;
    if (in) {
      std::string line;
      std::getline(in, line);
      while (std::getline(in, line)) {
        std::stringstream ss(line);
        std::string pct, task, model, batch, us;
        std::getline(ss, pct, ',');
        std::getline(ss, task, ',');
        std::getline(ss, model, ',');
        std::getline(ss, batch, ',');
        std::getline(ss, us, ',');
        if (pct != "95" || task != "image_cloud_cpu") continue;
        rm.push_back(model);
        rb.push_back(std::stoll(batch));
        rs.push_back(std::stod(us) * 1e-6);
      }
    } else {
      const double base_ms[9] = {22, 31, 54, 68, 81, 106, 117, 193, 367};
      for (std::size_t m = 0; m < kModels.size(); ++m) {
        for (int b = 1; b <= 32; ++b) {
          rm.push_back(kModels[m]);
          rb.push_back(b);
          rs.push_back(base_ms[m] * (1 + 0.6 * (b - 1)) * 1e-3);
        }
      }
    }
    return LatencyTable::from_rows(kModels, kAccuracy, rm, rb, rs);
  }();
  return table;
}

GenerateOptions options() {
  GenerateOptions o;
  o.mdp.slo = millis_to_nanos(150);
  o.mdp.load_qps = 2000;
  o.mdp.workers = 60;
  o.mdp.max_queue = 32;
  o.mdp.intervals = 100;
  return o;
}

void report(benchmark::State& state, const Generated& g) {
  state.counters["states"] = g.num_states;
  state.counters["pairs"] = static_cast<double>(g.num_pairs);
  state.counters["transitions"] = static_cast<double>(g.num_transitions);
  state.counters["build_s"] = g.build_seconds;
  state.counters["solve_s"] = g.solve_seconds;
  state.counters["evaluate_s"] = g.evaluate_seconds;
  state.counters["accuracy"] = g.guarantees.expected_accuracy;
}

void BM_ImageFld(benchmark::State& state) {
  const LatencyTable table = image_table();
  const GenerateOptions o = options();
  Generated g;
  for (auto _ : state) g = generate_policy(table, o);
  report(state, g);
}
BENCHMARK(BM_ImageFld)->Unit(benchmark::kMillisecond);

void BM_BuildImageFld(benchmark::State& state) {
  const LatencyTable table = image_table();
  const GenerateOptions o = options();
  for (auto _ : state) benchmark::DoNotOptimize(build_mdp(table, o.mdp));
}
BENCHMARK(BM_BuildImageFld)->Unit(benchmark::kMillisecond);

void BM_Synthetic60Fld(benchmark::State& state) {
  const LatencyTable table = image_table().pareto_front().interpolated(0.005);
  const GenerateOptions o = options();
  Generated g;
  for (auto _ : state) g = generate_policy(table, o);
  report(state, g);
  state.counters["models"] = table.num_models();
}
BENCHMARK(BM_Synthetic60Fld)->Unit(benchmark::kMillisecond);

void BM_ImageMdVariable(benchmark::State& state) {
  const LatencyTable table = image_table();
  GenerateOptions o = options();
  o.mdp.discretisation = Discretisation::ModelBased;
  o.mdp.batching = Batching::Variable;
  Generated g;
  for (auto _ : state) g = generate_policy(table, o);
  report(state, g);
}
BENCHMARK(BM_ImageMdVariable)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
