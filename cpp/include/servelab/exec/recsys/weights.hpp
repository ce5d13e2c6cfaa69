// The parameters of a recommendation model: embedding tables and MLPs, drawn deterministically
// from a seed, and listed by name so that they cross to numpy (and into torch) unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "servelab/core/memory.hpp"
#include "servelab/exec/mlp.hpp"
#include "servelab/exec/recsys/spec.hpp"
#include "servelab/exec/tensor.hpp"

namespace servelab::exec::recsys {

// The model's MLPs, by position in Weights::mlps. The GRU of DIEN is kept as two one-layer MLPs
// (its input and hidden projections, torch.nn.GRU's layout: gates r, z, n), so every backend runs
// it on its matrix-multiply path. kPredict is NCF's final layer over [GMF, tower]. Unused MLPs have
// no layers.
enum MlpSlot : std::size_t { kBottom = 0, kTop = 1, kGruInput = 2, kGruHidden = 3, kPredict = 4, kFirstTask = 5 };

// An embedding table, [rows, cols] row-major. Its memory is cache-line aligned (2 MB aligned and in
// 2 MB pages when large), so each row of a multiple of 16 floats spans whole cache lines.
struct EmbeddingTable {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float, core::RandomReadAllocator<float>> data;

  EmbeddingTable() = default;
  EmbeddingTable(std::int64_t r, std::int64_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c)) {}
};

struct Weights {
  std::vector<EmbeddingTable> tables;  // [rows, dim] each, in Spec::tables order
  std::vector<MlpWeights> mlps;        // indexed by MlpSlot, then one per task head

  // Layer widths of each slot for `spec` (empty for unused slots).
  static std::vector<std::vector<std::int64_t>> mlp_widths(const Spec& spec);
  // Whether slot `slot` applies ReLU after its last layer too (the bottom MLP, the shared top MLP
  // when task heads or prediction layers follow it, and the prediction layers).
  static bool relu_after_last(const Spec& spec, std::size_t slot);
  // Zero weights of the right shapes (to be filled, e.g. from numpy arrays).
  static Weights zeros(const Spec& spec);
  // Uniform weights from a counter-based hash of (seed, tensor name, element), so a table of any
  // size is drawn fast and the same seed gives the same model: Linear layers in +-1/sqrt(fan_in)
  // (torch.nn.Linear's range), embeddings in +-1/sqrt(dim) whatever the table's scale.
  static Weights random(const Spec& spec, std::uint64_t seed);

  // ValueError naming the model and the tensor when a shape does not match `spec`.
  void validate(const Spec& spec) const;

  // Every tensor with its export name ("tables.3", "bottom.0.weight", "top.2.bias",
  // "task1.0.weight", "predict.0.weight", "gru.weight_ih", ...), its shape and its data.
  struct Named {
    std::string name;
    std::vector<std::int64_t> shape;
    float* data;
    std::size_t size;
  };
  std::vector<Named> named();
};

}  // namespace servelab::exec::recsys
