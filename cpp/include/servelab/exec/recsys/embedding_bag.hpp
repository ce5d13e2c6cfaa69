// The embedding-bag gather: sum the table rows a sample looks up. servelab's own kernel (oneDNN
// has no embedding bag); it is memory-bound, so it prefetches the next rows and adds with the
// widest vector unit the CPU has (chosen when the program loads).
#pragma once

#include <cstdint>

namespace servelab::exec::recsys {

struct BagJob {
  const float* table = nullptr;           // [rows, dim] row-major
  const std::int64_t* indices = nullptr;  // sample b's lookups start at indices + b * index_stride
  std::int64_t index_stride = 0;
  int lookups = 0;
  float* out = nullptr;  // sample b's sum goes to out + b * out_stride, dim floats (overwritten)
  std::int64_t out_stride = 0;
};

// Samples [begin, end) of one job; indices must be in range (checked before, once per batch).
void embedding_bag_sum(const BagJob& job, std::int64_t dim, std::int64_t begin, std::int64_t end);

}  // namespace servelab::exec::recsys
