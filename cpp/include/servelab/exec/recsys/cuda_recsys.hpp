// Recommendation models on an NVIDIA GPU, the whole forward pass on the device: the inputs go up
// once (indices narrowed to int32 and range-checked while staged), servelab's embedding-bag kernel
// gathers every feature of a batch in one launch straight into the interaction's input, cuBLAS
// runs the MLPs and DIEN's GRU projections, servelab's kernels the dot interaction, attention, GRU
// gates and output activations, and only the scores come back. Each concurrent call runs on its own
// lane (stream, cuBLAS handle, grow-only buffers). RuntimeError without a usable GPU.
#pragma once

#include <memory>

#include "servelab/exec/recsys/model.hpp"

namespace servelab::exec::recsys {

std::shared_ptr<RecsysModel> make_cuda_recsys(Spec spec, Weights weights);

}  // namespace servelab::exec::recsys
