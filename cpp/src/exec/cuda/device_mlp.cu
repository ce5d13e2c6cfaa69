#include <algorithm>
#include <cstring>

#include "device_mlp.cuh"

namespace servelab::exec::cuda {
namespace {

__global__ void bias_activation_kernel(float* y, long long ld, const float* bias, long long rows, long long cols,
                                       int act) {
  const long long n = rows * cols;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / cols, c = i - r * cols;
    float& v = y[r * ld + c];
    const float x = v + bias[c];
    v = act == static_cast<int>(Activation::Relu)      ? fmaxf(x, 0.0f)
        : act == static_cast<int>(Activation::Sigmoid) ? 1.0f / (1.0f + expf(-x))
                                                       : x;
  }
}

}  // namespace

void launch_bias_activation(float* y, std::int64_t ld, const float* bias, std::int64_t rows, std::int64_t cols,
                            Activation act, cudaStream_t stream) {
  const long long n = rows * cols;
  if (n == 0) return;
  constexpr int threads = 256;
  const auto blocks = static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 4096));
  bias_activation_kernel<<<blocks, threads, 0, stream>>>(y, ld, bias, rows, cols, static_cast<int>(act));
  check(cudaGetLastError(), "bias_activation_kernel launch");
}

DeviceMlp::DeviceMlp(const MlpWeights& weights, bool relu_after_last) : relu_after_last_(relu_after_last) {
  weights.validate();
  for (std::size_t l = 0; l < weights.layers.size(); ++l) {
    const auto& layer = weights.layers[l];
    const std::string what = str("the weights of layer ", l);
    layers_.push_back({DeviceArray<float>(layer.weight.data.data(), layer.weight.data.size(), what),
                       DeviceArray<float>(layer.bias.data(), layer.bias.size(), what), layer.weight.cols,
                       layer.weight.rows});
    if (l + 1 < weights.layers.size()) widest_hidden_ = std::max(widest_hidden_, layer.weight.rows);
  }
}

std::size_t DeviceMlp::scratch_floats(std::int64_t rows) const {
  return static_cast<std::size_t>(2 * rows * widest_hidden_);
}

void DeviceMlp::run(Lane& lane, const float* in, std::int64_t rows, std::int64_t ld_in, float* out, std::int64_t ld_out,
                    float* scratch, Activation last) const {
  if (rows == 0) return;
  float* ping = scratch;
  float* pong = scratch + rows * widest_hidden_;
  const float* x = in;
  std::int64_t ld_x = ld_in;
  const float one = 1.0f, zero = 0.0f;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const bool is_last = l + 1 == layers_.size();
    float* y = is_last ? out : (l % 2 == 0 ? ping : pong);
    const std::int64_t ld_y = is_last ? ld_out : layer.out;
    // Row-major Y[rows, out] = X[rows, in] W^T is column-major Y^T = W X^T, with W^T col-major [in, out].
    check(cublasSgemm(lane.blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(layer.out), static_cast<int>(rows),
                      static_cast<int>(layer.in), &one, layer.weight.get(), static_cast<int>(layer.in), x,
                      static_cast<int>(ld_x), &zero, y, static_cast<int>(ld_y)),
          "cublasSgemm");
    const Activation act = !is_last || relu_after_last_ ? Activation::Relu : last;
    launch_bias_activation(y, ld_y, layer.bias.get(), rows, layer.out, act, lane.stream);
    x = y;
    ld_x = ld_y;
  }
}

Matrix DeviceMlp::run_host(Lane& lane, const MatrixView& input, const char* what) const {
  Matrix result(input.rows, out_features());
  const std::size_t in_count = static_cast<std::size_t>(input.rows * input.cols), out_count = result.data.size();
  ArenaLayout device;
  const std::size_t x_at = device.add<float>(in_count), y_at = device.add<float>(out_count);
  const std::size_t scratch_at = device.add<float>(scratch_floats(input.rows));
  const auto describe = [&] { return str(what, " with batch=", input.rows); };
  char* base = lane.device_memory.reserve(device.bytes(), describe);
  ArenaLayout host;
  const std::size_t hx_at = host.add<float>(in_count), hy_at = host.add<float>(out_count);
  char* pinned = lane.host_memory.reserve(host.bytes(), describe);
  auto* x = reinterpret_cast<float*>(base + x_at);
  auto* y = reinterpret_cast<float*>(base + y_at);
  std::memcpy(pinned + hx_at, input.data, in_count * sizeof(float));
  check(cudaMemcpyAsync(x, pinned + hx_at, in_count * sizeof(float), cudaMemcpyHostToDevice, lane.stream),
        "cudaMemcpyAsync");
  run(lane, x, input.rows, input.cols, y, out_features(), reinterpret_cast<float*>(base + scratch_at));
  check(cudaMemcpyAsync(pinned + hy_at, y, out_count * sizeof(float), cudaMemcpyDeviceToHost, lane.stream),
        "cudaMemcpyAsync");
  lane.synchronize();
  std::memcpy(result.data.data(), pinned + hy_at, out_count * sizeof(float));
  return result;
}

}  // namespace servelab::exec::cuda
