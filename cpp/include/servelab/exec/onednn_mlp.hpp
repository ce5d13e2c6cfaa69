// The MLP on oneDNN's CPU inner-product primitives (ReLU fused as a post-op).
#pragma once

#include <memory>
#include <string>

#include "servelab/exec/mlp.hpp"

namespace servelab::exec {

class OneDnnMlp final : public Model {
 public:
  explicit OneDnnMlp(MlpWeights weights);
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
