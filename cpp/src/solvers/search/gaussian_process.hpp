// A small Gaussian-process regressor for Bayesian optimisation over a few hundred points: an
// isotropic Matern 5/2 or RBF kernel with unit signal variance on standardised targets (as
// scikit-learn's normalize_y, which Ribbon's BO used), the length scale chosen by maximising the
// log marginal likelihood over a log-spaced grid, Cholesky factorisation by Eigen's LLT.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace servelab::solvers::search {

enum class Kernel { Matern52, Rbf };

class GaussianProcess {
 public:
  struct Settings {
    Kernel kernel = Kernel::Matern52;
    double noise = 1e-6;                // added to the diagonal (scikit-learn's alpha)
    std::vector<double> length_scales;  // candidate length scales, in input units
  };

  // x: n x d inputs; y: n targets. Picks the length scale with the largest log marginal likelihood.
  GaussianProcess(Eigen::MatrixXd x, const Eigen::VectorXd& y, Settings settings);

  // Posterior mean and standard deviation at m x d inputs, in the units of y.
  void predict(const Eigen::MatrixXd& at, Eigen::VectorXd& mean, Eigen::VectorXd& stddev) const;

  double length_scale() const { return length_scale_; }
  double log_marginal_likelihood() const { return log_likelihood_; }

 private:
  double kernel(double squared_distance) const;
  Eigen::MatrixXd cross_kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const;
  // Factorises K for `length_scale_`; returns the log marginal likelihood (-inf if not SPD).
  double fit();

  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;  // standardised
  double y_mean_ = 0.0;
  double y_scale_ = 1.0;
  Settings settings_;
  double length_scale_ = 1.0;
  double log_likelihood_ = 0.0;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;
};

}  // namespace servelab::solvers::search
