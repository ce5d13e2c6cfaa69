// Per-worker arrival processes and robust Poisson helpers (arrivals.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"
#include "servelab/systems/ramsis/arrivals.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

std::int32_t erlang_shape(const ArrivalModel& model) {
  if (model.kind == "poisson") return 1;
  if (model.kind == "erlang" || model.kind == "gamma") {
    if (!std::isfinite(model.shape) || model.shape < 1 || model.shape != std::floor(model.shape) ||
        model.shape > kMaxErlangShape) {
      throw ValueError(str("arrivals shape=", model.shape, " must be an integer in 1..", kMaxErlangShape,
                           " (the builder evaluates ",
                           "Gamma inter-arrivals exactly for integer shapes, i.e. Erlang)"));
    }
    return static_cast<std::int32_t>(model.shape);
  }
  throw ValueError(str("arrivals='", model.kind, "' is not one of 'poisson', 'erlang', 'gamma'"));
}

WorkerArrivals worker_arrivals(const ArrivalModel& model, Balancer balancer, double load_qps, std::int32_t workers,
                               std::int32_t queue_length, double service_rate_qps) {
  if (!(load_qps > 0) || !std::isfinite(load_qps)) throw ValueError(str("load_qps=", load_qps, " must be > 0"));
  if (workers < 1) throw ValueError(str("workers=", workers, " must be >= 1"));
  const std::int32_t shape = erlang_shape(model);
  const double lambda = load_qps * 1e-9;  // per ns
  if (balancer == Balancer::RoundRobin) {
    return {lambda * shape, shape * workers};
  }
  if (shape != 1) throw ValueError("balancer='shortest_queue' supports arrivals='poisson' only");
  if (!(service_rate_qps > 0)) throw ValueError(str("service rate=", service_rate_qps, " qps must be > 0"));
  // Appendix I: a worker with n >= 3 queued queries is rarely the shortest queue.
  const double per_worker = lambda / workers;
  if (queue_length < 3) return {per_worker, 1};
  const double mu = service_rate_qps * 1e-9;
  const double rho = load_qps / (workers * service_rate_qps);
  const double reduced = std::pow(rho, workers) * mu;
  return {std::min(reduced, per_worker), 1};
}

std::string balancer_name(Balancer balancer) {
  return balancer == Balancer::RoundRobin ? "round_robin" : "shortest_queue";
}
Balancer parse_balancer(const std::string& name) {
  if (name == "round_robin") return Balancer::RoundRobin;
  if (name == "shortest_queue") return Balancer::ShortestQueue;
  throw ValueError(str("balancer='", name, "' is not one of 'round_robin', 'shortest_queue'"));
}

namespace {
double log_pmf(double mu, std::int64_t k) {
  return static_cast<double>(k) * std::log(mu) - mu - std::lgamma(static_cast<double>(k) + 1.0);
}
}  // namespace

void poisson_pmf_range(double mu, std::int64_t k0, std::int64_t k1, double* out) {
  if (k1 <= k0) return;
  if (mu <= 0) {
    for (std::int64_t k = k0; k < k1; ++k) out[k - k0] = k == 0 ? 1.0 : 0.0;
    return;
  }
  // Start at the mode clamped into the range (the largest term), recur outwards: terms only
  // shrink away from it, so underflow only ever produces true negligibles.
  const std::int64_t mode = std::clamp(static_cast<std::int64_t>(std::floor(mu)), k0, k1 - 1);
  const std::int64_t at = mode - k0;
  out[at] = std::exp(log_pmf(mu, mode));
  for (std::int64_t k = mode + 1; k < k1; ++k) out[k - k0] = out[k - 1 - k0] * mu / static_cast<double>(k);
  for (std::int64_t k = mode - 1; k >= k0; --k) out[k - k0] = out[k + 1 - k0] * static_cast<double>(k + 1) / mu;
}

void poisson_cdf_prefix(double mu, std::int64_t k1, double* out) {
  if (k1 <= 0) return;
  poisson_pmf_range(mu, 0, k1, out);
  double sum = 0;
  for (std::int64_t k = 0; k < k1; ++k) {
    sum += out[k];
    out[k] = std::min(sum, 1.0);
  }
}

void conditional_poisson_weights(double mu, std::int64_t base, std::int32_t count, double* out) {
  if (count <= 0) return;
  if (mu <= 0) {
    for (std::int32_t x = 0; x < count; ++x) out[x] = base == 0 ? (x == 0 ? 1.0 : 0.0) : 1.0 / count;
    return;
  }
  // Relative to the largest term: log w[x] - log w[mode], then normalise.
  const std::int64_t mode = std::clamp(static_cast<std::int64_t>(std::floor(mu)), base, base + count - 1);
  const std::int64_t at = mode - base;
  out[at] = 1.0;
  for (std::int64_t k = mode + 1; k < base + count; ++k)
    out[k - base] = out[k - 1 - base] * mu / static_cast<double>(k);
  for (std::int64_t k = mode - 1; k >= base; --k) out[k - base] = out[k + 1 - base] * static_cast<double>(k + 1) / mu;
  double sum = 0;
  for (std::int32_t x = 0; x < count; ++x) sum += out[x];
  for (std::int32_t x = 0; x < count; ++x) out[x] /= sum;
}

}  // namespace servelab::ramsis
