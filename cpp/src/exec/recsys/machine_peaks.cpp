#include "servelab/exec/recsys/machine_peaks.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace servelab::exec::recsys {
namespace {

using Clock = std::chrono::steady_clock;
// Independent accumulators: enough to cover FMA latency x FMA ports (4 cycles x 2 ports, with margin).
constexpr int kChains = 12;

// Each function runs `iterations` rounds of kChains vector FMAs and returns a value derived from
// the accumulators so the compiler cannot drop them. FLOPs per round: kChains * lanes * 2.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fma_avx512(std::int64_t iterations) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (std::int64_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  alignas(64) float lanes[16];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm512_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

__attribute__((target("avx2,fma"))) float fma_avx2(std::int64_t iterations) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (std::int64_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  alignas(32) float lanes[8];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_store_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}
#endif

// Sums the rows idx[begin..end) of `data` (row_floats each) into a value the compiler must keep.
// kAhead > 0 adds software prefetches that many rows ahead.
template <int kAhead>
__attribute__((always_inline)) inline float sum_rows(const float* __restrict data, const std::uint32_t* __restrict idx,
                                                     std::size_t begin, std::size_t end, int row_floats) {
  float acc[16] = {};
  for (std::size_t i = begin; i < end; ++i) {
    if constexpr (kAhead > 0) {
      if (i + kAhead < end) {
        const float* next = data + static_cast<std::size_t>(idx[i + kAhead]) * row_floats;
        for (int c = 0; c < row_floats; c += 16) __builtin_prefetch(next + c);
      }
    }
    const float* row = data + static_cast<std::size_t>(idx[i]) * row_floats;
    for (int c = 0; c < row_floats; c += 16) {
      for (int k = 0; k < 16; ++k) acc[k] += row[c + k];
    }
  }
  float sum = 0;
  for (float v : acc) sum += v;
  return sum;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
float read_rows(const float* data, const std::uint32_t* idx, std::size_t begin, std::size_t end, int row_floats,
                int ahead) {
  switch (ahead) {
    case 16:
      return sum_rows<16>(data, idx, begin, end, row_floats);
    case 64:
      return sum_rows<64>(data, idx, begin, end, row_floats);
    default:
      return sum_rows<0>(data, idx, begin, end, row_floats);
  }
}

float fma_scalar(std::int64_t iterations) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = 0.001f * static_cast<float>(i);
  for (std::int64_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * 0.999999f + 1e-7f;
  }
  float sum = 0;
  for (float v : acc) sum += v;
  return sum;
}

}  // namespace

double measure_peak_gflops(double seconds) {
  if (!(seconds > 0.0)) throw ValueError(str("seconds=", seconds, " must be positive"));
  float (*kernel)(std::int64_t) = &fma_scalar;
  int lanes = 1;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    kernel = &fma_avx512;
    lanes = 16;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernel = &fma_avx2;
    lanes = 8;
  }
#endif
  // Calibrate the iteration count to the requested duration, then keep the best of three runs.
  std::int64_t iterations = 1 << 16;
  volatile float sink = 0;
  while (true) {
    const auto start = Clock::now();
    sink = sink + kernel(iterations);
    if (std::chrono::duration<double>(Clock::now() - start).count() > seconds / 10 || iterations > (1LL << 40)) break;
    iterations *= 2;
  }
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    core::check_interrupt();
    const auto start = Clock::now();
    sink = sink + kernel(iterations * 4);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, 2.0 * kChains * lanes * static_cast<double>(iterations * 4) / s / 1e9);
  }
  return best;
}

double measure_triad_gbps(double megabytes, int threads, int repeats) {
  if (!(megabytes > 0.0)) throw ValueError(str("megabytes=", megabytes, " must be positive"));
  if (threads < 1 || threads > 1024) throw ValueError(str("threads=", threads, " must be in [1, 1024]"));
  if (repeats < 1) throw ValueError(str("repeats=", repeats, " must be at least 1"));
  core::check_fits_memory(3.0 * megabytes, 1e6, str("megabytes=", megabytes), "megabytes", "three triad arrays");
  const auto n = static_cast<std::size_t>(megabytes * 1e6 / sizeof(float));
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);  // touched here, so pages are mapped before timing
  const float s = 3.0f;
  auto triad = [&](std::size_t begin, std::size_t end) {
    float* __restrict pa = a.data();
    const float* __restrict pb = b.data();
    const float* __restrict pc = c.data();
    for (std::size_t i = begin; i < end; ++i) pa[i] = pb[i] + s * pc[i];
  };
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    core::check_interrupt();
    const auto start = Clock::now();
    std::vector<std::thread> team;
    for (int t = 1; t < threads; ++t) team.emplace_back(triad, n * t / threads, n * (t + 1) / threads);
    triad(0, n / threads);
    for (auto& th : team) th.join();
    const double sec = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, 12.0 * static_cast<double>(n) / sec / 1e9);
  }
  return best;
}

double measure_random_rows_gbps(double megabytes, int row_bytes, int threads, int repeats) {
  if (!(megabytes > 0.0)) throw ValueError(str("megabytes=", megabytes, " must be positive"));
  if (row_bytes < 64 || row_bytes > 1024 || row_bytes % 64 != 0) {
    throw ValueError(str("row_bytes=", row_bytes, " must be a multiple of 64 in [64, 1024]"));
  }
  if (threads < 1 || threads > 1024) throw ValueError(str("threads=", threads, " must be in [1, 1024]"));
  if (repeats < 1) throw ValueError(str("repeats=", repeats, " must be at least 1"));
  core::check_fits_memory(megabytes, 1e6, str("megabytes=", megabytes), "megabytes", "the random-read buffer");
  const int row_floats = row_bytes / 4;
  const auto rows = static_cast<std::size_t>(megabytes * 1e6 / row_bytes);
  if (rows < 2 || rows > (std::size_t{1} << 32)) {
    throw ValueError(str("megabytes=", megabytes, " gives ", rows, " rows of ", row_bytes, " bytes; 2 to 2^32 rows"));
  }
  // Laid out as the embedding tables are (whole cache lines per row, 2 MB pages), so that this is
  // the ceiling of their gather: with malloc's 16-byte alignment each row would straddle one more line.
  std::vector<float, core::RandomReadAllocator<float>> data(rows * static_cast<std::size_t>(row_floats));
  std::fill(data.begin(), data.end(), 1.0f);  // faults every page in before timing
  // About 64 MB of rows per pass; indices from splitmix64, reduced to the row count.
  const std::size_t reads = std::max<std::size_t>(1 << 16, static_cast<std::size_t>(64e6 / row_bytes));
  std::vector<std::uint32_t> idx(reads);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (auto& i : idx) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    i = static_cast<std::uint32_t>((z ^ (z >> 31)) % rows);
  }
  double best = 0;
  volatile float sink = 0;
  for (int r = 0; r < repeats; ++r) {
    for (const int ahead : {0, 16, 64}) {
      core::check_interrupt();
      const auto start = Clock::now();
      std::vector<float> sums(static_cast<std::size_t>(threads));  // one slot per thread: no shared writes
      const auto part = [&](int t) { return reads * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads); };
      const auto work = [&](int t) {
        sums[static_cast<std::size_t>(t)] = read_rows(data.data(), idx.data(), part(t), part(t + 1), row_floats, ahead);
      };
      std::vector<std::thread> team;
      for (int t = 1; t < threads; ++t) team.emplace_back(work, t);
      work(0);
      for (auto& th : team) th.join();
      const double sec = std::chrono::duration<double>(Clock::now() - start).count();
      best = std::max(best, static_cast<double>(reads) * row_bytes / sec / 1e9);
      for (float v : sums) sink = sink + v;
    }
  }
  return best;
}

}  // namespace servelab::exec::recsys
