#include "servelab/exec/recsys/zipf.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::exec::recsys {
namespace {

// log1p(x)/x and expm1(x)/x, exact near 0 where the plain quotients lose every digit.
double log1p_over_x(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x / 3.0); }
double expm1_over_x(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0); }

}  // namespace

ZipfSampler::ZipfSampler(std::int64_t n, double exponent) : n_(n), exponent_(exponent) {
  if (n < 1) throw ValueError(str("zipf: n=", n, " must be at least 1"));
  if (!(exponent > 0.0) || !std::isfinite(exponent)) {
    throw ValueError(str("zipf: exponent=", exponent, " must be positive and finite"));
  }
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
  s_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const { return std::exp(-exponent_ * std::log(x)); }

double ZipfSampler::h_integral(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x((1.0 - exponent_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) t = -1.0;  // rounding: keeps log1p defined
  return std::exp(log1p_over_x(t) * x);
}

std::int64_t ZipfSampler::operator()(Rng& rng) const {
  while (true) {
    const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
    const double x = h_integral_inverse(u);
    auto k = static_cast<std::int64_t>(x + 0.5);
    if (k < 1) k = 1;
    if (k > n_) k = n_;
    const double kd = static_cast<double>(k);
    if (kd - x <= s_ || u >= h_integral(kd + 0.5) - h(kd)) return k;
  }
}

}  // namespace servelab::exec::recsys
