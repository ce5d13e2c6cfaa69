// A batch of recommendation queries: dense features and the sparse indices of every feature.
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/exec/tensor.hpp"

namespace servelab::exec::recsys {

// Non-owning: dense [rows, spec.dense] float32, sparse [rows, spec.lookups_per_sample()] int64
// with the features' columns in Spec::features order.
struct Batch {
  MatrixView dense;
  const std::int64_t* sparse = nullptr;
  std::int64_t sparse_rows = 0;
  std::int64_t sparse_cols = 0;
};

struct Inputs {
  Matrix dense;
  std::vector<std::int64_t> sparse;
  std::int64_t sparse_cols = 0;

  Batch view() const { return {dense.view(), sparse.data(), dense.rows, sparse_cols}; }
};

}  // namespace servelab::exec::recsys
