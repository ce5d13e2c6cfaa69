// A batch's inputs made ready for the GPU in one pass over them: the sparse indices narrowed to
// int32 (what the embedding kernel reads: half the bytes to send) while each is checked against
// its column's table size, and the dense features copied, into page-locked memory. Big batches
// are split over a few threads: this pass, not the transfer, is what a large batch waits for.
// Plain C++ (the cuda backend's host side), so it is tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <span>

#include "servelab/exec/recsys/batch.hpp"

namespace servelab::exec::recsys {

// Threads for staging `bytes` of input: one below 2 MB, then one per 2 MB up to `max_team`.
int staging_team(std::size_t bytes, int max_team);

// indices_out[b, c] = batch.sparse[b, c] and dense_out = batch.dense, for every row; returns false
// when some index is negative or not below column_limit[c] (its table's rows). The copies are
// made either way; the caller reports the bad index.
bool stage_inputs(const Batch& batch, std::span<const std::uint64_t> column_limit, std::int32_t* indices_out,
                  float* dense_out, int team);

}  // namespace servelab::exec::recsys
