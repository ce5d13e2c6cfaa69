#include "servelab/exec/recsys/embedding_bag.hpp"

#include <algorithm>
#include <cstring>

namespace servelab::exec::recsys {
namespace {

// Cache lines requested ahead of the row being added. The rows of a big table are random DRAM
// reads, so the loop is latency-bound unless many are in flight: about 256 lines measured best
// (128 rows of 32 floats, 64 of 64) on a Zen 4 core with huge pages. The cursor runs across samples
// too, which matters for the one-lookup features of Wide&Deep, MT-WnD and DIEN.
constexpr std::int64_t kLinesAhead = 256;

// One job over samples [begin, end). kDim > 0 fixes the width at compile time, so the sums stay in
// vector registers; kDim == 0 takes `dim` at run time and sums in `out`. The prefetch cursor reads
// every index before the row is added, so it checks the range there: one compare per row, and a
// branch per row that is never taken on good input.
template <int kDim>
__attribute__((always_inline)) inline bool bag_job(const BagJob& job, std::int64_t dim_at_run_time, std::int64_t begin,
                                                   std::int64_t end) {
  const std::int64_t dim = kDim > 0 ? kDim : dim_at_run_time;
  const int lookups = job.lookups;
  const float* __restrict table = job.table;
  const auto limit = static_cast<std::uint64_t>(job.table_rows);
  std::uint64_t bad = 0;  // nonzero once an index read by the cursor is out of range
  std::int64_t ahead_sample = begin;
  int ahead_lookup = 0;
  auto prefetch_next = [&] {
    if (ahead_sample >= end) return;
    const std::int64_t index = job.indices[ahead_sample * job.index_stride + ahead_lookup];
    // One unsigned compare covers both ends: a negative index wraps to a huge value. A prefetch
    // of an address outside the table is harmless (it never faults); only the add must not read one.
    bad |= static_cast<std::uint64_t>(static_cast<std::uint64_t>(index) >= limit);
    const float* row = table + index * dim;
    for (std::int64_t c = 0; c < dim; c += 16) __builtin_prefetch(row + c);
    // A row of a width that is no multiple of 16 floats straddles one line more than dim / 16.
    if (dim % 16 != 0) __builtin_prefetch(row + dim - 1);
    if (++ahead_lookup == lookups) {
      ahead_lookup = 0;
      ++ahead_sample;
    }
  };
  const std::int64_t rows_ahead = std::max<std::int64_t>(8, kLinesAhead * 16 / std::max<std::int64_t>(dim, 1));
  for (std::int64_t i = 0; i < rows_ahead; ++i) prefetch_next();

  for (std::int64_t b = begin; b < end; ++b) {
    const std::int64_t* idx = job.indices + b * job.index_stride;
    float* __restrict out = job.out + b * job.out_stride;
    if constexpr (kDim > 0) {
      float acc[kDim] = {};
      for (int l = 0; l < lookups; ++l) {
        prefetch_next();  // the cursor is past idx[l] now, so idx[l] has been checked
        if (bad != 0) [[unlikely]]
          return false;
        const float* __restrict row = table + idx[l] * kDim;
        for (int c = 0; c < kDim; ++c) acc[c] += row[c];
      }
      std::memcpy(out, acc, sizeof(acc));
    } else {
      std::memset(out, 0, static_cast<std::size_t>(dim) * sizeof(float));
      for (int l = 0; l < lookups; ++l) {
        prefetch_next();
        if (bad != 0) [[unlikely]]
          return false;
        const float* __restrict row = table + idx[l] * dim;
        for (std::int64_t c = 0; c < dim; ++c) out[c] += row[c];
      }
    }
  }
  return true;
}

// Compiled for AVX-512, AVX2 and baseline x86-64; the loader picks the best the CPU supports
// (GCC function multi-versioning), so the wheel stays portable. Not under ThreadSanitizer, whose
// instrumented resolver would run before the sanitizer's runtime is up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
bool bag_dispatch(const BagJob& job, std::int64_t dim, std::int64_t begin, std::int64_t end) {
  switch (dim) {
    case 16:
      return bag_job<16>(job, dim, begin, end);
    case 32:
      return bag_job<32>(job, dim, begin, end);
    case 64:
      return bag_job<64>(job, dim, begin, end);
    case 128:
      return bag_job<128>(job, dim, begin, end);
    default:
      return bag_job<0>(job, dim, begin, end);
  }
}

}  // namespace

bool embedding_bag_sum(const BagJob& job, std::int64_t dim, std::int64_t begin, std::int64_t end) {
  return bag_dispatch(job, dim, begin, end);
}

}  // namespace servelab::exec::recsys
