// Seeded random streams. Every random draw in servelab comes from an Rng derived from an explicit
// seed and a stream name ("arrivals", "sizes/app0", "service/worker3"), so adding a new consumer
// never shifts the draws of another, and the same seed gives the same result bit for bit.
//
// The engine is MT19937-64 (fully specified by the C++ standard) and the distributions are
// Boost.Random's (header-only, the same algorithm on every platform), unlike std::*_distribution
// whose algorithms differ between standard libraries. The engine is Boost's implementation: the
// same numbers as std::mt19937_64 from the same seed sequence (tested), but its state update has
// no branch on a random bit (libstdc++'s mispredicts every other word: 6 vs 1.7 ns a draw).
#pragma once

#include <boost/random/mersenne_twister.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace servelab {

class Rng {
 public:
  using Engine = boost::random::mt19937_64;

  // The stream `name` of run `seed`. Distinct names give independent-looking streams.
  Rng(std::uint64_t seed, std::string_view name);

  // A child stream, e.g. rng.derive("app3"); deterministic in (this stream's identity, name).
  Rng derive(std::string_view name) const;
  // derive(name) for each name: the same streams, seeded together. Seeding is most of what a
  // stream costs (about 5 us, one long chain of dependent steps); several interleaved overlap.
  std::vector<Rng> derive_all(std::span<const std::string> names) const;

  Engine& engine() { return engine_; }
  std::uint64_t identity() const { return identity_; }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

 private:
  explicit Rng(std::uint64_t identity);
  Rng(std::uint64_t identity, const Engine& engine) : identity_(identity), engine_(engine) {}
  std::uint64_t identity_;
  Engine engine_;
};

// SplitMix64 finaliser: a bijective 64-bit mix, used to derive stream seeds.
std::uint64_t mix64(std::uint64_t x);

}  // namespace servelab
