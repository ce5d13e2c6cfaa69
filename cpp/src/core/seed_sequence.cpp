#include "servelab/core/seed_sequence.hpp"

#include <algorithm>

namespace servelab::detail {
namespace {

constexpr std::size_t kN = 624, kS = 8;
constexpr std::size_t kT = 11;  // n >= 623
constexpr std::size_t kP = (kN - kT) / 2, kQ = kP + kT;
constexpr std::size_t kM = std::max(kS + 1, kN);
static_assert(kM == kN);

constexpr std::size_t wrap(std::size_t i) { return i >= kN ? i - kN : i; }

// `Lanes` lists in lockstep: the loop body holds that many independent chains.
template <std::size_t Lanes>
void generate_lanes(const SeedWords* seeds, StateWords* out) {
  for (std::size_t l = 0; l < Lanes; ++l) out[l].fill(0x8b8b8b8bu);
  // First pass, k in [0, m): begin[(k - 1) mod n] at k = 0 is still the fill value.
  for (std::size_t k = 0; k < kM; ++k) {
    const std::size_t kp = wrap(k + kP), kq = wrap(k + kQ), km1 = k == 0 ? kN - 1 : k - 1;
    for (std::size_t l = 0; l < Lanes; ++l) {
      std::uint32_t* b = out[l].data();
      const std::uint32_t arg = b[k] ^ b[kp] ^ b[km1];
      const std::uint32_t r1 = 1664525u * (arg ^ (arg >> 27));
      std::uint32_t r2 = r1;
      if (k == 0) {
        r2 += static_cast<std::uint32_t>(kS);
      } else if (k <= kS) {
        r2 += static_cast<std::uint32_t>(k) + seeds[l][k - 1];
      } else {
        r2 += static_cast<std::uint32_t>(k);
      }
      b[kp] += r1;
      b[kq] += r2;
      b[k] = r2;
    }
  }
  // Second pass, k in [m, m + n): k mod n runs over [0, n) again.
  for (std::size_t k = 0; k < kN; ++k) {
    const std::size_t kp = wrap(k + kP), kq = wrap(k + kQ), km1 = k == 0 ? kN - 1 : k - 1;
    for (std::size_t l = 0; l < Lanes; ++l) {
      std::uint32_t* b = out[l].data();
      const std::uint32_t arg = b[k] + b[kp] + b[km1];
      const std::uint32_t r3 = 1566083941u * (arg ^ (arg >> 27));
      const std::uint32_t r4 = r3 - static_cast<std::uint32_t>(k);
      b[kp] ^= r3;
      b[kq] ^= r4;
      b[k] = r4;
    }
  }
}

}  // namespace

void generate_states(std::span<const SeedWords> seeds, std::span<StateWords> out) {
  constexpr std::size_t kLanes = 4;
  std::size_t i = 0;
  for (; i + kLanes <= seeds.size(); i += kLanes) generate_lanes<kLanes>(&seeds[i], &out[i]);
  for (; i < seeds.size(); ++i) generate_lanes<1>(&seeds[i], &out[i]);
}

}  // namespace servelab::detail
