#include "servelab/systems/rrl/episode.hpp"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::rrl {

Objective Objective::parse(const std::string& name, double slo_ms) {
  Objective o;
  if (name == "mean") {
    o.kind = Kind::MeanLatency;
  } else if (name == "p95") {
    o.kind = Kind::TailLatency;
  } else if (name == "slo") {
    o.kind = Kind::SloResources;
  } else {
    throw ValueError(str("objective='", name, "' is not one of 'mean', 'p95', 'slo'"));
  }
  o.slo_ms = slo_ms;
  o.validate();
  return o;
}

std::string Objective::name() const {
  switch (kind) {
    case Kind::MeanLatency:
      return "mean";
    case Kind::TailLatency:
      return "p95";
    case Kind::SloResources:
      break;
  }
  return "slo";
}

void Objective::validate() const {
  if (kind == Kind::SloResources && !(std::isfinite(slo_ms) && slo_ms > 0)) {
    throw ValueError(str("slo_ms=", slo_ms, " must be positive and finite for objective 'slo'"));
  }
}

double Objective::cost(double metric, double resource_share) const {
  if (kind != Kind::SloResources) return std::log1p(metric);
  return metric <= slo_ms ? resource_share : 1 + metric / slo_ms;
}

std::vector<Setting> settings_of(const ConfigSpace& space, const PerfModel& model) {
  const bool gpu = space.knob("batch_size").has_value();
  const char* names_cpu[] = {"workers", "inter_op", "intra_op"};
  const char* names_gpu[] = {"batch_size", "batch_timeout_ms", "batch_threads"};
  for (const char* name : gpu ? names_gpu : names_cpu) {
    const auto k = space.knob(name);
    if (!k) {
      throw ValueError(str("the ", space.kind(), " space has no knob ", name, " (a ", gpu ? "GPU" : "CPU",
                           " space needs ",
                           gpu ? "batch_size, batch_timeout_ms, batch_threads" : "workers, inter_op, intra_op", ")"));
    }
    const std::int64_t lowest = space.knobs()[*k].values.front();
    const std::int64_t minimum = std::string_view(name) == "batch_timeout_ms" ? 0 : 1;
    if (lowest < minimum) throw ValueError(str(name, "=", lowest, " must be >= ", minimum));
  }
  std::vector<Setting> out(space.size());
  const double max_threads = gpu ? static_cast<double>(space.knobs()[*space.knob("batch_threads")].values.back()) : 1;
  for (std::size_t c = 0; c < space.size(); ++c) {
    Setting& s = out[c];
    s.gpu = gpu;
    if (gpu) {
      s.batch = space.value(c, "batch_size");
      s.timeout_ms = space.value(c, "batch_timeout_ms");
      s.batch_threads = space.value(c, "batch_threads");
      s.resource_share = static_cast<double>(s.batch_threads) / max_threads;
    } else {
      s.workers = space.value(c, "workers");
      s.inter = space.value(c, "inter_op");
      s.intra = space.value(c, "intra_op");
      s.resource_share = std::min(1.0, static_cast<double>(s.workers * s.inter * s.intra) / model.cpu.cores);
    }
  }
  return out;
}

namespace {

// Lognormal factor of mean 1 and coefficient of variation cv.
class Noise {
 public:
  Noise(Rng* rng, double cv) : rng_(cv > 0 ? rng : nullptr) {
    const double var = std::log1p(cv * cv);
    sigma_ = std::sqrt(var);
    mu_ = -var / 2;
  }
  double factor() {
    if (rng_ == nullptr) return 1;
    return std::exp(mu_ + sigma_ * normal_(rng_->engine()));
  }

 private:
  Rng* rng_;
  double mu_ = 0, sigma_ = 0;
  boost::random::normal_distribution<double> normal_{0, 1};
};

// Index of the earliest-free server and how many are busy at `t` (excluding it).
std::size_t earliest(const std::vector<double>& free_at) {
  return static_cast<std::size_t>(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
}
std::int64_t busy_at(const std::vector<double>& free_at, double t) {
  return std::count_if(free_at.begin(), free_at.end(), [t](double f) { return f > t; });
}

void serve_cpu(const CpuModel& m, const Setting& s, std::span<const double> arrivals, Noise& noise,
               std::vector<double>& latency) {
  std::vector<double> free_at(static_cast<std::size_t>(s.workers), 0.0);
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const std::size_t w = earliest(free_at);
    const double start = std::max(arrivals[i], free_at[w]);
    const std::int64_t in_service = busy_at(free_at, start) + 1;
    free_at[w] = start + m.service_ms(s.inter, s.intra, in_service) * noise.factor();
    latency[i] = free_at[w] - arrivals[i];
  }
}

void serve_gpu(const GpuModel& m, const Setting& s, std::span<const double> arrivals, Noise& noise,
               std::vector<double>& latency) {
  std::vector<double> free_at(static_cast<std::size_t>(s.batch_threads), 0.0);
  const auto timeout = static_cast<double>(s.timeout_ms);
  const auto cap = static_cast<std::size_t>(s.batch);
  for (std::size_t i = 0; i < arrivals.size();) {
    const double opened = arrivals[i];
    std::size_t end = i + 1;
    while (end < arrivals.size() && end - i < cap && arrivals[end] <= opened + timeout) ++end;
    const double closed = end - i == cap ? arrivals[end - 1] : opened + timeout;
    const std::size_t t = earliest(free_at);
    const double start = std::max(closed, free_at[t]);
    const std::int64_t concurrent = busy_at(free_at, start) + 1;
    free_at[t] = start + m.service_ms(static_cast<std::int64_t>(end - i), concurrent) * noise.factor();
    for (std::size_t j = i; j < end; ++j) latency[j] = free_at[t] - arrivals[j];
    i = end;
  }
}

}  // namespace

EpisodeResult run_episode(const PerfModel& model, const Setting& setting, std::span<const double> arrivals_ms,
                          const Objective& objective, Rng* noise_rng, std::vector<double>& latency) {
  if (arrivals_ms.empty()) throw ValueError("an episode needs at least one request");
  latency.resize(arrivals_ms.size());
  Noise noise(noise_rng, model.noise_cv);
  if (setting.gpu) {
    serve_gpu(model.gpu, setting, arrivals_ms, noise, latency);
  } else {
    serve_cpu(model.cpu, setting, arrivals_ms, noise, latency);
  }
  EpisodeResult r;
  double sum = 0;
  for (double x : latency) sum += x;
  r.mean_ms = sum / static_cast<double>(latency.size());
  // Nearest-rank 95th percentile.
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(latency.size()))) - 1;
  std::nth_element(latency.begin(), latency.begin() + static_cast<std::ptrdiff_t>(rank), latency.end());
  r.p95_ms = latency[rank];
  r.metric_ms = objective.metric_ms(r.mean_ms, r.p95_ms);
  r.cost = objective.cost(r.metric_ms, setting.resource_share);
  return r;
}

}  // namespace servelab::rrl
