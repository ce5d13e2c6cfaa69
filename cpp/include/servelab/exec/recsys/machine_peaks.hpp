// The machine's own ceilings, measured, so that benchmarks can say what share of them a kernel
// reaches: single-precision FMA throughput of a register-blocked loop (no BLAS involved) and the
// memory bandwidth of a STREAM-like triad, and the rate at which one core can read rows at random
// addresses (what an embedding-bag gather over big tables can reach).
#pragma once

#include <cstdint>

namespace servelab::exec::recsys {

// Peak float32 GFLOP/s of one thread: independent FMA chains on the widest vector unit the CPU
// has (AVX-512, AVX2+FMA, else scalar), run for about `seconds`; best of three.
double measure_peak_gflops(double seconds);
// Triad a[i] = b[i] + s * c[i] over three arrays of `megabytes` MB each (choose well above the last
// cache level), on `threads` threads; GB/s counting 12 bytes per element, as STREAM does; best of `repeats`.
double measure_triad_gbps(double megabytes, int threads, int repeats);
// Rows of `row_bytes` (a multiple of 64, at most 1024) read at uniformly random positions of a
// `megabytes` MB buffer on 2 MB pages and summed, on `threads` threads: GB/s of rows read, best of
// `repeats` and of three loops (the core's own look-ahead alone, and with software prefetches 16 or
// 64 rows ahead). The ceiling of a gather whose rows come from memory: latency-bound by how many misses a
// core keeps in flight, so well below the triad's streaming bandwidth.
double measure_random_rows_gbps(double megabytes, int row_bytes, int threads, int repeats);

}  // namespace servelab::exec::recsys
