// Kairos's throughput upper bound (Sec. 5.2, Eq. 9-15) for one base type and any number of
// auxiliary types, for every configuration under the budget.
//
// Inputs per type are those of the artifact's allocator_profile.json (see bound_profile.hpp for how
// they are computed from a latency profile, a size distribution and a QoS target):
//   base:      qps        Q_b, one base instance serving the whole query mix;
//   auxiliary: vio_batch  s, the smallest query size the type cannot serve within QoS;
//              small_ratio f, the share of queries the type may serve (sizes below / up to s);
//              time_ratio t, the share of the base's busy time that those queries take, so that
//                         Q_b^{s+} = Q_b (1 - f) / (1 - t) is the base's rate on the larger ones;
//              all_batch  {threshold: Q_a}, one instance's rate on the sizes up to a threshold
//                         (its own s, and the s of the other types: Eq. 14's Q_a^i).
//
// With u base instances, v^i auxiliary instances, A = sum v^i Q_a^i and C = A (1 - f') / f':
//   no auxiliary instance:  u Q_b
//   u Q_b^{s+} <= C:        u Q_b^{s+} / (1 - f')                           (base is the bottleneck)
//   otherwise:              A / f' + (u Q_b^{s+} - C) / (u Q_b^{s+}) u Q_b  (auxiliaries are)
// evaluated with the artifact's operation order, so its numbers are reproduced bit for bit.
// Edge cases the artifact divides by zero on: f' = 0 (the auxiliaries serve nothing) gives u Q_b;
// f' = 1 (they serve everything) gives A + u Q_b.
//
// How the auxiliary types present in a configuration are aggregated (f', t', s'):
//   Paper:    the type with the largest s (ties: largest f) stands for all (Sec. 5.2: "the same
//             QoS-respecting region as the type with maximum s size and f fraction");
//   Artifact: each of s', f', t' is the maximum over the types present, separately
//             (kairos_resource_allocator.py). Both agree when f and t grow with s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/systems/kairos/config_space.hpp"

namespace servelab::kairos {

// vio_batch of a type that meets QoS at every size: all queries are "small" for it.
inline constexpr std::int64_t kNoViolation = std::numeric_limits<std::int64_t>::max();

struct AuxiliaryProfile {
  std::string type;
  double qps = 0.0;                          // all_batch at its own vio_batch (reported, not used by the bound)
  std::int64_t vio_batch = 0;                // >= 1, or kNoViolation
  double small_ratio = 0.0;                  // in [0, 1]
  double time_ratio = 0.0;                   // in [0, 1]
  std::map<std::int64_t, double> all_batch;  // threshold -> qps, finite, >= 0
};

struct BoundProfile {
  std::string base;       // the base type
  double base_qps = 0.0;  // > 0
  std::vector<AuxiliaryProfile> auxiliaries;
  // Share of queries whose latency on the base type exceeds QoS (0 in the artifact): the bound
  // assumes the base serves every query it gets within QoS; reported so callers can see it does not.
  double base_violation_share = 0.0;

  // ValueError naming the type, field and value; KeyError for an unknown type in find().
  void validate() const;
  const AuxiliaryProfile& find(std::string_view type) const;
};

enum class Aggregation { Paper, Artifact };
Aggregation parse_aggregation(std::string_view name);  // "paper" | "artifact"
std::string_view aggregation_name(Aggregation aggregation);

// Which case of Eq. 15 gave the bound.
enum class Regime : std::uint8_t { BaseOnly, BaseBottleneck, AuxiliaryBottleneck, AuxiliaryServesAll };
std::string_view regime_name(Regime regime);

// The bound of every configuration of a space, ranked.
struct BoundTable {
  InstanceSpace space;             // space.types: the columns of configs
  ConfigTable configs;             // enumeration order
  std::vector<double> bound;       // QPS_max per configuration
  std::vector<Regime> regime;      // per configuration (empty for tables of given bounds)
  std::vector<std::size_t> order;  // configuration indices, highest bound first; ties keep enumeration order
  std::vector<std::int64_t> rank;  // per configuration: 1 + its position in order
  Aggregation aggregation = Aggregation::Artifact;
};

// The bound of count vectors over `types` (types[0] = the profile's base), in O(number of types).
class UpperBound {
 public:
  // The auxiliary types present in a configuration, aggregated (f', t', s', Q_a^i at s').
  struct Aggregate {
    double f = 0, t = 0;
    std::int64_t s = 0;
    std::vector<double> aux_qps;  // per type (index 0, the base, unused; absent types 0)
  };

  // KeyError when a type has no entry in the profile; ValueError when types[0] is not its base,
  // when a type is repeated or when there are more than 63 auxiliary types.
  UpperBound(const BoundProfile& profile, std::vector<std::string> types, Aggregation aggregation);

  // Bit k-1 set: auxiliary type k present. KeyError when a present type has no all_batch entry at
  // the aggregated s' (naming the type, the threshold and the thresholds it has).
  Aggregate aggregate(std::uint64_t mask) const;
  std::uint64_t mask(std::span<const std::int64_t> counts) const;
  // ValueError when counts has the wrong length or a negative count.
  double bound(std::span<const std::int64_t> counts, Regime* regime = nullptr) const;
  // The same with the aggregate of mask(counts) already computed.
  double bound(std::span<const std::int64_t> counts, const Aggregate& aggregate, Regime* regime = nullptr) const;
  const std::vector<std::string>& types() const { return types_; }

 private:
  std::vector<std::string> types_;
  Aggregation aggregation_;
  double base_qps_;
  std::vector<AuxiliaryProfile> aux_;  // copies, per type (index 0, the base, unused)
};

// Bounds and ranks every configuration of the space. ValueError for a bad space or profile.
BoundTable upper_bounds(const BoundProfile& profile, const InstanceSpace& space,
                        Aggregation aggregation = Aggregation::Artifact);

// A table of given bounds (another bound, or edited ones) over a space: `counts` (row-major, one row
// per configuration) must list every configuration of the space exactly once, in any order; the
// table is in enumeration order and ranked as upper_bounds() ranks. ValueError otherwise, or for a
// NaN bound.
BoundTable table_from_bounds(const InstanceSpace& space, const std::vector<std::int64_t>& counts,
                             const std::vector<double>& bounds, Aggregation aggregation = Aggregation::Artifact);

}  // namespace servelab::kairos
