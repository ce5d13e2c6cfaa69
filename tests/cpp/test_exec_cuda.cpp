#include <gtest/gtest.h>

#include <cmath>

#include "servelab/exec/cuda_mlp.hpp"

namespace servelab::exec {
namespace {

TEST(CudaStatus, ReportsRuntimeAndAReasonWhenNoDevice) {
  const CudaStatus status = cuda_status();
  EXPECT_GT(status.runtime_version, 0);
  if (status.device_count == 0) EXPECT_FALSE(status.reason.empty());
}

TEST(CudaMlp, MatchesReference) {
  const CudaStatus status = cuda_status();
  if (status.device_count == 0) GTEST_SKIP() << "no usable CUDA GPU: " << status.reason;
  const auto weights = MlpWeights::random({64, 256, 32, 4}, 11);
  const CudaMlp gpu(weights);
  const ReferenceMlp reference(weights);
  for (const std::int64_t batch : {1, 7, 128}) {
    Matrix x(batch, 64);
    for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = std::sin(static_cast<float>(i));
    const Matrix a = gpu.run(x.view()), b = reference.run(x.view());
    for (std::size_t i = 0; i < a.data.size(); ++i) EXPECT_NEAR(a.data[i], b.data[i], 1e-3f);
  }
}

}  // namespace
}  // namespace servelab::exec
