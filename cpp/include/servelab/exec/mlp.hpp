// A multi-layer perceptron (Linear, ReLU, ..., Linear), the dense part of the recommendation
// models that Kairos and Hera serve, and the workload the executor backends are checked on.
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/exec/model.hpp"
#include "servelab/exec/tensor.hpp"

namespace servelab::exec {

struct LinearLayer {
  Matrix weight;            // [out_features, in_features], as torch.nn.Linear stores it
  std::vector<float> bias;  // [out_features]
};

// Layers applied in order with ReLU between them (not after the last).
struct MlpWeights {
  std::vector<LinearLayer> layers;

  std::int64_t in_features() const;
  std::int64_t out_features() const;
  // Throws ValueError naming the layer when shapes do not chain or are empty.
  void validate() const;
  // Throws ValueError when `input` does not fit the first layer.
  void check_input(const MatrixView& input) const;
  // Random weights, uniform in +-1/sqrt(in) like torch.nn.Linear's default init.
  static MlpWeights random(const std::vector<std::int64_t>& widths, std::uint64_t seed);
};

// Plain C++ loops: the reference every backend is compared against.
class ReferenceMlp final : public Model {
 public:
  explicit ReferenceMlp(MlpWeights weights);
  Matrix run(const MatrixView& input) const override;
  std::int64_t in_features() const override { return weights_.in_features(); }
  std::string backend() const override { return "reference"; }

 private:
  MlpWeights weights_;
};

}  // namespace servelab::exec
