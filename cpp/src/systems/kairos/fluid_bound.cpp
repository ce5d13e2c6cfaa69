// The fluid upper bound (see fluid_bound.hpp for the program and why it is a bound).
#include "servelab/systems/kairos/fluid_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"

namespace servelab::kairos {

namespace lp = solvers::lp;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

SizeClasses size_classes(const workload::SizeDistribution& sizes, std::int64_t max_size, std::int64_t max_classes) {
  if (max_size < 1) throw ValueError(str("max_size=", max_size, " must be >= 1"));
  const std::int32_t r = sizes.round_to();
  const std::int64_t candidates = max_size / r;
  if (candidates > max_classes)
    throw ValueError(str("sizes '", sizes.describe(), "' has up to ", candidates, " distinct sizes up to ", max_size,
                         ", more than max_classes=", max_classes, " (round sizes with round_to, or pass classes)"));
  SizeClasses out;
  double below = 0.0;  // P(size <= previous candidate)
  for (std::int64_t k = 1; k <= candidates; ++k) {
    const std::int64_t s = k * r;
    // The same quadrature nodes for every s and an indicator monotone in s: the CDF never decreases.
    const double cdf = sizes.expectation([s, r](double x) { return workload::to_size(x, r) <= s ? 1.0 : 0.0; });
    if (cdf - below > 1e-15) out.classes.push_back({s, cdf - below});
    below = std::max(below, cdf);
  }
  out.tail = std::max(0.0, 1.0 - below);
  return out;
}

SizeClasses size_classes(std::vector<SizeClass> classes, double tail) {
  if (!(tail >= 0.0 && tail <= 1.0)) throw ValueError(str("tail=", tail, " must be a probability in [0, 1]"));
  double total = tail;
  for (std::size_t k = 0; k < classes.size(); ++k) {
    if (classes[k].size < 1) throw ValueError(str("size class ", k, ": size=", classes[k].size, " must be >= 1"));
    if (!(classes[k].probability >= 0.0 && classes[k].probability <= 1.0))
      throw ValueError(str("size class ", k, " (size ", classes[k].size, "): probability=", classes[k].probability,
                           " must be in [0, 1]"));
    total += classes[k].probability;
  }
  if (std::fabs(total - 1.0) > 1e-6)
    throw ValueError(str("size class probabilities plus tail sum to ", total, ", not 1"));
  std::stable_sort(classes.begin(), classes.end(),
                   [](const SizeClass& a, const SizeClass& b) { return a.size < b.size; });
  for (std::size_t k = 1; k < classes.size(); ++k)
    if (classes[k].size == classes[k - 1].size) throw ValueError(str("size ", classes[k].size, " appears twice"));
  std::erase_if(classes, [](const SizeClass& c) { return c.probability == 0.0; });
  return {std::move(classes), tail};
}

double success_probability(const profile::Profile& profile, std::int32_t hardware, std::int32_t model,
                           std::int64_t size, double seconds) {
  const auto batches = profile.batches(hardware, model);
  if (batches.empty() || size > batches.back() || size < 1)
    throw ValueError(str("size ", size, " is outside the profile of hardware '", profile.hardware()[hardware],
                         "' and model '", profile.models()[model], "'"));
  const auto hi = std::lower_bound(batches.begin(), batches.end(), size);
  const auto& upper = profile.latency_at(hardware, model, *hi);
  const profile::LatencyDistribution* lower = nullptr;
  double weight = 0.0;
  if (*hi != size && hi != batches.begin()) {
    lower = &profile.latency_at(hardware, model, *std::prev(hi));
    weight = static_cast<double>(size - *std::prev(hi)) / static_cast<double>(*hi - *std::prev(hi));
  }
  // The service time for the uniform draw u, as Profile::sample_ns computes it: non-decreasing in
  // u, so {u : time(u) <= seconds} is an interval [0, u*) whose length is the probability.
  const auto time = [&](double u) {
    if (!lower) return upper.draw(u);
    const double v0 = lower->draw(u), v1 = upper.draw(u);
    return v0 + (v1 - v0) * weight;
  };
  if (time(0.0) > seconds) return 0.0;
  if (time(std::nextafter(1.0, 0.0)) <= seconds) return 1.0;
  double ok = 0.0, late = 1.0;
  while (late - ok > 1e-13) {
    const double mid = 0.5 * (ok + late);
    (time(mid) <= seconds ? ok : late) = mid;
  }
  return late;
}

FluidBound fluid_upper_bound(const profile::Profile& profile, std::string_view model,
                             const std::vector<std::pair<std::string, std::int64_t>>& config, double qos_seconds,
                             const SizeClasses& sizes, const FluidOptions& options) {
  if (!(std::isfinite(qos_seconds) && qos_seconds > 0))
    throw ValueError(str("qos=", qos_seconds, " s must be a positive number"));
  if (!(options.violation >= 0.0 && options.violation < 1.0))
    throw ValueError(str("violation=", options.violation, " must be in [0, 1)"));
  const auto m = profile.model_index(model);

  // Counts by type, in the order the configuration first names them.
  std::vector<std::int32_t> hw;
  FluidBound out;
  for (const auto& [name, count] : config) {
    if (count < 0) throw ValueError(str("count of '", name, "'=", count, " must be >= 0"));
    const auto h = profile.hardware_index(name);
    const auto at = std::find(hw.begin(), hw.end(), h);
    if (at == hw.end()) {
      hw.push_back(h);
      out.types.push_back(name);
      out.counts.push_back(count);
    } else {
      out.counts[at - hw.begin()] += count;
    }
  }
  for (std::size_t j = hw.size(); j-- > 0;) {
    if (out.counts[j] == 0) {
      hw.erase(hw.begin() + static_cast<std::ptrdiff_t>(j));
      out.types.erase(out.types.begin() + static_cast<std::ptrdiff_t>(j));
      out.counts.erase(out.counts.begin() + static_cast<std::ptrdiff_t>(j));
    } else if (!profile.has_latency(hw[j], m)) {
      throw ValueError(str("instance type '", out.types[j], "' has no latency for model '", model, "' in the profile"));
    }
  }
  const auto types = hw.size(), classes = sizes.classes.size();
  for (const auto& c : sizes.classes) {
    out.sizes.push_back(c.size);
    out.probabilities.push_back(c.probability);
  }
  out.tail = sizes.tail;

  // Service times and success probabilities of every (class, type) pair.
  out.service_s.assign(classes * types, kNaN);
  out.success.assign(classes * types, 0.0);
  for (std::size_t j = 0; j < types; ++j) {
    const auto max_batch = profile.max_batch(hw[j], m);
    for (std::size_t c = 0; c < classes; ++c) {
      const auto size = out.sizes[c];
      if (size > max_batch) continue;
      const auto k = c * types + j;
      out.service_s[k] = profile.latency(hw[j], m, size, options.statistic);
      out.success[k] = options.eligibility
                           ? (profile.latency(hw[j], m, size, *options.eligibility) <= qos_seconds ? 1.0 : 0.0)
                           : success_probability(profile, hw[j], m, size, qos_seconds);
    }
  }

  lp::Model program(lp::Sense::Maximize);
  const auto lambda = program.add_variable("lambda", 0.0, lp::kInf, lp::VarType::Continuous, 1.0);
  std::vector<std::int32_t> x(classes * types, -1), d(classes);
  for (std::size_t k = 0; k < classes * types; ++k)
    if (out.success[k] > 0.0) x[k] = program.add_variable();  // serving where nothing fits only costs
  for (std::size_t c = 0; c < classes; ++c) d[c] = program.add_variable();

  std::vector<lp::Term> row;
  for (std::size_t c = 0; c < classes; ++c) {  // served or lost: the class's share of lambda
    row = {{d[c], 1.0}, {lambda, -out.probabilities[c]}};
    for (std::size_t j = 0; j < types; ++j)
      if (x[c * types + j] >= 0) row.push_back({x[c * types + j], 1.0});
    program.add_constraint(str("class ", out.sizes[c]), row, 0.0, 0.0);
  }
  for (std::size_t j = 0; j < types; ++j) {  // busy time of the n_j instances
    row.clear();
    for (std::size_t c = 0; c < classes; ++c)
      if (x[c * types + j] >= 0) row.push_back({x[c * types + j], out.service_s[c * types + j]});
    program.add_constraint(str("capacity ", out.types[j]), row, -lp::kInf, static_cast<double>(out.counts[j]));
  }
  row = {{lambda, out.tail - options.violation}};  // misses within the allowed share
  for (std::size_t c = 0; c < classes; ++c) {
    row.push_back({d[c], 1.0});
    for (std::size_t j = 0; j < types; ++j)
      if (x[c * types + j] >= 0 && out.success[c * types + j] < 1.0)
        row.push_back({x[c * types + j], 1.0 - out.success[c * types + j]});
  }
  program.add_constraint("misses", row, -lp::kInf, 0.0);

  const auto solution = lp::solve(program, options.solver);
  if (solution.status != lp::Status::Optimal)
    throw RuntimeError(str("the fluid bound's linear program ended with status '", lp::status_name(solution.status),
                           "': ", solution.message));
  out.solver = solution.solver;
  const auto& v = solution.values;
  out.throughput = std::max(0.0, v[lambda]);
  out.rate.assign(classes * types, 0.0);
  out.type_rate.assign(types, 0.0);
  out.utilisation.assign(types, 0.0);
  out.dropped.assign(classes, 0.0);
  out.miss_rate = out.tail * out.throughput;
  for (std::size_t c = 0; c < classes; ++c) {
    out.dropped[c] = std::max(0.0, v[d[c]]);
    out.miss_rate += out.dropped[c];
    for (std::size_t j = 0; j < types; ++j) {
      const auto k = c * types + j;
      if (x[k] < 0) continue;
      out.rate[k] = std::max(0.0, v[x[k]]);
      out.type_rate[j] += out.rate[k];
      out.utilisation[j] += out.rate[k] * out.service_s[k] / static_cast<double>(out.counts[j]);
      out.miss_rate += out.rate[k] * (1.0 - out.success[k]);
    }
  }
  return out;
}

}  // namespace servelab::kairos
