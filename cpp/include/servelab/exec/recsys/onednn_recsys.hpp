// Recommendation models on the CPU with oneDNN: the MLPs (and DIEN's GRU projections) on oneDNN's
// inner-product primitives with fused ReLU, the embedding bags on servelab's vectorised gather,
// both parallelised over OpenMP threads (the `threads` argument of run()).
#pragma once

#include <memory>

#include "servelab/exec/recsys/model.hpp"

namespace servelab::exec::recsys {

std::shared_ptr<RecsysModel> make_onednn_recsys(Spec spec, Weights weights);

}  // namespace servelab::exec::recsys
