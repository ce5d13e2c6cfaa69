// The MLP on an NVIDIA GPU: cuBLAS SGEMM per layer, then a bias(+ReLU) kernel of our own.
// Nothing here touches the CUDA driver until a function is called, so CPU-only machines load
// the module fine and learn from cuda_status() why it is not usable.
#pragma once

#include <memory>
#include <string>

#include "servelab/exec/mlp.hpp"

namespace servelab::exec {

struct CudaStatus {
  int device_count = 0;
  std::string reason;          // why no device is usable; empty when device_count > 0
  int runtime_version = 0;     // e.g. 13000
  int driver_version = 0;      // 0 without a driver
  std::string device_name;     // of device 0
  int compute_capability = 0;  // of device 0, e.g. 90
};

CudaStatus cuda_status();

class CudaMlp final : public Model {
 public:
  // Uploads the weights to `device`. Throws RuntimeError when no usable GPU is present.
  // `relu_after_last`: ReLU after the last layer too (a recommendation model's bottom MLP).
  explicit CudaMlp(MlpWeights weights, int device = 0, bool relu_after_last = false);
  ~CudaMlp() override;
  Matrix run(const MatrixView& input) const override;
  std::int64_t in_features() const override;
  std::string backend() const override { return "cuda"; }

 private:
  struct Impl;  // keeps CUDA headers out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace servelab::exec
