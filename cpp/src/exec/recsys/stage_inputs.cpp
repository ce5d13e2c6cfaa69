#include "servelab/exec/recsys/stage_inputs.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace servelab::exec::recsys {
namespace {

// One unsigned compare per index covers both ends (a negative index wraps to a huge value); the
// loop has no branch, so it vectorises (AVX-512 and AVX2 clones, chosen when the module loads).
__attribute__((target_clones("avx512f", "avx2", "default"))) bool narrow_rows(const std::int64_t* __restrict src,
                                                                              std::int32_t* __restrict dst,
                                                                              const std::uint64_t* __restrict limit,
                                                                              std::int64_t cols, std::int64_t begin,
                                                                              std::int64_t end) {
  std::uint64_t bad = 0;
  for (std::int64_t b = begin; b < end; ++b) {
    const std::int64_t* row = src + b * cols;
    std::int32_t* out = dst + b * cols;
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto v = static_cast<std::uint64_t>(row[c]);
      bad |= static_cast<std::uint64_t>(v >= limit[c]);
      out[c] = static_cast<std::int32_t>(v);
    }
  }
  return bad == 0;
}

}  // namespace

int staging_team(std::size_t bytes, int max_team) {
  constexpr std::size_t kBytesPerThread = std::size_t{2} << 20;
  return static_cast<int>(
      std::clamp<std::size_t>(bytes / kBytesPerThread, 1, static_cast<std::size_t>(std::max(max_team, 1))));
}

bool stage_inputs(const Batch& batch, std::span<const std::uint64_t> column_limit, std::int32_t* indices_out,
                  float* dense_out, int team) {
  const std::int64_t rows = batch.sparse_rows, cols = batch.sparse_cols, dense_cols = batch.dense.cols;
  std::atomic<bool> in_range = true;
  const auto slice = [&](std::int64_t begin, std::int64_t end) {
    if (!narrow_rows(batch.sparse, indices_out, column_limit.data(), cols, begin, end)) in_range = false;
    std::memcpy(dense_out + begin * dense_cols, batch.dense.data + begin * dense_cols,
                static_cast<std::size_t>((end - begin) * dense_cols) * sizeof(float));
  };
  const std::int64_t parts = std::clamp<std::int64_t>(team, 1, std::max<std::int64_t>(rows, 1));
  {
    std::vector<std::jthread> helpers;
    for (std::int64_t p = 1; p < parts; ++p) helpers.emplace_back(slice, rows * p / parts, rows * (p + 1) / parts);
    slice(0, rows / parts);
  }  // the helpers join here
  return in_range;
}

}  // namespace servelab::exec::recsys
