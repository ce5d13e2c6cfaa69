// The "libtorch" estimator backend (estimator_backend.hpp): the same network and FTRL-Proximal step
// as the built-in "eigen" one, in LibTorch tensors (float32, CPU). Built only with LibTorch, into
// servelab._torch, which registers it with the core's table as it loads.
#pragma once

#include <memory>
#include <span>

#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::rrl {

std::unique_ptr<EstimatorBackend> make_torch_estimator(const EstimatorShape& shape, std::span<const float> w0,
                                                       const EstimatorOptions& options);

}  // namespace servelab::rrl
