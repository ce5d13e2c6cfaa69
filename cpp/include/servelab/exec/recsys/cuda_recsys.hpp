// Recommendation models on an NVIDIA GPU: the tables live on the device and servelab's
// embedding-bag kernel gathers every feature of a batch in one launch; the MLPs (and DIEN's GRU
// projections) run on cuBLAS (CudaMlp). The interaction, attention and GRU gates run on the host
// between those stages, sharing the CPU backends' code. RuntimeError without a usable GPU.
#pragma once

#include <memory>

#include "servelab/exec/recsys/model.hpp"

namespace servelab::exec::recsys {

std::shared_ptr<RecsysModel> make_cuda_recsys(Spec spec, Weights weights);

}  // namespace servelab::exec::recsys
