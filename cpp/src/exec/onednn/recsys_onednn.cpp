#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
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
      std::int64_t macs = 0;
      for (const auto& layer : mlp.layers) macs += layer.weight.rows * layer.weight.cols;
      macs_per_row_.push_back(macs);
    }
  }

  std::string backend() const override { return "onednn"; }
  bool supports_threads() const override { return true; }

  Matrix mlp(std::size_t slot, const MatrixView& input, int threads) const override {
    // oneDNN's CPU primitives run on OpenMP; the thread count is a per-calling-thread setting. A
    // small multiply runs on the calling thread alone: waking a team costs microseconds when the
    // other cores are idle and milliseconds when they are busy (a descheduled team member holds
    // up every layer's barrier), more than splitting saves.
    const int caller = omp_get_max_threads(), team = threads > 0 ? threads : caller;
    const std::int64_t flops = 2 * input.rows * macs_per_row_.at(slot);
    omp_set_num_threads(static_cast<int>(std::clamp<std::int64_t>(flops / kFlopsPerThread, 1, team)));
    struct Restore {
      int threads;
      ~Restore() { omp_set_num_threads(threads); }
    } restore{caller};
    return mlps_.at(slot)->run(input);
  }

  bool gather(const std::vector<BagJob>& jobs, std::int64_t rows, int threads) const override {
    const int team = threads > 0 ? threads : omp_get_max_threads();
    // Each thread takes a contiguous slice of the samples through every job, so one sample's
    // output row stays in one core's cache.
    const std::int64_t dim = spec_.dim;
    const std::int64_t floats = rows * spec_.lookups_per_sample() * dim;
    if (team <= 1 || rows < 4 || floats < 2 * kFloatsPerThread) {
      for (const auto& job : jobs) {
        if (!embedding_bag_sum(job, dim, 0, rows)) return false;
      }
      return true;
    }
    std::atomic<bool> in_range = true;
    const int used = static_cast<int>(std::min<std::int64_t>(team, floats / kFloatsPerThread));
#pragma omp parallel num_threads(used)
    {
      const std::int64_t n = omp_get_num_threads(), t = omp_get_thread_num();
      const std::int64_t begin = rows * t / n, end = rows * (t + 1) / n;
      for (const auto& job : jobs) {
        if (!embedding_bag_sum(job, dim, begin, end)) {
          in_range = false;
          break;
        }
      }
    }
    return in_range;
  }

  void for_samples(std::int64_t rows, std::int64_t floats_per_row, int threads,
                   const std::function<void(std::int64_t, std::int64_t)>& body) const override {
    const int team = threads > 0 ? threads : omp_get_max_threads();
    const std::int64_t floats = rows * floats_per_row;
    if (team <= 1 || rows < 2 || floats < 2 * kFloatsPerThread) {
      body(0, rows);
      return;
    }
    const int used = static_cast<int>(std::min<std::int64_t>({team, rows, floats / kFloatsPerThread}));
    std::exception_ptr failed;  // an exception must not leave the parallel region
    std::mutex mutex;
#pragma omp parallel num_threads(used)
    {
      const std::int64_t n = omp_get_num_threads(), t = omp_get_thread_num();
      try {
        body(rows * t / n, rows * (t + 1) / n);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failed) failed = std::current_exception();
      }
    }
    if (failed) std::rethrow_exception(failed);
  }

 private:
  // Work below which a thread more does not pay: about 15 us of multiply-adds at a core's speed,
  // and 256 kB of table rows gathered.
  static constexpr std::int64_t kFlopsPerThread = 1'000'000;
  static constexpr std::int64_t kFloatsPerThread = 65'536;

  std::vector<std::unique_ptr<OneDnnMlp>> mlps_;  // by MlpSlot; null for unused slots
  std::vector<std::int64_t> macs_per_row_;        // by MlpSlot: multiply-adds per input row
};

}  // namespace

std::shared_ptr<RecsysModel> make_onednn_recsys(Spec spec, Weights weights) {
  return std::make_shared<OneDnnRecsys>(std::move(spec), std::move(weights));
}

}  // namespace servelab::exec::recsys
