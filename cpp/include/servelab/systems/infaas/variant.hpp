// INFaaS model-variants (Sec. 2.1, 3.2): one model architecture compiled for one framework /
// graph optimiser, one batch size and one hardware platform, with what the Variant-Profiler
// records about it (latency by batch, load time, peak memory) and what it costs to keep loaded.
//
// Choices where the paper is silent:
//  - accuracy is a fraction in [0, 1] (servelab's profile convention; Table 8 prints percent);
//  - latency_ms[b - 1] is the latency of a batch of b items, for b = 1 .. batch_opt (a variant
//    optimised for batch B serves batches up to B, as TensorRT engines built for B do);
//  - the saturation throughput Q (Table 2's "Req/s") is peak_qps when the profiler measured it,
//    else max_b b / latency(b) (one instance serving back-to-back batches);
//  - cost_per_s is what one loaded instance costs per second (Table 2's normalised cost, or
//    Sec. 6.2's price per GB/s times the peak memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace servelab::infaas {

struct Variant {
  std::string name;          // unique, e.g. "resnet50_trt_gpu_b8"
  std::string architecture;  // the registered model it derives from, e.g. "resnet50"
  std::string task;          // e.g. "classification"; queries by application search one task
  std::string framework;     // e.g. "tensorrt"
  std::string hardware;      // e.g. "cpu", "gpu", "inferentia"
  std::int32_t batch_opt = 1;
  double accuracy = 0.0;
  std::vector<double> latency_ms;  // by batch 1 .. batch_opt
  double load_s = 0.0;
  double memory_mb = 0.0;
  double cost_per_s = 0.0;
  double peak_qps = 0.0;  // 0: derived from latency_ms

  std::int32_t max_batch() const { return static_cast<std::int32_t>(latency_ms.size()); }
  // The latency of a batch of `batch` items; +infinity beyond max_batch() (it cannot serve it).
  double latency_at(std::int32_t batch) const;
  double saturation_qps() const;
  // The saturation QPS at the batch sizes whose latency meets slo_ms (constraint (2) of
  // Sec. 4.2.1 holds for every batch the instance runs); a measured peak_qps stands as given.
  // 0 when not even batch 1 meets it.
  double saturation_qps(double slo_ms) const;
};

// ValueError naming "variants[index].<field>" and the value for anything unusable.
void validate(const Variant& variant, std::size_t index);

}  // namespace servelab::infaas
