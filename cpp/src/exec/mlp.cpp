#include "servelab/exec/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::exec {

std::int64_t MlpWeights::in_features() const { return layers.empty() ? 0 : layers.front().weight.cols; }
std::int64_t MlpWeights::out_features() const { return layers.empty() ? 0 : layers.back().weight.rows; }

void MlpWeights::validate() const {
  if (layers.empty()) throw ValueError("layers is empty: an MLP needs at least one layer");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& layer = layers[i];
    if (layer.weight.rows <= 0 || layer.weight.cols <= 0) {
      throw ValueError(str("layers[", i, "].weight has shape [", layer.weight.rows, ", ", layer.weight.cols,
                           "]; both dimensions must be positive"));
    }
    if (static_cast<std::int64_t>(layer.weight.data.size()) != layer.weight.rows * layer.weight.cols) {
      throw ValueError(str("layers[", i, "].weight holds ", layer.weight.data.size(), " values, shape says ",
                           layer.weight.rows * layer.weight.cols));
    }
    if (static_cast<std::int64_t>(layer.bias.size()) != layer.weight.rows) {
      throw ValueError(
          str("layers[", i, "].bias has ", layer.bias.size(), " values, expected out_features=", layer.weight.rows));
    }
    if (i > 0 && layer.weight.cols != layers[i - 1].weight.rows) {
      throw ValueError(str("layers[", i, "].weight expects ", layer.weight.cols, " inputs but layers[", i - 1,
                           "] produces ", layers[i - 1].weight.rows));
    }
  }
}

void MlpWeights::check_input(const MatrixView& input) const {
  if (input.rows <= 0) throw ValueError(str("input batch has ", input.rows, " rows; it must be positive"));
  if (input.cols != in_features()) {
    throw ValueError(str("input has ", input.cols, " features, the model expects in_features=", in_features()));
  }
}

MlpWeights MlpWeights::random(const std::vector<std::int64_t>& widths, std::uint64_t seed) {
  if (widths.size() < 2) throw ValueError(str("widths has ", widths.size(), " entries; an MLP needs at least 2"));
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] <= 0) throw ValueError(str("widths[", i, "]=", widths[i], " is not positive"));
  }
  std::mt19937_64 rng(seed);
  MlpWeights w;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(widths[i]));
    std::uniform_real_distribution<float> uniform(-bound, bound);
    LinearLayer layer{Matrix(widths[i + 1], widths[i]), std::vector<float>(static_cast<std::size_t>(widths[i + 1]))};
    for (auto& v : layer.weight.data) v = uniform(rng);
    for (auto& v : layer.bias) v = uniform(rng);
    w.layers.push_back(std::move(layer));
  }
  return w;
}

ReferenceMlp::ReferenceMlp(MlpWeights weights) : weights_(std::move(weights)) { weights_.validate(); }

Matrix ReferenceMlp::run(const MatrixView& input) const {
  weights_.check_input(input);
  Matrix current(input.rows, input.cols);
  std::copy(input.data, input.data + input.rows * input.cols, current.data.begin());
  for (std::size_t l = 0; l < weights_.layers.size(); ++l) {
    const auto& layer = weights_.layers[l];
    const bool relu = l + 1 < weights_.layers.size();
    Matrix next(current.rows, layer.weight.rows);
    for (std::int64_t r = 0; r < current.rows; ++r) {
      for (std::int64_t o = 0; o < layer.weight.rows; ++o) {
        double acc = layer.bias[static_cast<std::size_t>(o)];
        for (std::int64_t i = 0; i < layer.weight.cols; ++i) {
          acc += static_cast<double>(current.at(r, i)) * layer.weight.at(o, i);
        }
        next.at(r, o) = relu ? std::max(0.0f, static_cast<float>(acc)) : static_cast<float>(acc);
      }
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace servelab::exec
