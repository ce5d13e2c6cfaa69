// Zipf-distributed ranks in [1, n] in O(1) per draw and without tables, so it works for tables of
// millions of rows: rejection-inversion sampling (W. Hormann, G. Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", 1996).
#pragma once

#include <cstdint>

#include "servelab/core/rng.hpp"

namespace servelab::exec::recsys {

class ZipfSampler {
 public:
  // P(k) proportional to k^-exponent for k in [1, n]. ValueError unless n >= 1 and exponent > 0.
  ZipfSampler(std::int64_t n, double exponent);
  std::int64_t operator()(Rng& rng) const;

 private:
  double h(double x) const;
  double h_integral(double x) const;
  double h_integral_inverse(double x) const;

  std::int64_t n_;
  double exponent_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
};

}  // namespace servelab::exec::recsys
