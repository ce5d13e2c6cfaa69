// Kairos's one-shot configuration choice (Sec. 5.2): no online evaluation, only the bounds.
//
// If the `same_base_top` (3) highest-bound configurations all have the same number of base
// instances, pick the highest. Otherwise, among the `top_k` (10) highest, pick the one whose sum of
// squared Euclidean distances (over the counts) to the others is least: the centroid of the
// promising region. Ties go to the higher bound.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "servelab/systems/kairos/upper_bound.hpp"

namespace servelab::kairos {

struct Selection {
  std::size_t index = 0;                // the chosen configuration (index into the table's configs)
  std::string rule;                     // "same_base" or "min_distance_sum"
  std::vector<std::size_t> candidates;  // the top_k configurations considered, highest bound first
  std::vector<double> distance_sums;    // per candidate (empty under "same_base")
};

// ValueError for an empty table ("no feasible configuration") or same_base_top / top_k < 1.
Selection select_config(const BoundTable& table, std::size_t same_base_top = 3, std::size_t top_k = 10);

}  // namespace servelab::kairos
