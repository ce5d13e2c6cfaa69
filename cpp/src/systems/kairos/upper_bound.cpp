#include "servelab/systems/kairos/upper_bound.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::kairos {
namespace {

bool finite_nonneg(double x) { return std::isfinite(x) && x >= 0; }

// order and rank from the bounds: highest first, equal bounds in enumeration order (Python's
// sorted(..., reverse=True) is stable, and the artifact ranks with it).
void rank_table(BoundTable& table) {
  const std::size_t n = table.bound.size();
  table.order.resize(n);
  std::iota(table.order.begin(), table.order.end(), std::size_t{0});
  std::stable_sort(table.order.begin(), table.order.end(),
                   [&](std::size_t a, std::size_t b) { return table.bound[a] > table.bound[b]; });
  table.rank.resize(n);
  for (std::size_t p = 0; p < n; ++p) table.rank[table.order[p]] = static_cast<std::int64_t>(p + 1);
}

std::string thresholds(const std::map<std::int64_t, double>& all_batch) {
  std::string out;
  for (const auto& [k, v] : all_batch) out += (out.empty() ? "" : ", ") + (k == kNoViolation ? "none" : str(k));
  return out.empty() ? "none" : out;
}

}  // namespace

Aggregation parse_aggregation(std::string_view name) {
  if (name == "paper") return Aggregation::Paper;
  if (name == "artifact") return Aggregation::Artifact;
  throw ValueError(str("formula='", name, "' is not one of 'paper', 'artifact'"));
}

std::string_view aggregation_name(Aggregation aggregation) {
  return aggregation == Aggregation::Paper ? "paper" : "artifact";
}

std::string_view regime_name(Regime regime) {
  switch (regime) {
    case Regime::BaseOnly:
      return "base_only";
    case Regime::BaseBottleneck:
      return "base_bottleneck";
    case Regime::AuxiliaryBottleneck:
      return "auxiliary_bottleneck";
    case Regime::AuxiliaryServesAll:
      return "auxiliary_serves_all";
  }
  return "unknown";
}

void BoundProfile::validate() const {
  if (base.empty()) throw ValueError("base is empty: name the base instance type");
  if (!std::isfinite(base_qps) || base_qps <= 0) {
    throw ValueError(str("qps of the base type '", base, "'=", base_qps, " must be finite and > 0"));
  }
  if (!(base_violation_share >= 0 && base_violation_share <= 1)) {
    throw ValueError(str("base_violation_share=", base_violation_share, " must be in [0, 1]"));
  }
  std::set<std::string> seen{base};
  for (const AuxiliaryProfile& a : auxiliaries) {
    const std::string who = str("auxiliary type '", a.type, "'");
    if (a.type.empty()) throw ValueError("an auxiliary type has an empty name");
    if (!seen.insert(a.type).second) throw ValueError(str(who, " is repeated (or is the base type)"));
    if (!finite_nonneg(a.qps)) throw ValueError(str(who, ": qps=", a.qps, " must be finite and >= 0"));
    if (a.vio_batch < 1) throw ValueError(str(who, ": vio_batch=", a.vio_batch, " must be >= 1"));
    if (!(a.small_ratio >= 0 && a.small_ratio <= 1)) {
      throw ValueError(str(who, ": small_ratio=", a.small_ratio, " must be in [0, 1]"));
    }
    if (!(a.time_ratio >= 0 && a.time_ratio <= 1)) {
      throw ValueError(str(who, ": time_ratio=", a.time_ratio, " must be in [0, 1]"));
    }
    if (a.small_ratio < 1 && a.time_ratio >= 1) {
      throw ValueError(str(who, ": time_ratio=", a.time_ratio, " with small_ratio=", a.small_ratio,
                           " < 1 leaves no base time for the larger queries"));
    }
    for (const auto& [threshold, qps] : a.all_batch) {
      if (threshold < 1) throw ValueError(str(who, ": all_batch threshold ", threshold, " must be >= 1"));
      if (!finite_nonneg(qps)) {
        throw ValueError(str(who, ": all_batch[", threshold, "]=", qps, " must be finite and >= 0"));
      }
    }
  }
}

const AuxiliaryProfile& BoundProfile::find(std::string_view type) const {
  for (const AuxiliaryProfile& a : auxiliaries) {
    if (a.type == type) return a;
  }
  std::string known = str("'", base, "' (base)");
  for (const AuxiliaryProfile& a : auxiliaries) known += str(", '", a.type, "'");
  throw KeyError(str("instance type '", type, "' is not in the bound profile (known: ", known, ")"));
}

UpperBound::UpperBound(const BoundProfile& profile, std::vector<std::string> types, Aggregation aggregation)
    : types_(std::move(types)), aggregation_(aggregation), base_qps_(profile.base_qps) {
  profile.validate();
  if (types_.empty()) throw ValueError("types is empty: give the base type first");
  if (types_[0] != profile.base) {
    throw ValueError(str("types[0]='", types_[0], "' is not the profile's base type '", profile.base, "'"));
  }
  if (types_.size() > 64) throw ValueError(str("types has ", types_.size(), " entries; at most 64 are supported"));
  std::set<std::string> seen;
  aux_.resize(types_.size());
  for (std::size_t k = 0; k < types_.size(); ++k) {
    if (!seen.insert(types_[k]).second) throw ValueError(str("types[", k, "]='", types_[k], "' is repeated"));
    if (k > 0) aux_[k] = profile.find(types_[k]);
  }
}

std::uint64_t UpperBound::mask(std::span<const std::int64_t> counts) const {
  std::uint64_t m = 0;
  for (std::size_t k = 1; k < counts.size() && k < types_.size(); ++k) {
    if (counts[k] != 0) m |= std::uint64_t{1} << (k - 1);
  }
  return m;
}

UpperBound::Aggregate UpperBound::aggregate(std::uint64_t mask) const {
  Aggregate agg;
  agg.aux_qps.assign(types_.size(), 0.0);
  std::size_t chosen = 0;  // Paper: the type with the largest (s, f)
  for (std::size_t k = 1; k < types_.size(); ++k) {
    if (!(mask >> (k - 1) & 1)) continue;
    const AuxiliaryProfile& a = aux_[k];
    if (aggregation_ == Aggregation::Artifact) {
      agg.s = std::max(agg.s, a.vio_batch);
      agg.f = std::max(agg.f, a.small_ratio);
      agg.t = std::max(agg.t, a.time_ratio);
    } else if (chosen == 0 || std::pair(a.vio_batch, a.small_ratio) > std::pair(agg.s, agg.f)) {
      chosen = k;
      agg.s = a.vio_batch;
      agg.f = a.small_ratio;
      agg.t = a.time_ratio;
    }
  }
  for (std::size_t k = 1; k < types_.size(); ++k) {
    if (!(mask >> (k - 1) & 1)) continue;
    const AuxiliaryProfile& a = aux_[k];
    const auto it = a.all_batch.find(agg.s);
    if (it == a.all_batch.end()) {
      throw KeyError(str(
          "all_batch of '", a.type, "' has no entry for batch ",
          agg.s == kNoViolation ? std::string("none") : str(agg.s),
          " (the largest vio_batch of the auxiliary types in the configuration); it has: ", thresholds(a.all_batch)));
    }
    agg.aux_qps[k] = it->second;
  }
  return agg;
}

double UpperBound::bound(std::span<const std::int64_t> counts, Regime* regime) const {
  if (counts.size() != types_.size()) {
    throw ValueError(str("counts has ", counts.size(), " entries but there are ", types_.size(), " types"));
  }
  return bound(counts, aggregate(mask(counts)), regime);
}

double UpperBound::bound(std::span<const std::int64_t> counts, const Aggregate& agg, Regime* regime) const {
  if (counts.size() != types_.size()) {
    throw ValueError(str("counts has ", counts.size(), " entries but there are ", types_.size(), " types"));
  }
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] < 0) throw ValueError(str("counts[", k, "] ('", types_[k], "')=", counts[k], " is negative"));
  }
  Regime r = Regime::BaseOnly;
  double ub = 0;
  // The artifact's operation order (kairos_resource_allocator.py), so its numbers match exactly.
  const double u = static_cast<double>(counts[0]);
  double aux_total = 0.0;
  bool any_aux = false;
  for (std::size_t k = 1; k < counts.size(); ++k) {
    if (counts[k] == 0) continue;
    any_aux = true;
    aux_total += static_cast<double>(counts[k]) * agg.aux_qps[k];
  }
  if (!any_aux) {
    ub = base_qps_ * u;
  } else if (agg.f <= 0) {
    // The auxiliaries may serve no query: only the base counts (Eq. 12 with f' = 0).
    r = Regime::BaseBottleneck;
    ub = base_qps_ * u;
  } else if (agg.f >= 1) {
    // No query needs the base: every instance serves its fill.
    r = Regime::AuxiliaryServesAll;
    ub = aux_total + base_qps_ * u;
  } else {
    const double base_large_qps = base_qps_ * (1 - agg.f) / (1 - agg.t);  // Q_b^{s+}
    const double max_qps = aux_total / agg.f;
    const double large_target = max_qps - aux_total;  // C of Eq. 14
    if (large_target >= base_large_qps * u) {
      r = Regime::BaseBottleneck;
      ub = base_large_qps * u / (1 - agg.f);
    } else {
      r = Regime::AuxiliaryBottleneck;
      const double usage = large_target / (base_large_qps * u);
      ub = max_qps + base_qps_ * u * (1 - usage);
    }
  }
  if (regime) *regime = r;
  return ub;
}

BoundTable upper_bounds(const BoundProfile& profile, const InstanceSpace& space, Aggregation aggregation) {
  const UpperBound ub(profile, space.types, aggregation);
  BoundTable table;
  table.space = space;
  table.aggregation = aggregation;
  table.configs = enumerate_configs(space);
  const std::size_t n = table.configs.size();
  table.bound.resize(n);
  table.regime.resize(n);
  std::unordered_map<std::uint64_t, UpperBound::Aggregate> cache;
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = table.configs.row(i);
    const std::uint64_t m = ub.mask(row);
    auto it = cache.find(m);
    if (it == cache.end()) it = cache.emplace(m, ub.aggregate(m)).first;
    table.bound[i] = ub.bound(row, it->second, &table.regime[i]);
  }
  rank_table(table);
  return table;
}

BoundTable table_from_bounds(const InstanceSpace& space, const std::vector<std::int64_t>& counts,
                             const std::vector<double>& bounds, Aggregation aggregation) {
  BoundTable table;
  table.space = space;
  table.aggregation = aggregation;
  table.configs = enumerate_configs(space);
  const std::size_t n = table.configs.size(), k = space.types.size();
  if (counts.size() != bounds.size() * k) {
    throw ValueError(str("counts has ", counts.size(), " entries for ", bounds.size(), " bounds and ", k, " types"));
  }
  if (bounds.size() != n) {
    throw ValueError(str("there are ", bounds.size(), " bounds but the space has ", n, " configurations"));
  }
  std::map<std::vector<std::int64_t>, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(table.configs.config(i), i);
  table.bound.assign(n, std::nan(""));
  std::vector<bool> seen(n, false);
  for (std::size_t r = 0; r < n; ++r) {
    const std::vector<std::int64_t> row(counts.begin() + static_cast<std::ptrdiff_t>(r * k),
                                        counts.begin() + static_cast<std::ptrdiff_t>((r + 1) * k));
    const auto it = index.find(row);
    if (it == index.end()) {
      throw ValueError(
          str("row ", r, " ", solvers::search::SearchSpace::format(row), " is not a configuration of the space"));
    }
    if (seen[it->second])
      throw ValueError(str("row ", r, " ", solvers::search::SearchSpace::format(row), " is repeated"));
    if (std::isnan(bounds[r]))
      throw ValueError(str("bound of row ", r, " ", solvers::search::SearchSpace::format(row), " is nan"));
    seen[it->second] = true;
    table.bound[it->second] = bounds[r];
  }
  rank_table(table);
  return table;
}

}  // namespace servelab::kairos
