#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "device_mlp.cuh"
#include "device_runtime.cuh"
#include "recsys_kernels.cuh"
#include "servelab/core/errors.hpp"
#include "servelab/exec/cuda_mlp.hpp"
#include "servelab/exec/recsys/cuda_recsys.hpp"
#include "servelab/exec/recsys/stage_inputs.hpp"

namespace servelab::exec::recsys {
namespace {

using cuda::Activation;
using cuda::ArenaLayout;
using cuda::BagJobOnDevice;
using cuda::DeviceArray;
using cuda::Lane;

// The most threads one call stages its inputs with: a few suffice for the host's memory bandwidth,
// and half the cores are left to the other workers. Found once (glibc reads /sys to count cores).
int max_staging_team() {
  static const int team = std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 2, 1, 8);
  return team;
}

// Device-side stage times for StageTimes, recorded with events only when the caller asks.
class StageClock {
 public:
  StageClock(Lane& lane, StageTimes* times) : lane_(lane), times_(times) {}

  template <typename Work>
  void time(double StageTimes::*field, Work&& work) {
    if (times_ == nullptr) {
      work();
      return;
    }
    cuda::check(cudaEventRecord(lane_.event(next_), lane_.stream), "cudaEventRecord");
    work();
    cuda::check(cudaEventRecord(lane_.event(next_ + 1), lane_.stream), "cudaEventRecord");
    spans_.emplace_back(field, next_);
    next_ += 2;
  }
  // After the stream has been synchronised.
  void collect() {
    for (const auto& [field, first] : spans_) {
      float ms = 0;
      cuda::check(cudaEventElapsedTime(&ms, lane_.event(first), lane_.event(first + 1)), "cudaEventElapsedTime");
      (*times_).*field += ms / 1e3;
    }
  }

 private:
  Lane& lane_;
  StageTimes* times_;
  std::vector<std::pair<double StageTimes::*, std::size_t>> spans_;
  std::size_t next_ = 0;
};

// The whole forward pass on the GPU: inputs go up once, every stage reads and writes device
// buffers carved from the lane's grow-only arena, and only the scores come back.
class CudaRecsys final : public RecsysModel {
 public:
  CudaRecsys(Spec spec, Weights weights) : RecsysModel(std::move(spec), std::move(weights)), lanes_(0) {
    const CudaStatus status = cuda_status();
    if (status.device_count == 0)
      throw RuntimeError(str("recsys model ", spec_.name, ": no usable CUDA device: ", status.reason));
    cuda::check(cudaSetDevice(0), "cudaSetDevice");
    for (std::size_t t = 0; t < weights_.tables.size(); ++t) {
      const auto& table = weights_.tables[t];
      tables_.emplace_back(table.data.data(), table.data.size(),
                           str("recsys model ", spec_.name, ": table '", spec_.tables[t].name, "'"));
    }
    mlps_.resize(weights_.mlps.size());
    for (std::size_t slot = 0; slot < weights_.mlps.size(); ++slot) {
      if (!weights_.mlps[slot].layers.empty())
        mlps_[slot].emplace(weights_.mlps[slot], Weights::relu_after_last(spec_, slot));
    }
    const auto jobs = bag_jobs();
    jobs_ = DeviceArray<BagJobOnDevice>(jobs.data(), jobs.size(), str("recsys model ", spec_.name, ": bag jobs"));
    for (const auto& f : spec_.features) {
      const auto rows = static_cast<std::uint64_t>(spec_.tables[static_cast<std::size_t>(f.table)].rows);
      if (rows > static_cast<std::uint64_t>(INT_MAX)) {
        throw ValueError(str("recsys model ", spec_.name, ": table '",
                             spec_.tables[static_cast<std::size_t>(f.table)].name, "' has ", rows,
                             " rows; the cuda backend indexes tables with int32 (at most ", INT_MAX, ")"));
      }
      column_limit_.insert(column_limit_.end(), static_cast<std::size_t>(f.lookups), rows);
    }
  }

  std::string backend() const override { return "cuda"; }
  bool checks_indices_itself() const override { return true; }

  Matrix mlp(std::size_t slot, const MatrixView& input, int) const override {
    auto lane = lanes_.acquire();
    return mlps_.at(slot).value().run_host(*lane, input, spec_.name.c_str());
  }

 protected:
  Matrix forward(const Batch& batch, int, StageTimes* times, InterOpPool*) const override;

 private:
  // Every gather of a batch, in the host pass's order: pooled features into the interaction's
  // input (target 0: z for cat, the vectors for dot), the sequence's steps into its own buffer
  // (target 1), or NCF's two GMF features into theirs (target 1: a model with a GMF branch has no
  // sequence). Fixed by the spec, so made once.
  std::vector<BagJobOnDevice> bag_jobs() {
    const auto& s = spec_;
    std::vector<BagJobOnDevice> jobs;
    pooled_column_.assign(s.features.size(), -1);
    long long index_column = 0, out_column = s.dense_columns();
    for (std::size_t i = 0; i < s.features.size(); ++i) {
      const auto& f = s.features[i];
      const float* table = tables_[static_cast<std::size_t>(f.table)].get();
      if (s.in_gmf(i)) {
        const long long at = s.gmf[0] == static_cast<int>(i) ? 0 : s.dim;
        jobs.push_back({table, index_column, at, f.lookups, 1});
      } else if (f.sequence) {
        for (int step = 0; step < f.lookups; ++step)
          jobs.push_back({table, index_column + step, static_cast<long long>(step) * s.dim, 1, 1});
      } else {
        pooled_column_[i] = out_column;
        jobs.push_back({table, index_column, out_column, f.lookups, 0});
        out_column += s.dim;
      }
      index_column += f.lookups;
    }
    return jobs;
  }

  const cuda::DeviceMlp& device_mlp(std::size_t slot) const { return mlps_.at(slot).value(); }

  std::vector<DeviceArray<float>> tables_;
  std::vector<std::optional<cuda::DeviceMlp>> mlps_;  // by MlpSlot; empty for unused slots
  DeviceArray<BagJobOnDevice> jobs_;
  std::vector<long long> pooled_column_;     // where each pooled feature's sum lands in z (-1: sequence)
  std::vector<std::uint64_t> column_limit_;  // per column of the sparse input: its table's rows
  mutable cuda::LanePool lanes_;
};

Matrix CudaRecsys::forward(const Batch& batch, int, StageTimes* times, InterOpPool*) const {
  const auto& s = spec_;
  const std::int64_t rows = batch.dense.rows, dim = s.dim;
  const bool dot = s.interaction == Interaction::Dot;
  const int seq = s.sequence_feature();
  const std::int64_t steps = seq >= 0 ? s.features[static_cast<std::size_t>(seq)].lookups : 0;
  const bool gru = seq >= 0 && s.sequence_op == SequenceOp::GruAttention;
  const std::int64_t z_cols = s.interaction_width(), vector_cols = (s.pooled_count() + 1) * dim;
  const std::int64_t top_cols = s.top.back(), tasks = static_cast<std::int64_t>(s.tasks.size());
  const bool gmf = !s.gmf.empty();
  const std::int64_t joined_cols = gmf ? s.predict_in() : 0;
  const std::int64_t out_cols = s.outputs();
  const auto n = [](std::int64_t count) { return static_cast<std::size_t>(count); };

  // This call's buffers in the lane's arena; the inputs first, together, so one copy sends both
  // (the pinned arena mirrors their offsets).
  std::size_t scratch = device_mlp(kTop).scratch_floats(rows);
  if (!s.bottom.empty()) scratch = std::max(scratch, device_mlp(kBottom).scratch_floats(rows));
  for (std::int64_t t = 0; t < tasks; ++t) scratch = std::max(scratch, device_mlp(kFirstTask + t).scratch_floats(rows));
  if (gru) scratch = std::max(scratch, device_mlp(kGruInput).scratch_floats(rows * steps));
  if (gru) scratch = std::max(scratch, device_mlp(kGruHidden).scratch_floats(rows));
  if (gmf) scratch = std::max(scratch, device_mlp(kPredict).scratch_floats(rows));
  ArenaLayout layout;
  const std::size_t sparse_at = layout.add<std::int32_t>(n(rows * batch.sparse_cols));
  const std::size_t dense_at = layout.add<float>(n(rows * s.dense));
  const std::size_t input_bytes = layout.bytes();
  const std::size_t z_at = layout.add<float>(n(rows * z_cols));
  const std::size_t vectors_at = layout.add<float>(dot ? n(rows * vector_cols) : 0);
  const std::size_t sequence_at = layout.add<float>(n(rows * steps * dim));
  const std::size_t xi_at = layout.add<float>(gru ? n(rows * steps * 3 * dim) : 0);
  const std::size_t h_at = layout.add<float>(gru ? n(rows * dim) : 0);
  const std::size_t hh_at = layout.add<float>(gru ? n(rows * 3 * dim) : 0);
  const std::size_t states_at = layout.add<float>(gru ? n(rows * steps * dim) : 0);
  const std::size_t gmf_at = layout.add<float>(gmf ? n(rows * 2 * dim) : 0);
  const std::size_t joined_at = layout.add<float>(n(rows * joined_cols));
  const std::size_t top_at = layout.add<float>(gmf ? 0 : n(rows * top_cols));
  const std::size_t out_at = layout.add<float>(tasks > 0 || gmf ? n(rows * out_cols) : 0);
  const std::size_t scratch_at = layout.add<float>(scratch);

  auto lease = lanes_.acquire();
  Lane& lane = *lease;
  const auto describe = [&] { return str("recsys model ", s.name, " with batch=", rows); };
  char* base = lane.device_memory.reserve(layout.bytes(), describe);
  const std::size_t out_bytes = n(rows * out_cols) * sizeof(float);
  char* pinned = lane.host_memory.reserve(input_bytes + out_bytes, describe);
  char* pinned_out = pinned + input_bytes;
  const auto floats = [base](std::size_t at) { return reinterpret_cast<float*>(base + at); };
  const std::size_t sparse_bytes = n(rows * batch.sparse_cols) * sizeof(std::int32_t);
  const int team = staging_team(sparse_bytes * 2 + n(rows * s.dense) * sizeof(float), max_staging_team());
  if (!stage_inputs(batch, column_limit_, reinterpret_cast<std::int32_t*>(pinned + sparse_at),
                    reinterpret_cast<float*>(pinned + dense_at), team)) {
    check(batch);  // names the first index out of range
    throw ValueError(str(describe(), ": an index is out of range"));
  }
  cuda::check(cudaMemcpyAsync(base, pinned, input_bytes, cudaMemcpyHostToDevice, lane.stream), "cudaMemcpyAsync");
  const auto* sparse = reinterpret_cast<const std::int32_t*>(base + sparse_at);
  float* dense = floats(dense_at);

  StageClock clock(lane, times);
  float* const z = floats(z_at);
  float* const work = floats(scratch_at);
  // The bottom MLP writes straight into the first columns of the interaction's input.
  float* const pooled_into = dot ? floats(vectors_at) : z;
  const std::int64_t pooled_stride = dot ? vector_cols : z_cols;
  if (!s.bottom.empty()) {
    clock.time(&StageTimes::mlp_s,
               [&] { device_mlp(kBottom).run(lane, dense, rows, s.dense, pooled_into, pooled_stride, work); });
  } else if (s.dense_columns() > 0) {
    cuda::check(cudaMemcpy2DAsync(pooled_into, pooled_stride * sizeof(float), dense, s.dense * sizeof(float),
                                  s.dense * sizeof(float), n(rows), cudaMemcpyDeviceToDevice, lane.stream),
                "cudaMemcpy2DAsync");
  }
  float* const sequence = floats(sequence_at);
  clock.time(&StageTimes::gather_s, [&] {
    const cuda::BagTargets targets = gmf ? cuda::BagTargets{{pooled_into, floats(gmf_at)}, {pooled_stride, 2 * dim}}
                                         : cuda::BagTargets{{pooled_into, sequence}, {pooled_stride, steps * dim}};
    cuda::launch_embedding_bags(jobs_.get(), static_cast<int>(jobs_.size()), sparse, batch.sparse_cols, rows,
                                static_cast<int>(dim), targets, lane.stream);
  });
  if (dot) {
    cuda::launch_dot_interaction(floats(vectors_at), s.pooled_count() + 1, static_cast<int>(dim), rows, z, z_cols,
                                 lane.stream);
  }
  if (seq >= 0) {
    const float* states = sequence;
    if (gru) {
      // Input projections of every step in one multiply, then the recurrence step by step.
      float *xi = floats(xi_at), *h = floats(h_at), *hh = floats(hh_at), *gru_states = floats(states_at);
      clock.time(&StageTimes::mlp_s,
                 [&] { device_mlp(kGruInput).run(lane, sequence, rows * steps, dim, xi, 3 * dim, work); });
      cuda::check(cudaMemsetAsync(h, 0, n(rows * dim) * sizeof(float), lane.stream), "cudaMemsetAsync");
      for (std::int64_t step = 0; step < steps; ++step) {
        clock.time(&StageTimes::mlp_s, [&] { device_mlp(kGruHidden).run(lane, h, rows, dim, hh, 3 * dim, work); });
        cuda::launch_gru_step(xi + step * 3 * dim, steps * 3 * dim, hh, h, gru_states + step * dim, steps * dim, rows,
                              static_cast<int>(dim), lane.stream);
      }
      states = gru_states;
    }
    cuda::launch_attention(z + pooled_column_[static_cast<std::size_t>(s.query_feature)], z_cols, states,
                           static_cast<int>(steps), static_cast<int>(dim), rows, z + z_cols - dim, z_cols, lane.stream);
  }

  // The top MLP, then the heads (each writes its column of the output), NCF's prediction layers
  // or the output activation.
  float* const top = floats(top_at);
  float* result = top;
  if (gmf) {
    // The tower writes into [GMF product, tower output]'s last columns, the product its first.
    float* const joined = floats(joined_at);
    clock.time(&StageTimes::mlp_s,
               [&] { device_mlp(kTop).run(lane, z, rows, z_cols, joined + dim, joined_cols, work); });
    cuda::launch_gmf_product(floats(gmf_at), rows, static_cast<int>(dim), joined, joined_cols, lane.stream);
    result = floats(out_at);
    clock.time(&StageTimes::mlp_s,
               [&] { device_mlp(kPredict).run(lane, joined, rows, joined_cols, result, out_cols, work); });
  } else if (tasks > 0) {
    clock.time(&StageTimes::mlp_s, [&] { device_mlp(kTop).run(lane, z, rows, z_cols, top, top_cols, work); });
    result = floats(out_at);
    std::int64_t column = 0;  // each head's sigmoid outputs in its own columns of the output
    for (std::int64_t t = 0; t < tasks; ++t) {
      clock.time(&StageTimes::mlp_s, [&] {
        device_mlp(kFirstTask + t).run(lane, top, rows, top_cols, result + column, out_cols, work, Activation::Sigmoid);
      });
      column += device_mlp(kFirstTask + t).out_features();
    }
  } else {
    const Activation last = top_cols == 1 ? Activation::Sigmoid : Activation::None;
    clock.time(&StageTimes::mlp_s, [&] { device_mlp(kTop).run(lane, z, rows, z_cols, top, top_cols, work, last); });
    if (top_cols > 1) cuda::launch_softmax_rows(top, rows, static_cast<int>(top_cols), lane.stream);
  }
  cuda::check(cudaMemcpyAsync(pinned_out, result, out_bytes, cudaMemcpyDeviceToHost, lane.stream), "cudaMemcpyAsync");
  lane.synchronize();
  clock.collect();
  Matrix scores(rows, out_cols);
  std::memcpy(scores.data.data(), pinned_out, out_bytes);
  return scores;
}

}  // namespace

std::shared_ptr<RecsysModel> make_cuda_recsys(Spec spec, Weights weights) {
  return std::make_shared<CudaRecsys>(std::move(spec), std::move(weights));
}

}  // namespace servelab::exec::recsys
