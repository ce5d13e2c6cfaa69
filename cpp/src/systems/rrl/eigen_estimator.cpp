#include "eigen_estimator.hpp"

#include <Eigen/Dense>
#include <cmath>

namespace servelab::rrl {
namespace {

using Matrix = Eigen::MatrixXf;
using Vector = Eigen::VectorXf;
using MatrixMap = Eigen::Map<Matrix>;
using VectorMap = Eigen::Map<Vector>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

constexpr float kHuberDelta = 1.0f;

class EigenEstimator final : public EstimatorBackend {
 public:
  EigenEstimator(const EstimatorShape& shape, std::span<const float> initial, const EstimatorOptions& o)
      : d(static_cast<Eigen::Index>(shape.inputs)),
        h1(static_cast<Eigen::Index>(shape.hidden1)),
        h2(static_cast<Eigen::Index>(shape.hidden2)),
        options(o) {
    const auto p = static_cast<Eigen::Index>(initial.size());
    w0 = Eigen::Map<const Vector>(initial.data(), p);
    w = w0;
    z = Vector::Zero(p);
    n = Vector::Zero(p);
    sqrt_n = Vector::Zero(p);
    g = Vector::Zero(p);
  }

  void train_step(std::span<const float> x, std::span<const float> y) override {
    const auto b = static_cast<Eigen::Index>(y.size());
    const ConstMatrixMap batch_x(x.data(), d, b);
    const Eigen::Map<const Eigen::RowVectorXf> batch_y(y.data(), b);
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

  void predict_log(std::span<const float> xs, std::size_t count, std::span<float> result) const override {
    forward(ConstMatrixMap(xs.data(), d, static_cast<Eigen::Index>(count)), pred_a1, pred_a2, pred_out);
    for (std::size_t i = 0; i < count; ++i) result[i] = pred_out[static_cast<Eigen::Index>(i)];
  }

  std::vector<float> weights() const override { return {w.data(), w.data() + w.size()}; }

 private:
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

  void forward(const Eigen::Ref<const Matrix>& x, Matrix& l1, Matrix& l2, Eigen::RowVectorXf& o) const {
    auto l = layers(const_cast<Vector&>(w));
    l1.noalias() = l.w1 * x;
    l1.colwise() += l.b1;
    l1 = l1.cwiseMax(0.0f);
    l2.noalias() = l.w2 * l1;
    l2.colwise() += l.b2;
    l2 = l2.cwiseMax(0.0f);
    o.noalias() = l.w3 * l2;
    o.array() += l.b3[0];
  }

  // FTRL-Proximal on the displacement from w0 (estimator.hpp).
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
  Vector w, w0, z, n, sqrt_n, g, new_sqrt;
  Matrix a1, a2, d1, d2;
  Eigen::RowVectorXf out, dout;
  // Prediction scratch: predict_log is const but reuses these (one estimator, one thread).
  mutable Matrix pred_a1, pred_a2;
  mutable Eigen::RowVectorXf pred_out;
};

}  // namespace

std::unique_ptr<EstimatorBackend> make_eigen_estimator(const EstimatorShape& shape, std::span<const float> w0,
                                                       const EstimatorOptions& options) {
  return std::make_unique<EigenEstimator>(shape, w0, options);
}

}  // namespace servelab::rrl
