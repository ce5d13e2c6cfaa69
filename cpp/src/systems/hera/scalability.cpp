#include "servelab/systems/hera/scalability.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::hera {

Scalability classify(const ModelTables& tables, double threshold) {
  if (!(threshold > 0 && threshold <= 2) || !std::isfinite(threshold))
    throw ValueError(str("threshold=", threshold, " must be in (0, 2]"));
  const double isolated = tables.isolated_qps();
  if (tables.max_workers < 1 || !(isolated > 0))
    throw ValueError(str("model '", tables.name, "': no worker count meets its SLA on this node (max_workers=",
                         tables.max_workers, ", isolated QPS=", isolated, ")"));
  Scalability s;
  const int all = tables.cores;
  const int quarter = std::max(1, all / 4);
  // Beyond max_workers the curve is flat: those workers cannot be spawned.
  auto qps = [&](int w) { return tables.at(std::min(w, tables.max_workers), tables.ways); };
  const double top = qps(all);
  s.slope = (top - qps(all - quarter)) / (top * quarter / all);
  s.high = s.slope >= threshold;
  const double per_worker = isolated / tables.max_workers;
  int w = tables.max_workers;
  while (w > 1 && qps(w) - qps(w - 1) < threshold * per_worker) --w;
  s.useful_workers = w;
  return s;
}

int find_number_of_workers(const ModelTables& tables, int ways, double traffic_qps, int limit) {
  limit = std::min(limit, tables.max_workers);
  if (limit < 1) return 0;
  for (int w = 1; w <= limit; ++w)
    if (tables.at(w, ways) >= traffic_qps) return w;
  return limit;
}

}  // namespace servelab::hera
