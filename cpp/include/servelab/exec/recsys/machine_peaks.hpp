// The machine's own ceilings, measured, so that benchmarks can say what share of them a kernel
// reaches: single-precision FMA throughput of a register-blocked loop (no BLAS involved) and the
// memory bandwidth of a STREAM-like triad.
#pragma once

#include <cstdint>

namespace servelab::exec::recsys {

// Peak float32 GFLOP/s of one thread: independent FMA chains on the widest vector unit the CPU
// has (AVX-512, AVX2+FMA, else scalar), run for about `seconds`; best of three.
double measure_peak_gflops(double seconds);
// Triad a[i] = b[i] + s * c[i] over three arrays of `megabytes` MB each (choose well above the last
// cache level), on `threads` threads; GB/s counting 12 bytes per element, as STREAM does; best of `repeats`.
double measure_triad_gbps(double megabytes, int threads, int repeats);

}  // namespace servelab::exec::recsys
