#include "servelab/systems/rrl/estimator.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::rrl {

void EstimatorOptions::validate() const {
  const auto require = [](bool ok, const char* field, double value, const char* rule) {
    if (!ok) throw ValueError(str("estimator ", field, "=", value, " ", rule));
  };
  require(hidden1 >= 1 && hidden1 <= 4096, "hidden1", hidden1, "must be in 1..4096");
  require(hidden2 >= 1 && hidden2 <= 4096, "hidden2", hidden2, "must be in 1..4096");
  require(std::isfinite(alpha) && alpha > 0, "alpha", alpha, "must be positive and finite");
  require(std::isfinite(beta) && beta >= 0, "beta", beta, "must be >= 0 and finite");
  require(std::isfinite(l1) && l1 >= 0, "l1", l1, "must be >= 0 and finite");
  require(std::isfinite(l2) && l2 >= 0, "l2", l2, "must be >= 0 and finite");
  require(batch >= 1 && batch <= 4096, "batch", batch, "must be in 1..4096");
  require(train_steps >= 0 && train_steps <= 1000, "train_steps", train_steps, "must be in 0..1000");
  require(memory >= 1, "memory", static_cast<double>(memory), "must be >= 1");
  require(plateau_patience >= 0 && plateau_patience <= 1000, "plateau_patience", plateau_patience,
          "must be in 0..1000 (0: off)");
  require(plateau_every >= 1 && plateau_every <= 10000, "plateau_every", plateau_every, "must be in 1..10000");
  require(max_train_steps >= 1 && max_train_steps <= 100000, "max_train_steps", max_train_steps,
          "must be in 1..100000");
}

std::vector<float> initial_estimator_weights(const EstimatorShape& shape, std::uint64_t seed) {
  std::vector<float> w0(shape.parameters());
  Rng init(seed, "rrl/estimator/init");
  // He-uniform weights; the output layer scaled by 0.1 so that an untrained network changes the
  // anchored region estimates little (they start as the measured latency itself).
  std::size_t at = 0;
  const auto fill = [&](std::size_t count, double fan_in, double scale) {
    const double limit = scale * std::sqrt(6.0 / fan_in);
    for (std::size_t i = 0; i < count; ++i) w0[at++] = static_cast<float>((2 * init.uniform() - 1) * limit);
  };
  const auto constant = [&](std::size_t count, float value) {
    for (std::size_t i = 0; i < count; ++i) w0[at++] = value;
  };
  const std::size_t d = shape.inputs, h1 = shape.hidden1, h2 = shape.hidden2;
  fill(h1 * d, static_cast<double>(d), 1.0);
  constant(h1, 0.01f);  // slightly positive: fewer units start dead
  fill(h2 * h1, static_cast<double>(h1), 1.0);
  constant(h2, 0.01f);
  fill(h2, static_cast<double>(h2), 0.1);
  constant(1, 0.0f);
  return w0;
}

// The replay memory and the minibatch draws; the backend does the arithmetic.
struct LatencyEstimator::Impl {
  Impl(std::size_t inputs, EstimatorOptions o, std::uint64_t seed)
      : d(inputs), options(std::move(o)), replay(seed, "rrl/estimator/replay") {
    if (inputs < 1 || inputs > 4096) throw ValueError(str("estimator inputs=", inputs, " must be in 1..4096"));
    options.validate();
    const EstimatorShape shape{inputs, static_cast<std::size_t>(options.hidden1),
                               static_cast<std::size_t>(options.hidden2)};
    parameters = shape.parameters();
    backend = make_estimator_backend(options.backend, shape, initial_estimator_weights(shape, seed), options);
  }

  void train_step() {
    const std::size_t count = ys.size();
    const std::size_t b = std::min<std::size_t>(static_cast<std::size_t>(options.batch), count);
    batch_x.resize(d * b);
    batch_y.resize(b);
    for (std::size_t j = 0; j < b; ++j) {
      // The newest sample first, then uniform draws from the memory.
      const std::size_t i = j == 0 ? newest : static_cast<std::size_t>(replay.uniform() * static_cast<double>(count));
      std::copy_n(xs.begin() + static_cast<std::ptrdiff_t>(i * d), d,
                  batch_x.begin() + static_cast<std::ptrdiff_t>(j * d));
      batch_y[j] = ys[i];
    }
    backend->train_step(batch_x, batch_y);
    ++steps;
  }

  // The Huber loss (delta 1) over at most kLossSamples samples of the memory, evenly spaced.
  double memory_loss() {
    constexpr std::size_t kLossSamples = 256;
    const std::size_t count = ys.size(), n = std::min(count, kLossSamples);
    loss_x.resize(d * n);
    loss_y.resize(n);
    loss_out.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = j == 0 ? newest : (newest + j * count / n) % count;
      std::copy_n(xs.begin() + static_cast<std::ptrdiff_t>(i * d), d,
                  loss_x.begin() + static_cast<std::ptrdiff_t>(j * d));
      loss_y[j] = ys[i];
    }
    backend->predict_log(loss_x, n, loss_out);
    double total = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double e = std::abs(static_cast<double>(loss_out[j]) - loss_y[j]);
      total += e <= 1 ? 0.5 * e * e : e - 0.5;
    }
    return total / static_cast<double>(n);
  }

  void train() {
    for (int s = 0; s < options.train_steps; ++s) train_step();
    if (options.plateau_patience <= 0) return;
    double best = memory_loss();
    int taken = options.train_steps, stale = 0;
    while (stale < options.plateau_patience && taken < options.max_train_steps) {
      for (int s = 0; s < options.plateau_every && taken < options.max_train_steps; ++s, ++taken) train_step();
      const double loss = memory_loss();
      if (loss < best) {
        best = loss;
        stale = 0;
      } else {
        ++stale;
      }
    }
  }

  std::size_t d;
  EstimatorOptions options;
  Rng replay;
  std::size_t parameters = 0;
  std::unique_ptr<EstimatorBackend> backend;
  std::vector<float> xs, ys;
  std::size_t newest = 0;
  double y0 = 0;
  bool has_y0 = false;
  std::vector<float> batch_x, batch_y;
  std::vector<float> loss_x, loss_y, loss_out;
  std::int64_t steps = 0;
};

LatencyEstimator::LatencyEstimator(std::size_t inputs, EstimatorOptions options, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(inputs, options, seed)) {}
LatencyEstimator::~LatencyEstimator() = default;
LatencyEstimator::LatencyEstimator(LatencyEstimator&&) noexcept = default;
LatencyEstimator& LatencyEstimator::operator=(LatencyEstimator&&) noexcept = default;

std::size_t LatencyEstimator::inputs() const { return impl_->d; }
std::size_t LatencyEstimator::parameters() const { return impl_->parameters; }
std::size_t LatencyEstimator::samples() const { return impl_->ys.size(); }
const std::string& LatencyEstimator::backend() const { return impl_->options.backend; }
std::vector<float> LatencyEstimator::weights() const { return impl_->backend->weights(); }

void LatencyEstimator::observe(std::span<const float> x, double latency_ms) {
  Impl& m = *impl_;
  if (x.size() != inputs()) throw ValueError(str("got ", x.size(), " features for an estimator of ", inputs()));
  if (!(std::isfinite(latency_ms) && latency_ms > 0)) {
    throw ValueError(str("latency_ms=", latency_ms, " must be positive and finite"));
  }
  if (!m.has_y0) {
    m.y0 = std::log(latency_ms);
    m.has_y0 = true;
  }
  const auto y = static_cast<float>(std::log(latency_ms) - m.y0);
  const std::size_t d = inputs();
  if (m.ys.size() < m.options.memory) {
    m.xs.insert(m.xs.end(), x.begin(), x.end());
    m.ys.push_back(y);
    m.newest = m.ys.size() - 1;
  } else {  // a ring: overwrite the oldest
    m.newest = (m.newest + 1) % m.options.memory;
    std::copy(x.begin(), x.end(), m.xs.begin() + static_cast<std::ptrdiff_t>(m.newest * d));
    m.ys[m.newest] = y;
  }
  m.train();
}

std::int64_t LatencyEstimator::steps_trained() const { return impl_->steps; }

void LatencyEstimator::predict_log(std::span<const float> xs, std::size_t count, std::span<float> out) const {
  const Impl& m = *impl_;
  if (xs.size() != count * inputs() || out.size() < count) throw ValueError("predict_log: sizes do not match");
  if (count == 0) return;
  m.backend->predict_log(xs.subspan(0, count * m.d), count, out);
}

double LatencyEstimator::predict_ms(std::span<const float> x) const {
  float g = 0;
  predict_log(x, 1, {&g, 1});
  return std::exp(impl_->y0 + static_cast<double>(g));
}

}  // namespace servelab::rrl
