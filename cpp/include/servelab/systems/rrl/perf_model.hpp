// The parallelism performance model: the service time of a request (CPU) or a batch (GPU) under a
// configuration, used by the simulated tuning experiments and by simulated workers.
//
// CPU (one request using a inter-op and b intra-op threads, k requests in service including it, on
// a machine of C cores):
//   speed-up  S = S_inter(a) * S_intra(b),  S_intra(b) = 1 / ((1 - p) + p / b)           (Amdahl)
//             S_inter(a) = 1 / ((1 - q) + q / min(a, W))  (W: the op graph's width, the most
//             independent ops that can run at once; extra inter-op threads idle)
//   demand    u = k * min(a, W) * b / C  (threads wanting a core per core)
//   slowdown  max(1, u) * (1 + kappa * max(0, u - 1))  (time slicing, plus interference, e.g. cache
//             and memory-bandwidth thrashing and context switches, once threads exceed cores)
//   service   (base_ms / S + sync_ms * (a * b - 1)) * slowdown
// This reproduces the paper's Fig. 3: parallelism helps up to the core count and hurts beyond it.
// Defaults describe an Inception-v3-like model on a 16-core server (400 ms on one thread, 90% of it
// parallel within ops, 40% in independent branches up to 4 wide): the paper's testbed served
// Inception at ~14 requests/s on CPU (Fig. 4). They are meant to be replaced by parameters fitted to
// measurements of a real executor (servelab.rrl.fit_cpu_model).
//
// GPU (a batch of n requests, j batches on the GPU including it):
//   service   (batch_fixed_ms + per_item_ms * n) * (1 + gpu_interference * (j - 1))
// Fixed cost per launch and a per-item cost make larger batches more efficient per item; concurrent
// batch threads overlap only partly (gpu_interference 1: fully serialised, 0: perfect overlap).
// Defaults: an Inception-v3-like model on a GTX 1080 Ti (15 ms + 1.5 ms per image).
//
// Noise: each service time is multiplied by a lognormal factor of mean 1 and coefficient of variation
// noise_cv (0: deterministic), drawn by the caller.
#pragma once

#include <cstdint>
#include <string>

namespace servelab::rrl {

struct CpuModel {
  double cores = 16;            // C
  double base_ms = 400;         // one request alone on one thread
  double intra_fraction = 0.9;  // p
  double inter_fraction = 0.4;  // q
  double op_width = 4;          // W
  double interference = 0.25;   // kappa
  double sync_ms = 0.5;         // per extra thread of a request
  // ValueError naming the field for a non-finite or out-of-range value.
  void validate() const;
  // Service time in ms of one request with `inter` x `intra` threads while `in_service` requests
  // (including it) run.
  double service_ms(std::int64_t inter, std::int64_t intra, std::int64_t in_service) const;
};

struct GpuModel {
  double batch_fixed_ms = 15;
  double per_item_ms = 1.5;
  double interference = 0.7;
  void validate() const;
  double service_ms(std::int64_t batch, std::int64_t concurrent) const;
};

struct PerfModel {
  CpuModel cpu;
  GpuModel gpu;
  double noise_cv = 0.1;
  void validate() const;
};

}  // namespace servelab::rrl
