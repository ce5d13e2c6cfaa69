#include "servelab/systems/kairos/selection.hpp"

#include <algorithm>

#include "servelab/core/errors.hpp"

namespace servelab::kairos {

Selection select_config(const BoundTable& table, std::size_t same_base_top, std::size_t top_k) {
  if (table.order.empty()) throw ValueError("the bound table is empty: no feasible configuration to select");
  if (same_base_top < 1) throw ValueError(str("same_base_top=", same_base_top, " must be >= 1"));
  if (top_k < 1) throw ValueError(str("top_k=", top_k, " must be >= 1"));
  const ConfigTable& configs = table.configs;
  Selection sel;
  const std::size_t k = std::min(top_k, table.order.size());
  sel.candidates.assign(table.order.begin(), table.order.begin() + static_cast<std::ptrdiff_t>(k));

  const std::size_t head = std::min(same_base_top, table.order.size());
  const std::int64_t base = configs.count(table.order[0], 0);
  bool same = true;
  for (std::size_t p = 1; p < head; ++p) same = same && configs.count(table.order[p], 0) == base;
  if (same) {
    sel.index = table.order[0];
    sel.rule = "same_base";
    return sel;
  }
  sel.rule = "min_distance_sum";
  sel.distance_sums.assign(k, 0.0);
  for (std::size_t a = 0; a < k; ++a) {
    const auto ra = configs.row(sel.candidates[a]);
    for (std::size_t b = 0; b < k; ++b) {
      const auto rb = configs.row(sel.candidates[b]);
      for (std::size_t d = 0; d < ra.size(); ++d) {
        const double diff = static_cast<double>(ra[d] - rb[d]);
        sel.distance_sums[a] += diff * diff;
      }
    }
  }
  // min_element keeps the first (highest-bound) of equal sums.
  const auto best = std::min_element(sel.distance_sums.begin(), sel.distance_sums.end());
  sel.index = sel.candidates[static_cast<std::size_t>(best - sel.distance_sums.begin())];
  return sel;
}

}  // namespace servelab::kairos
