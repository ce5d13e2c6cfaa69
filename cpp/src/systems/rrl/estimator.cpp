#include "servelab/systems/rrl/estimator.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"

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
}

namespace {

using Matrix = Eigen::MatrixXf;
using Vector = Eigen::VectorXf;
using MatrixMap = Eigen::Map<Matrix>;
using VectorMap = Eigen::Map<Vector>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using ConstVectorMap = Eigen::Map<const Vector>;

constexpr float kHuberDelta = 1.0f;

}  // namespace

struct LatencyEstimator::Impl {
  Impl(std::size_t inputs, EstimatorOptions o, std::uint64_t seed)
      : d(static_cast<Eigen::Index>(inputs)),
        h1(o.hidden1),
        h2(o.hidden2),
        options(o),
        replay(seed, "rrl/estimator/replay") {
    if (inputs < 1 || inputs > 4096) throw ValueError(str("estimator inputs=", inputs, " must be in 1..4096"));
    o.validate();
    const Eigen::Index p = h1 * d + h1 + h2 * h1 + h2 + h2 + 1;
    w0.resize(p);
    Rng init(seed, "rrl/estimator/init");
    // He-uniform weights; the output layer scaled by 0.1 so that an untrained network changes the
    // anchored region estimates little (they start as the measured latency itself).
    Eigen::Index at = 0;
    const auto fill = [&](Eigen::Index count, double fan_in, double scale) {
      const double limit = scale * std::sqrt(6.0 / fan_in);
      for (Eigen::Index i = 0; i < count; ++i) w0[at++] = static_cast<float>((2 * init.uniform() - 1) * limit);
    };
    const auto zeros = [&](Eigen::Index count, float value) {
      for (Eigen::Index i = 0; i < count; ++i) w0[at++] = value;
    };
    fill(h1 * d, static_cast<double>(d), 1.0);
    zeros(h1, 0.01f);  // slightly positive: fewer units start dead
    fill(h2 * h1, static_cast<double>(h1), 1.0);
    zeros(h2, 0.01f);
    fill(h2, static_cast<double>(h2), 0.1);
    zeros(1, 0.0f);
    w = w0;
    z = Vector::Zero(p);
    n = Vector::Zero(p);
    sqrt_n = Vector::Zero(p);
    g = Vector::Zero(p);
  }

  // Views of the layers inside a flat parameter vector.
  struct Layers {
    MatrixMap w1;
    VectorMap b1;
    MatrixMap w2;
    VectorMap b2;
    MatrixMap w3;
    VectorMap b3;
  };
  Layers layers(Vector& v) const {
    float* p = v.data();
    return {MatrixMap(p, h1, d),
            VectorMap(p + h1 * d, h1),
            MatrixMap(p + h1 * d + h1, h2, h1),
            VectorMap(p + h1 * d + h1 + h2 * h1, h2),
            MatrixMap(p + h1 * d + h1 + h2 * h1 + h2, 1, h2),
            VectorMap(p + h1 * d + h1 + h2 * h1 + h2 + h2, 1)};
  }

  void forward(const Eigen::Ref<const Matrix>& x, Matrix& a1, Matrix& a2, Eigen::RowVectorXf& out) const {
    auto l = layers(const_cast<Vector&>(w));
    a1.noalias() = l.w1 * x;
    a1.colwise() += l.b1;
    a1 = a1.cwiseMax(0.0f);
    a2.noalias() = l.w2 * a1;
    a2.colwise() += l.b2;
    a2 = a2.cwiseMax(0.0f);
    out.noalias() = l.w3 * a2;
    out.array() += l.b3[0];
  }

  void train_step() {
    const std::size_t count = ys.size();
    const auto b = static_cast<Eigen::Index>(std::min<std::size_t>(static_cast<std::size_t>(options.batch), count));
    batch_x.resize(d, b);
    batch_y.resize(b);
    for (Eigen::Index j = 0; j < b; ++j) {
      // The newest sample first, then uniform draws from the memory.
      const std::size_t i = j == 0 ? newest : static_cast<std::size_t>(replay.uniform() * static_cast<double>(count));
      batch_x.col(j) = ConstVectorMap(&xs[i * static_cast<std::size_t>(d)], d);
      batch_y[j] = ys[i];
    }
    forward(batch_x, a1, a2, out);
    // Huber loss, averaged over the batch.
    dout = (out - batch_y).cwiseMax(-kHuberDelta).cwiseMin(kHuberDelta) / static_cast<float>(b);
    auto gl = layers(g);
    auto wl = layers(w);
    gl.w3.noalias() = dout * a2.transpose();
    gl.b3[0] = dout.sum();
    d2.noalias() = wl.w3.transpose() * dout;
    d2 = d2.cwiseProduct((a2.array() > 0).cast<float>().matrix());
    gl.w2.noalias() = d2 * a1.transpose();
    gl.b2 = d2.rowwise().sum();
    d1.noalias() = wl.w2.transpose() * d2;
    d1 = d1.cwiseProduct((a1.array() > 0).cast<float>().matrix());
    gl.w1.noalias() = d1 * batch_x.transpose();
    gl.b1 = d1.rowwise().sum();
    ftrl();
  }

  // FTRL-Proximal on the displacement from w0 (see the header).
  void ftrl() {
    const auto alpha = static_cast<float>(options.alpha), beta = static_cast<float>(options.beta);
    const auto l1 = static_cast<float>(options.l1), l2 = static_cast<float>(options.l2);
    // One pass per line, no temporaries but new_sqrt (kept between calls).
    n.array() += g.array().square();
    new_sqrt = n.array().sqrt();
    z.array() += g.array() - (new_sqrt.array() - sqrt_n.array()) / alpha * (w.array() - w0.array());
    sqrt_n.swap(new_sqrt);
    if (l1 == 0) {
      w.array() = w0.array() - z.array() / ((beta + sqrt_n.array()) / alpha + l2);
    } else {
      w.array() = (z.array().abs() > l1)
                      .select(w0.array() - (z.array() - z.array().sign() * l1) / ((beta + sqrt_n.array()) / alpha + l2),
                              w0.array());
    }
  }

  Eigen::Index d, h1, h2;
  EstimatorOptions options;
  Rng replay;
  Vector w, w0, z, n, sqrt_n, g, new_sqrt;
  std::vector<float> xs, ys;
  std::size_t newest = 0;
  double y0 = 0;
  bool has_y0 = false;
  Matrix batch_x, a1, a2, d1, d2;
  Eigen::RowVectorXf batch_y, out, dout;
  // Prediction scratch: predict_log is const but reuses these (one estimator, one thread).
  mutable Matrix pred_a1, pred_a2;
  mutable Eigen::RowVectorXf pred_out;
};

LatencyEstimator::LatencyEstimator(std::size_t inputs, EstimatorOptions options, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(inputs, options, seed)) {}
LatencyEstimator::~LatencyEstimator() = default;
LatencyEstimator::LatencyEstimator(LatencyEstimator&&) noexcept = default;
LatencyEstimator& LatencyEstimator::operator=(LatencyEstimator&&) noexcept = default;

std::size_t LatencyEstimator::inputs() const { return static_cast<std::size_t>(impl_->d); }
std::size_t LatencyEstimator::parameters() const { return static_cast<std::size_t>(impl_->w.size()); }
std::size_t LatencyEstimator::samples() const { return impl_->ys.size(); }

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
  for (int s = 0; s < m.options.train_steps; ++s) m.train_step();
}

void LatencyEstimator::predict_log(std::span<const float> xs, std::size_t count, std::span<float> out) const {
  const Impl& m = *impl_;
  if (xs.size() != count * inputs() || out.size() < count) throw ValueError("predict_log: sizes do not match");
  if (count == 0) return;
  m.forward(ConstMatrixMap(xs.data(), m.d, static_cast<Eigen::Index>(count)), m.pred_a1, m.pred_a2, m.pred_out);
  for (std::size_t i = 0; i < count; ++i) out[i] = m.pred_out[static_cast<Eigen::Index>(i)];
}

double LatencyEstimator::predict_ms(std::span<const float> x) const {
  float g = 0;
  predict_log(x, 1, {&g, 1});
  return std::exp(impl_->y0 + static_cast<double>(g));
}

}  // namespace servelab::rrl
