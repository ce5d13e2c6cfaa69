// Times batches on one executor outside a serving run: the profiler's measuring loop.
//
// Each batch gets fresh query ids (so the per-query inputs differ from batch to batch, as in a
// run), one item per query unless sizes are given. The loop polls check_interrupt() between
// batches, so Ctrl-C stops it within one batch.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/serve/executor.hpp"

namespace servelab::serve {

struct BatchTiming {
  Nanos wall = 0;  // run()'s wall time
  Nanos exec = 0;  // the executor's own measure (ExecReport::compute), else `wall`
};

// MemoryError "<given>: a batch of N items for <executor> would need about X ...: lower <field>" unless a
// batch of `items` items (a query id for each, the executor's inputs, and `caller_bytes` per item
// that the caller holds) fits the memory available; an empty `given` names the executor and the
// batch instead. time_batches() checks its own batch with it, before making the batch.
void check_batch_memory(const Executor& executor, std::int64_t items, double caller_bytes, std::string_view given,
                        std::string_view field);

// Runs `sizes` (items per query) as one batch `warmup` times untimed, then `repeats` times timed,
// with `config` as the worker's knobs. Query ids start at `first_query` and advance by the
// batch's query count per run; it is advanced past the ids used. ValueError names `repeats`,
// `warmup` or `sizes` when they are out of range, MemoryError `sizes` when the batch would not fit.
std::vector<BatchTiming> time_batches(Executor& executor, const std::vector<std::int32_t>& sizes,
                                      const ConfigKnobs& config, std::int64_t repeats, std::int64_t warmup,
                                      std::int64_t& first_query, Rng& rng);

}  // namespace servelab::serve
