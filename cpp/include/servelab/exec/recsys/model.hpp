// A recommendation model ready to run: the forward pass every backend shares (embedding bags,
// interaction, behaviour-sequence attention, GRU, NCF's GMF branch, output heads), with the two parts that differ
// between backends behind virtual calls: the MLPs (matrix multiplies) and the embedding gather.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "servelab/exec/recsys/batch.hpp"
#include "servelab/exec/recsys/embedding_bag.hpp"
#include "servelab/exec/recsys/inter_op_pool.hpp"
#include "servelab/exec/recsys/spec.hpp"
#include "servelab/exec/recsys/weights.hpp"
#include "servelab/exec/tensor.hpp"

namespace servelab::exec::recsys {

// Where a forward pass spent its time (benchmarks: achieved FLOP/s and gather bandwidth).
struct StageTimes {
  double gather_s = 0;  // the embedding gathers
  double mlp_s = 0;     // the MLPs and GRU projections
  double total_s = 0;   // the whole forward pass, input checks excluded
};

class RecsysModel {
 public:
  // The most threads a batch may ask for (0 = the backend's default).
  static constexpr int kMaxThreads = 1024;

  RecsysModel(Spec spec, Weights weights);
  virtual ~RecsysModel() = default;
  RecsysModel(const RecsysModel&) = delete;
  RecsysModel& operator=(const RecsysModel&) = delete;

  // Scores one batch: [rows, spec().outputs()] (sigmoid per output, a softmax over the classes of
  // DIN/DIEN, or NCF's final ReLU layer). `threads` > 0 asks backends that parallelise for that many threads (the
  // others ignore it). ValueError naming the model and the value for a wrong width or an index out of range, or
  // `threads` outside [0, kMaxThreads]. Thread-safe: concurrent calls are allowed.
  Matrix run(const Batch& batch, int threads = 0) const;
  // The same, adding the time of each stage to `times`.
  Matrix run(const Batch& batch, int threads, StageTimes& times) const;
  // The same, with the independent branches (the bottom MLP, groups of embedding bags) spread over
  // `inter_op` (null or one thread: one after the other). The scores are bit-identical whatever
  // the pool: every branch computes exactly what it computes alone, into its own outputs.
  Matrix run(const Batch& batch, int threads, InterOpPool* inter_op) const;

  const Spec& spec() const { return spec_; }
  const Weights& weights() const { return weights_; }
  virtual std::string backend() const = 0;
  virtual bool supports_threads() const { return false; }

  // The MLP in `slot` applied to `input`, including the ReLU after its last layer when
  // Weights::relu_after_last says so.
  virtual Matrix mlp(std::size_t slot, const MatrixView& input, int threads) const = 0;
  // Runs every bag job for samples [0, rows); false when an index is out of its table's range
  // (embedding_bag_sum checks each as it reads it, and no row outside a table is read).
  virtual bool gather(const std::vector<BagJob>& jobs, std::int64_t rows, int threads) const;

  // ValueError unless the batch fits the model (widths, index ranges); MemoryError when its
  // activations would not fit in memory.
  void check(const Batch& batch) const;
  // True for a backend whose forward() checks the indices in a pass it makes anyway and calls
  // check() for the message when one is out of range; run() then checks only the shapes first.
  // The host forward pass does (the gather checks each index as it reads it), and cuda does while
  // staging them for the device; a backend whose forward() reads indices unchecked says false.
  virtual bool checks_indices_itself() const { return true; }

 protected:
  // The forward pass after the input checks. The default is the shared host pass over mlp() and
  // gather(); a backend that keeps the activations on its device (cuda) runs the whole pass itself.
  // `times` (may be null) gets each stage's time; `inter_op` may be ignored.
  virtual Matrix forward(const Batch& batch, int threads, StageTimes* times, InterOpPool* inter_op) const;
  // Runs body(begin, end) over slices covering samples [0, rows) whose results are independent;
  // `floats_per_row` sizes the work. The default runs one slice on the calling thread; a backend
  // that parallelises (`threads`, as in mlp()) may split it.
  virtual void for_samples(std::int64_t rows, std::int64_t floats_per_row, int threads,
                           const std::function<void(std::int64_t, std::int64_t)>& body) const {
    body(0, rows);
  }

  Spec spec_;
  Weights weights_;

 private:
  void check_threads(int threads) const;
  void check_shapes(const Batch& batch) const;
  void check_indices(const Batch& batch) const;
  void check_before_forward(const Batch& batch) const;
  // The forward pass's independent branches as tasks for an InterOpPool of `team` threads.
  // A group whose gather finds an index out of range clears `in_range`.
  std::vector<std::function<void()>> branches(const std::function<void()>& bottom, const std::vector<BagJob>& jobs,
                                              std::int64_t rows, int threads, int team,
                                              std::atomic<bool>& in_range) const;

  std::vector<std::uint64_t> column_limit_;  // rows of the table each sparse column indexes
};

// Plain C++ loops with double accumulation: the reference the other backends are tested against.
class ReferenceRecsys final : public RecsysModel {
 public:
  ReferenceRecsys(Spec spec, Weights weights);
  std::string backend() const override { return "reference"; }
  Matrix mlp(std::size_t slot, const MatrixView& input, int threads) const override;
};

}  // namespace servelab::exec::recsys
