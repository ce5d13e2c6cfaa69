// The MLP on oneDNN's CPU inner-product primitives (ReLU fused as a post-op).
#pragma once

#include <memory>
#include <string>

#include "servelab/exec/mlp.hpp"

namespace servelab::exec {

class OneDnnMlp final : public Model {
 public:
  // `relu_after_last`: ReLU after the last layer too (fused like the others), for MLPs whose
  // output feeds another layer (the bottom MLP of a recommendation model).
  explicit OneDnnMlp(MlpWeights weights, bool relu_after_last = false);
  ~OneDnnMlp() override;
  Matrix run(const MatrixView& input) const override;
  std::int64_t in_features() const override;
  std::string backend() const override { return "onednn"; }

 private:
  struct Impl;  // keeps dnnl.hpp out of this header
  std::unique_ptr<Impl> impl_;
};

// The oneDNN library version loaded at run time, e.g. "2.6.3".
std::string onednn_runtime_version();

}  // namespace servelab::exec
