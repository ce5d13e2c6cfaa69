#include <optional>
#include <utility>

#include "device_mlp.cuh"
#include "servelab/core/errors.hpp"
#include "servelab/exec/cuda_mlp.hpp"

namespace servelab::exec {

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
  MlpWeights weights;  // kept for the input checks
  std::optional<cuda::DeviceMlp> mlp;
  std::optional<cuda::LanePool> lanes;  // one stream and cuBLAS handle per concurrent call
};

CudaMlp::CudaMlp(MlpWeights weights, int device, bool relu_after_last) : impl_(std::make_unique<Impl>()) {
  weights.validate();
  const CudaStatus status = cuda_status();
  if (status.device_count == 0) throw RuntimeError(str("no usable CUDA device: ", status.reason));
  if (device < 0 || device >= status.device_count) {
    throw ValueError(str("device=", device, " is out of range; ", status.device_count, " CUDA device(s) present"));
  }
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  impl_->mlp.emplace(weights, relu_after_last);
  impl_->lanes.emplace(device);
  impl_->weights = std::move(weights);
}

CudaMlp::~CudaMlp() = default;

std::int64_t CudaMlp::in_features() const { return impl_->weights.in_features(); }

Matrix CudaMlp::run(const MatrixView& input) const {
  impl_->weights.check_input(input);
  auto lane = impl_->lanes->acquire();
  return impl_->mlp->run_host(*lane, input, "CudaMlp");
}

}  // namespace servelab::exec
