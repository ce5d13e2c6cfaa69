#include "gaussian_process.hpp"

#include <cmath>
#include <limits>
#include <numbers>

#include "servelab/core/errors.hpp"

namespace servelab::solvers::search {

GaussianProcess::GaussianProcess(Eigen::MatrixXd x, const Eigen::VectorXd& y, Settings settings)
    : x_(std::move(x)), settings_(std::move(settings)) {
  if (x_.rows() == 0 || x_.rows() != y.size())
    throw ValueError("GaussianProcess needs as many targets as inputs (> 0)");
  if (settings_.length_scales.empty()) throw ValueError("GaussianProcess needs at least one candidate length scale");
  y_mean_ = y.mean();
  const double variance = (y.array() - y_mean_).square().mean();
  y_scale_ = variance > 0 ? std::sqrt(variance) : 1.0;
  y_ = (y.array() - y_mean_) / y_scale_;

  double best = -std::numeric_limits<double>::infinity();
  double best_scale = settings_.length_scales.front();
  for (const double scale : settings_.length_scales) {
    length_scale_ = scale;
    const double ll = fit();
    if (ll > best) {
      best = ll;
      best_scale = scale;
    }
  }
  length_scale_ = best_scale;
  log_likelihood_ = fit();
  if (!std::isfinite(log_likelihood_)) {
    // Duplicate-free inputs keep K positive definite; this is a last resort for degenerate data.
    settings_.noise = std::max(settings_.noise, 1e-6) * 1e4;
    log_likelihood_ = fit();
  }
}

double GaussianProcess::kernel(double squared_distance) const {
  const double r2 = squared_distance / (length_scale_ * length_scale_);
  if (settings_.kernel == Kernel::Rbf) return std::exp(-0.5 * r2);
  const double s = std::sqrt(5.0 * r2);
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

Eigen::MatrixXd GaussianProcess::cross_kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const {
  Eigen::MatrixXd k(a.rows(), b.rows());
  for (Eigen::Index j = 0; j < b.rows(); ++j) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) k(i, j) = kernel((a.row(i) - b.row(j)).squaredNorm());
  }
  return k;
}

double GaussianProcess::fit() {
  Eigen::MatrixXd k = cross_kernel(x_, x_);
  k.diagonal().array() += settings_.noise;
  llt_.compute(k);
  if (llt_.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  alpha_ = llt_.solve(y_);
  const double log_det_half = llt_.matrixLLT().diagonal().array().log().sum();
  return -0.5 * y_.dot(alpha_) - log_det_half - 0.5 * static_cast<double>(y_.size()) * std::log(2 * std::numbers::pi);
}

void GaussianProcess::predict(const Eigen::MatrixXd& at, Eigen::VectorXd& mean, Eigen::VectorXd& stddev) const {
  const Eigen::MatrixXd k_star = cross_kernel(x_, at);  // n x m
  mean = (k_star.transpose() * alpha_).array() * y_scale_ + y_mean_;
  const Eigen::MatrixXd v = llt_.matrixL().solve(k_star);
  stddev = (1.0 - v.colwise().squaredNorm().array()).max(0.0).sqrt() * y_scale_;
}

}  // namespace servelab::solvers::search
