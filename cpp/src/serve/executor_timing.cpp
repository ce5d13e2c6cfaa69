#include "servelab/serve/executor_timing.hpp"

#include <chrono>
#include <numeric>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"

namespace servelab::serve {

void check_batch_memory(const Executor& executor, std::int64_t items, double caller_bytes, std::string_view given,
                        std::string_view field) {
  const double per_item = static_cast<double>(sizeof(workload::QueryId)) + executor.bytes_per_item() + caller_bytes;
  if (given.empty()) {
    core::check_fits_memory(static_cast<double>(items), per_item,
                            str(executor.describe(), ": a batch of ", items, " items"), field,
                            "its query ids and inputs");
  } else {
    core::check_fits_memory(static_cast<double>(items), per_item, given, field,
                            str("a batch of ", items, " items for ", executor.describe()));
  }
}

std::vector<BatchTiming> time_batches(Executor& executor, const std::vector<std::int32_t>& sizes,
                                      const ConfigKnobs& config, std::int64_t repeats, std::int64_t warmup,
                                      std::int64_t& first_query, Rng& rng) {
  if (repeats < 1) throw ValueError(str("repeats=", repeats, " must be >= 1"));
  if (warmup < 0) throw ValueError(str("warmup=", warmup, " must be >= 0"));
  if (sizes.empty()) throw ValueError("sizes=[] must name at least one query");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1) throw ValueError(str("sizes[", i, "]=", sizes[i], " must be >= 1"));
  }
  if (first_query < 0) throw ValueError(str("first_query=", first_query, " must be >= 0"));
  const std::int64_t items = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  const auto n = static_cast<std::int64_t>(sizes.size());
  // Per item, counting a query id for each (an upper bound when queries have several items).
  check_batch_memory(executor, items, 0, "", "sizes");
  std::vector<workload::QueryId> queries(sizes.size());
  core::check_fits_memory(static_cast<double>(repeats), sizeof(BatchTiming), str("repeats=", repeats), "repeats",
                          "the timings");
  std::vector<BatchTiming> out;
  out.reserve(static_cast<std::size_t>(repeats));
  for (std::int64_t r = 0; r < warmup + repeats; ++r) {
    core::check_interrupt();
    std::iota(queries.begin(), queries.end(), static_cast<workload::QueryId>(first_query));
    first_query += n;
    ExecReport report;
    const auto start = std::chrono::steady_clock::now();
    executor.run(ExecRequest{0, 0, 0, items, queries, config, rng, {}, sizes, &report});
    const Nanos wall = (std::chrono::steady_clock::now() - start).count();
    if (r >= warmup) out.push_back({wall, report.compute >= 0 ? report.compute : wall});
  }
  return out;
}

}  // namespace servelab::serve
