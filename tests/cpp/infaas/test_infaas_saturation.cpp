// A variant's saturation QPS within an SLO (Sec. 4.2.1's Q_v under constraint (2)): the batches
// whose latency misses the SLO do not count, so a batch-4 CPU variant is no upgrade when only
// its batch-1 latency meets the SLO.
#include <gtest/gtest.h>

#include "servelab/systems/infaas/variant.hpp"

namespace servelab::infaas {
namespace {

Variant batched(std::vector<double> latency_ms, double peak_qps = 0.0) {
  Variant v;
  v.name = "v";
  v.architecture = "resnet50";
  v.task = "classification";
  v.hardware = "cpu";
  v.latency_ms = std::move(latency_ms);
  v.batch_opt = static_cast<std::int32_t>(v.latency_ms.size());
  v.peak_qps = peak_qps;
  return v;
}

TEST(InfaasSaturation, OnlyBatchesMeetingTheSloCount) {
  // ResNet50's PyTorch batch-4 CPU variant: 170 ms at batch 1 .. 560 ms at batch 4.
  const Variant v = batched({170, 300, 430, 560});
  EXPECT_NEAR(v.saturation_qps(), 4000.0 / 560, 1e-9);       // unconstrained: batch 4
  EXPECT_NEAR(v.saturation_qps(255.0), 1000.0 / 170, 1e-9);  // Sec. 6.1's cold SLO: batch 1 only
  EXPECT_NEAR(v.saturation_qps(300.0), 2000.0 / 300, 1e-9);
  EXPECT_NEAR(v.saturation_qps(1000.0), 4000.0 / 560, 1e-9);
  EXPECT_EQ(v.saturation_qps(100.0), 0.0);  // not even batch 1 meets it
}

TEST(InfaasSaturation, AMeasuredPeakStandsWhenBatchOneMeetsTheSlo) {
  const Variant v = batched({15}, 300.0);
  EXPECT_EQ(v.saturation_qps(50.0), 300.0);
  EXPECT_EQ(v.saturation_qps(10.0), 0.0);
}

}  // namespace
}  // namespace servelab::infaas
