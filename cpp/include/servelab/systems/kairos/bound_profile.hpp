// The inputs of Kairos's upper bound (the artifact's allocator_profile.json entries), computed from
// a latency profile, a query-size distribution and a QoS target.
//
// With L_k(b) the decision latency (a Profile statistic; the artifact: mean without the largest
// sample) of type k at query size b, and b drawn from the size distribution:
// (which sizes meet QoS is decided with DeriveOptions::qos_statistic, the median by default)
//   base qps        Q_b = 1 / E[L_0(b)]                                 (the base serves the whole mix)
//   vio_batch       s_k: the first size type k cannot serve within QoS (its qos_statistic > QoS)
//   small(b)        Paper: b < s_k (the sizes that meet QoS); Artifact: b <= s_k (the artifact counts
//                   the violating batch itself as small, as its small_ratio shows)
//   small_ratio     f_k = P(small(b))
//   time_ratio      t_k = E[L_0(b) 1{small(b)}] / E[L_0(b)]
//   all_batch[s_j]  P(b <= s_j) / E[L_k(b) 1{b <= s_j}] for the s_j of every auxiliary type (the
//                   Artifact region; Paper uses b < s_j), i.e. one instance's rate on those sizes
//   qps             all_batch at its own s_k.
// Artifact: s_k is the smallest *measured* batch whose latency exceeds QoS; Paper: the smallest
// integer size, latencies interpolated between the measured batches as everywhere in servelab.
// Expectations are exact sums for discrete sizes and the size distribution's own quadrature for
// continuous ones (SizeDistribution::expectation).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "servelab/profile/profile.hpp"
#include "servelab/systems/kairos/upper_bound.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::kairos {

enum class Region { Paper, Artifact };
Region parse_region(std::string_view name);  // "paper" | "artifact"

struct DeriveOptions {
  // The latency that sets the rates (the artifact's distributor estimate: mean without the largest
  // sample) and the one compared with QoS to find vio_batch (the median reproduces every
  // vio_batch of the artifact's allocator_profile.json; the mean misses 4 of 15).
  profile::Statistic statistic = profile::Statistic::MeanWithoutMax;
  profile::Statistic qos_statistic = profile::Statistic::P50;
  Region region = Region::Artifact;
  // Sizes above the largest profiled batch of a type may carry at most this much probability
  // (continuous size distributions have unbounded tails); more is a ValueError.
  double max_tail = 1e-6;
};

// types[0] is the base. KeyError for an unknown type or model; ValueError naming the field for a
// non-positive or non-finite QoS, a (type, model) pair without latencies, sizes beyond a type's
// profile (more than max_tail of the probability), or a QoS the base type misses at every size
// (no configuration can meet it).
BoundProfile derive_bound_profile(const profile::Profile& profile, const std::vector<std::string>& types,
                                  std::string_view model, double qos_seconds, const workload::SizeDistribution& sizes,
                                  const DeriveOptions& options = {});

}  // namespace servelab::kairos
