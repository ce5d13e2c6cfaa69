// An MLP's layers on the device and the launches that apply them on a lane's stream: cuBLAS SGEMM
// per layer, then servelab's bias + activation kernel. Inputs and outputs are device pointers with
// a row stride, so a layer can read a column range of one buffer and write into another's (the
// recommendation models' bottom MLP writes straight into the interaction's input).
#pragma once

#include <cstdint>
#include <vector>

#include "device_runtime.cuh"
#include "servelab/exec/mlp.hpp"
#include "servelab/exec/tensor.hpp"

namespace servelab::exec::cuda {

enum class Activation : int { None = 0, Relu = 1, Sigmoid = 2 };

// y[r * ld + c] = act(y[r * ld + c] + bias[c]) for r < rows, c < cols.
void launch_bias_activation(float* y, std::int64_t ld, const float* bias, std::int64_t rows, std::int64_t cols,
                            Activation act, cudaStream_t stream);

class DeviceMlp {
 public:
  // Uploads the weights to the current device. `relu_after_last`: ReLU after the last layer too.
  DeviceMlp(const MlpWeights& weights, bool relu_after_last);

  std::int64_t in_features() const { return layers_.front().in; }
  std::int64_t out_features() const { return layers_.back().out; }
  // Floats of scratch run() needs for `rows` rows (the layers between the first and the last).
  std::size_t scratch_floats(std::int64_t rows) const;

  // out[rows, out_features] (row stride ld_out) = the MLP applied to in[rows, in_features] (row
  // stride ld_in), queued on the lane's stream. `last` is the activation after the last layer when
  // relu_after_last is not set (a sigmoid output folds into the last launch).
  void run(Lane& lane, const float* in, std::int64_t rows, std::int64_t ld_in, float* out, std::int64_t ld_out,
           float* scratch, Activation last = Activation::None) const;

  // Host in, host out: stages the input through the lane's pinned memory and waits for the result.
  Matrix run_host(Lane& lane, const MatrixView& input, const char* what) const;

 private:
  struct Layer {
    DeviceArray<float> weight;  // [out, in] row-major, as torch.nn.Linear stores it
    DeviceArray<float> bias;
    std::int64_t in = 0, out = 0;
  };
  std::vector<Layer> layers_;
  std::int64_t widest_hidden_ = 0;  // the widest layer output before the last: run()'s scratch rows
  bool relu_after_last_ = false;
};

}  // namespace servelab::exec::cuda
