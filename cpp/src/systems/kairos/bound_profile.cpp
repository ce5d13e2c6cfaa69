#include "servelab/systems/kairos/bound_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

#include "servelab/core/errors.hpp"

namespace servelab::kairos {
namespace {

struct TypeCurve {
  std::string type;
  std::int32_t hardware = 0;
  std::int64_t max_batch = 0;
  std::vector<double> latency;      // seconds, index b - 1 for size b in [1, max_batch]
  std::vector<double> qos_latency;  // the same with the statistic compared to QoS
  std::int64_t vio_batch = kNoViolation;
};

TypeCurve curve_of(const profile::Profile& p, const std::string& type, std::int32_t model, std::string_view model_name,
                   double qos, const DeriveOptions& options) {
  TypeCurve c;
  c.type = type;
  c.hardware = p.hardware_index(type);
  if (!p.has_latency(c.hardware, model)) {
    throw ValueError(str("the profile has no latency for model '", model_name, "' on instance type '", type, "'"));
  }
  c.max_batch = p.max_batch(c.hardware, model);
  c.latency.resize(static_cast<std::size_t>(c.max_batch));
  c.qos_latency.resize(static_cast<std::size_t>(c.max_batch));
  for (std::int64_t b = 1; b <= c.max_batch; ++b) {
    c.latency[static_cast<std::size_t>(b - 1)] = p.latency(c.hardware, model, b, options.statistic);
    c.qos_latency[static_cast<std::size_t>(b - 1)] = p.latency(c.hardware, model, b, options.qos_statistic);
  }
  if (options.region == Region::Artifact) {
    for (std::int64_t b : p.batches(c.hardware, model)) {
      if (p.latency(c.hardware, model, b, options.qos_statistic) > qos) {
        c.vio_batch = b;
        break;
      }
    }
  } else {
    for (std::int64_t b = 1; b <= c.max_batch; ++b) {
      if (c.qos_latency[static_cast<std::size_t>(b - 1)] > qos) {
        c.vio_batch = b;
        break;
      }
    }
  }
  return c;
}

}  // namespace

Region parse_region(std::string_view name) {
  if (name == "paper") return Region::Paper;
  if (name == "artifact") return Region::Artifact;
  throw ValueError(str("region='", name, "' is not one of 'paper', 'artifact'"));
}

BoundProfile derive_bound_profile(const profile::Profile& profile, const std::vector<std::string>& types,
                                  std::string_view model, double qos_seconds, const workload::SizeDistribution& sizes,
                                  const DeriveOptions& options) {
  if (types.empty()) throw ValueError("types is empty: give the base type first, then the auxiliary types");
  if (!std::isfinite(qos_seconds) || qos_seconds <= 0) {
    throw ValueError(str("qos=", qos_seconds * 1e3, " ms must be finite and > 0"));
  }
  if (!(options.max_tail >= 0 && options.max_tail < 1)) {
    throw ValueError(str("max_tail=", options.max_tail, " must be in [0, 1)"));
  }
  const std::int32_t m = profile.model_index(model);
  std::vector<TypeCurve> curves;
  for (const std::string& t : types) curves.push_back(curve_of(profile, t, m, model, qos_seconds, options));

  // Sizes beyond the shortest profile cannot be priced: they must be (almost) impossible.
  const auto shortest = std::min_element(
      curves.begin(), curves.end(), [](const TypeCurve& a, const TypeCurve& b) { return a.max_batch < b.max_batch; });
  const std::int64_t top = shortest->max_batch;
  const std::int32_t round_to = sizes.round_to();
  const auto expect = [&](const std::function<double(std::int64_t)>& g) {
    return sizes.expectation([&](double x) {
      const std::int64_t b = workload::to_size(x, round_to);
      return b > top ? 0.0 : g(b);
    });
  };
  const double covered = expect([](std::int64_t) { return 1.0; });
  if (!(1 - covered <= options.max_tail)) {
    throw ValueError(str("sizes (", sizes.describe(), ") put probability ", 1 - covered, " on sizes above batch ", top,
                         ", the largest profiled batch of model '", model, "' on '", shortest->type,
                         "' (allowed: max_tail=", options.max_tail, "); profile larger batches or bound the sizes"));
  }
  // Expectations over the sizes the profiles cover, renormalised.
  const auto mean = [&](const std::function<double(std::int64_t)>& g) { return expect(g) / covered; };
  const auto lat = [&](std::size_t k, std::int64_t b) { return curves[k].latency[static_cast<std::size_t>(b - 1)]; };

  const double base_time = mean([&](std::int64_t b) { return lat(0, b); });
  BoundProfile out;
  out.base = types[0];
  out.base_qps = 1.0 / base_time;
  out.base_violation_share = mean(
      [&](std::int64_t b) { return curves[0].qos_latency[static_cast<std::size_t>(b - 1)] > qos_seconds ? 1.0 : 0.0; });
  if (out.base_violation_share >= 1 - 1e-12) {
    throw ValueError(str("qos=", qos_seconds * 1e3, " ms is below the latency of model '", model,
                         "' on the base type '", types[0], "' at every query size (", curves[0].qos_latency[0] * 1e3,
                         " ms at size 1): no configuration can meet it"));
  }
  // small(b) for a threshold s: the sizes counted as servable by a type whose vio_batch is s.
  const bool inclusive = options.region == Region::Artifact;
  const auto small = [inclusive](std::int64_t b, std::int64_t s) { return inclusive ? b <= s : b < s; };
  for (std::size_t k = 1; k < curves.size(); ++k) {
    AuxiliaryProfile a;
    a.type = curves[k].type;
    a.vio_batch = curves[k].vio_batch;
    const std::int64_t s = a.vio_batch;
    a.small_ratio = mean([&](std::int64_t b) { return small(b, s) ? 1.0 : 0.0; });
    a.time_ratio = mean([&](std::int64_t b) { return small(b, s) ? lat(0, b) : 0.0; }) / base_time;
    // Its rate on the sizes up to its own threshold and the larger thresholds of the other types.
    for (std::size_t j = 1; j < curves.size(); ++j) {
      const std::int64_t sj = curves[j].vio_batch;
      if (sj < s || a.all_batch.count(sj)) continue;
      const double share = mean([&](std::int64_t b) { return small(b, sj) ? 1.0 : 0.0; });
      const double time = mean([&](std::int64_t b) { return small(b, sj) ? lat(k, b) : 0.0; });
      a.all_batch[sj] = share > 0 && time > 0 ? share / time : 0.0;
    }
    a.qps = a.all_batch.at(s);
    // Quadrature can put the ratios a hair outside [0, 1].
    a.small_ratio = std::clamp(a.small_ratio, 0.0, 1.0);
    a.time_ratio = std::clamp(a.time_ratio, 0.0, 1.0);
    if (a.small_ratio >= 1 - 1e-12) a.small_ratio = 1.0;
    out.auxiliaries.push_back(std::move(a));
  }
  out.validate();
  return out;
}

}  // namespace servelab::kairos
