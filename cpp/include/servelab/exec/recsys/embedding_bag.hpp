// The embedding-bag gather: sum the table rows a sample looks up. servelab's own kernel (oneDNN
// has no embedding bag); it is memory-bound, so it prefetches the next rows and adds with the
// widest vector unit the CPU has (chosen when the program loads).
#pragma once

#include <cstdint>
#include <limits>

namespace servelab::exec::recsys {

struct BagJob {
  const float* table = nullptr;           // [rows, dim] row-major
  const std::int64_t* indices = nullptr;  // sample b's lookups start at indices + b * index_stride
  std::int64_t index_stride = 0;
  int lookups = 0;
  float* out = nullptr;  // sample b's sum goes to out + b * out_stride, dim floats (overwritten)
  std::int64_t out_stride = 0;
  std::int64_t table_rows = std::numeric_limits<std::int64_t>::max();  // valid indices: [0, table_rows)
};

// Samples [begin, end) of one job. Every index is checked against [0, table_rows) as it is first
// read (to prefetch its row, well before the row is added), so the check costs no pass of its own
// over the indices; false, with the sums of [begin, end) unspecified, when one is out of range (no
// row outside the table is ever read).
bool embedding_bag_sum(const BagJob& job, std::int64_t dim, std::int64_t begin, std::int64_t end);

}  // namespace servelab::exec::recsys
