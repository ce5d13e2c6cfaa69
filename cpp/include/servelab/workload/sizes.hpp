// Request sizes: how many items each query carries.
//
// A SizeDistribution is an immutable, validated description ("lognormal(mu=5.1, sigma=0.2)");
// sample(rng) draws one size (an integer >= 1). Optional rounding up to a multiple (Kairos rounds
// up to multiples of 10) is a parameter of every distribution, applied after drawing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/core/rng.hpp"

namespace servelab::workload {

class SizeDistribution {
 public:
  virtual ~SizeDistribution() = default;
  // One size >= 1 (after clipping and rounding).
  virtual std::int32_t sample(Rng& rng) const = 0;
  virtual std::string describe() const = 0;
  // Expected size after clipping/rounding, exact where cheap, else estimated; NaN if unknown.
  virtual double mean() const = 0;
};

// Sizes of `count` queries under `seed` (stream "sizes"), in bulk.
std::vector<std::int32_t> generate_sizes(const SizeDistribution& sizes, std::uint64_t seed, std::int64_t count);

}  // namespace servelab::workload
