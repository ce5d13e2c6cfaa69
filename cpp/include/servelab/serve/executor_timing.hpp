// Times batches on one executor outside a serving run: the profiler's measuring loop.
//
// Each batch gets fresh query ids (so the per-query inputs differ from batch to batch, as in a
// run), one item per query unless sizes are given. The loop polls check_interrupt() between
// batches, so Ctrl-C stops it within one batch.
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/serve/executor.hpp"

namespace servelab::serve {

struct BatchTiming {
  Nanos wall = 0;  // run()'s wall time
  Nanos exec = 0;  // the executor's own measure (ExecReport::compute), else `wall`
};

// Runs `sizes` (items per query) as one batch `warmup` times untimed, then `repeats` times timed,
// with `config` as the worker's knobs. Query ids start at `first_query` and advance by the
// batch's query count per run; it is advanced past the ids used. ValueError names `repeats`,
// `warmup` or `sizes` when they are out of range.
std::vector<BatchTiming> time_batches(Executor& executor, const std::vector<std::int32_t>& sizes,
                                      const ConfigKnobs& config, std::int64_t repeats, std::int64_t warmup,
                                      std::int64_t& first_query, Rng& rng);

}  // namespace servelab::serve
