// Dense row-major float32 batches, the data that crosses between executors and Python.
#pragma once

#include <cstdint>
#include <vector>

namespace servelab::exec {

// Non-owning view of a [rows, cols] row-major batch (numpy arrays arrive as views, uncopied).
struct MatrixView {
  const float* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// Owning [rows, cols] row-major batch; handed to numpy without a copy.
struct Matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> data;

  Matrix() = default;
  Matrix(std::int64_t r, std::int64_t c) : rows(r), cols(c), data(static_cast<std::size_t>(r * c)) {}
  MatrixView view() const { return {data.data(), rows, cols}; }
  float& at(std::int64_t r, std::int64_t c) { return data[static_cast<std::size_t>(r * cols + c)]; }
  float at(std::int64_t r, std::int64_t c) const { return data[static_cast<std::size_t>(r * cols + c)]; }
};

}  // namespace servelab::exec
