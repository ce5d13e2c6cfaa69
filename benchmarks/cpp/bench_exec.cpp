// Executor micro-benchmarks: the same MLP through each CPU backend, per batch size.
#include <benchmark/benchmark.h>

#include "servelab/build_config.hpp"
#include "servelab/exec/mlp.hpp"
#if SERVELAB_HAS_ONEDNN
#include "servelab/exec/onednn_mlp.hpp"
#endif

namespace servelab::exec {
namespace {

// The bottom MLP of DLRM-style recommendation models (RM1/RM2 in the Kairos paper use 256-128-64).
const std::vector<std::int64_t> kWidths = {256, 512, 256, 64};

template <typename ModelT>
void run_model(benchmark::State& state) {
  const ModelT model(MlpWeights::random(kWidths, 1));
  Matrix x(state.range(0), kWidths.front());
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>(i % 17) / 17.0f;
  for (auto _ : state) benchmark::DoNotOptimize(model.run(x.view()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(run_model<ReferenceMlp>)->Name("ReferenceMlp")->Arg(1)->Arg(16)->Arg(64);
#if SERVELAB_HAS_ONEDNN
BENCHMARK(run_model<OneDnnMlp>)->Name("OneDnnMlp")->Arg(1)->Arg(16)->Arg(64)->Arg(256);
#endif

}  // namespace
}  // namespace servelab::exec

BENCHMARK_MAIN();
