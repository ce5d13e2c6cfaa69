#include <omp.h>

#include <algorithm>
#include <utility>

#include "servelab/core/interrupt.hpp"
#include "servelab/exec/onednn_mlp.hpp"
#include "servelab/exec/recsys/onednn_recsys.hpp"

namespace servelab::exec::recsys {
namespace {

class OneDnnRecsys final : public RecsysModel {
 public:
  OneDnnRecsys(Spec spec, Weights weights) : RecsysModel(std::move(spec), std::move(weights)) {
    for (std::size_t slot = 0; slot < weights_.mlps.size(); ++slot) {
      const auto& mlp = weights_.mlps[slot];
      mlps_.push_back(mlp.layers.empty() ? nullptr
                                         : std::make_unique<OneDnnMlp>(mlp, Weights::relu_after_last(spec_, slot)));
    }
  }

  std::string backend() const override { return "onednn"; }
  bool supports_threads() const override { return true; }

  Matrix mlp(std::size_t slot, const MatrixView& input, int threads) const override {
    // oneDNN's CPU primitives run on OpenMP; the thread count is a per-calling-thread setting.
    if (threads > 0) omp_set_num_threads(threads);
    return mlps_.at(slot)->run(input);
  }

  void gather(const std::vector<BagJob>& jobs, std::int64_t rows, int threads) const override {
    const int team = threads > 0 ? threads : omp_get_max_threads();
    // Each thread takes a contiguous slice of the samples through every job, so one sample's
    // output row stays in one core's cache.
    const std::int64_t dim = spec_.dim;
    if (team <= 1 || rows < 4) {
      for (const auto& job : jobs) embedding_bag_sum(job, dim, 0, rows);
      return;
    }
#pragma omp parallel num_threads(team)
    {
      const std::int64_t n = omp_get_num_threads(), t = omp_get_thread_num();
      const std::int64_t begin = rows * t / n, end = rows * (t + 1) / n;
      for (const auto& job : jobs) embedding_bag_sum(job, dim, begin, end);
    }
  }

 private:
  std::vector<std::unique_ptr<OneDnnMlp>> mlps_;  // by MlpSlot; null for unused slots
};

}  // namespace

std::shared_ptr<RecsysModel> make_onednn_recsys(Spec spec, Weights weights) {
  return std::make_shared<OneDnnRecsys>(std::move(spec), std::move(weights));
}

}  // namespace servelab::exec::recsys
