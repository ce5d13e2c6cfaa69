#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/exec/cuda_mlp.hpp"

namespace servelab::exec {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw RuntimeError(str(what, " failed: ", cudaGetErrorString(status)));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw RuntimeError(str(what, " failed: ", cublasGetStatusString(status)));
  }
}

// y[r, o] = y[r, o] + bias[o], then ReLU if asked; y is [rows, cols] row-major.
__global__ void add_bias_kernel(float* y, const float* bias, long long rows, long long cols, bool relu) {
  const long long n = rows * cols;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = y[i] + bias[i % cols];
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
}

// Device buffer owned by RAII.
struct DeviceBuffer {
  float* ptr = nullptr;
  explicit DeviceBuffer(std::size_t count) { check(cudaMalloc(&ptr, count * sizeof(float)), "cudaMalloc"); }
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr(std::exchange(other.ptr, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr, other.ptr);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
};

DeviceBuffer upload(const std::vector<float>& host) {
  DeviceBuffer buffer(host.size());
  check(cudaMemcpy(buffer.ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  return buffer;
}

}  // namespace

CudaStatus cuda_status() {
  CudaStatus status;
  cudaRuntimeGetVersion(&status.runtime_version);
  cudaDriverGetVersion(&status.driver_version);  // leaves 0 when no driver is installed
  const cudaError_t err = cudaGetDeviceCount(&status.device_count);
  if (err != cudaSuccess) {
    status.device_count = 0;
    status.reason = cudaGetErrorString(err);
    cudaGetLastError();  // reset the runtime's last-error state so later calls start clean
    return status;
  }
  if (status.device_count == 0) {
    status.reason = "no CUDA device found";
    return status;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    status.device_name = prop.name;
    status.compute_capability = prop.major * 10 + prop.minor;
  }
  return status;
}

struct CudaMlp::Impl {
  MlpWeights weights;
  int device = 0;
  bool relu_after_last = false;
  cublasHandle_t handle = nullptr;
  std::vector<DeviceBuffer> layer_weights, layer_biases;
  std::mutex mutex;  // one cuBLAS handle: calls are serialised

  ~Impl() {
    if (handle) cublasDestroy(handle);
  }
};

CudaMlp::CudaMlp(MlpWeights weights, int device, bool relu_after_last) : impl_(std::make_unique<Impl>()) {
  weights.validate();
  const CudaStatus status = cuda_status();
  if (status.device_count == 0) throw RuntimeError(str("no usable CUDA device: ", status.reason));
  if (device < 0 || device >= status.device_count) {
    throw ValueError(str("device=", device, " is out of range; ", status.device_count, " CUDA device(s) present"));
  }
  impl_->device = device;
  impl_->relu_after_last = relu_after_last;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cublasCreate(&impl_->handle), "cublasCreate");
  for (const auto& layer : weights.layers) {
    impl_->layer_weights.push_back(upload(layer.weight.data));
    impl_->layer_biases.push_back(upload(layer.bias));
  }
  impl_->weights = std::move(weights);
}

CudaMlp::~CudaMlp() = default;

std::int64_t CudaMlp::in_features() const { return impl_->weights.in_features(); }

Matrix CudaMlp::run(const MatrixView& input) const {
  impl_->weights.check_input(input);
  std::lock_guard lock(impl_->mutex);
  check(cudaSetDevice(impl_->device), "cudaSetDevice");
  const auto& layers = impl_->weights.layers;
  DeviceBuffer current(static_cast<std::size_t>(input.rows * input.cols));
  check(cudaMemcpy(current.ptr, input.data, input.rows * input.cols * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  const float one = 1.0f, zero = 0.0f;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const int out = static_cast<int>(layers[l].weight.rows), in = static_cast<int>(layers[l].weight.cols);
    const int batch = static_cast<int>(input.rows);
    DeviceBuffer next(static_cast<std::size_t>(batch) * out);
    // Row-major Y[batch,out] = X[batch,in] W^T is column-major Y^T = W X^T, with W^T col-major [in,out].
    check(cublasSgemm(impl_->handle, CUBLAS_OP_T, CUBLAS_OP_N, out, batch, in, &one, impl_->layer_weights[l].ptr, in,
                      current.ptr, in, &zero, next.ptr, out),
          "cublasSgemm");
    const long long n = static_cast<long long>(batch) * out;
    const int threads = 256;
    const int blocks = static_cast<int>(std::min<long long>((n + threads - 1) / threads, 65535));
    add_bias_kernel<<<blocks, threads>>>(next.ptr, impl_->layer_biases[l].ptr, batch, out,
                                         l + 1 < layers.size() || impl_->relu_after_last);
    check(cudaGetLastError(), "add_bias_kernel launch");
    current = std::move(next);
  }
  Matrix result(input.rows, layers.back().weight.rows);
  check(cudaMemcpy(result.data.data(), current.ptr, result.data.size() * sizeof(float), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  return result;
}

}  // namespace servelab::exec
