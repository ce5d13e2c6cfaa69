// A loaded model that maps an input batch [batch, in_features] to [batch, out_features].
// Every backend (reference C++, oneDNN, LibTorch, CUDA) implements it; the executors of the
// serving loop run batches through this interface. Header-only so that backend modules built
// as separate extension modules share it without sharing state.
#pragma once

#include <cstdint>
#include <string>

#include "servelab/exec/tensor.hpp"

namespace servelab::exec {

class Model {
 public:
  virtual ~Model() = default;
  // Runs one batch. Thread-safe: concurrent calls on one model are allowed.
  virtual Matrix run(const MatrixView& input) const = 0;
  // Expected input width, or -1 when the backend cannot know it ahead of a call.
  virtual std::int64_t in_features() const = 0;
  virtual std::string backend() const = 0;
};

}  // namespace servelab::exec
