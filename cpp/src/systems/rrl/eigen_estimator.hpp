// The built-in "eigen" estimator backend (estimator_backend.hpp): the arithmetic in Eigen, float32.
#pragma once

#include <memory>
#include <span>

#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::rrl {

std::unique_ptr<EstimatorBackend> make_eigen_estimator(const EstimatorShape& shape, std::span<const float> w0,
                                                       const EstimatorOptions& options);

}  // namespace servelab::rrl
