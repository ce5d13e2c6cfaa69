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

#if defined(__x86_64__) && defined(__GNUC__)
#define SERVELAB_SEED_AVX2 1
// With AVX2 (checked at run time; the build targets plain x86-64): lists in the lanes of 8-word
// vectors (GCC's vector extensions), `Groups` vectors in lockstep, the same steps as
// generate_lanes, each one instruction for eight lists: 10,000 workers' streams are seeded in
// 8.7 ms instead of 14.3. Without AVX2 the multiplies would be emulated, slower than the scalar
// lanes (17 ms, measured), so such a machine keeps those.
using Lanes8 = std::uint32_t __attribute__((vector_size(32)));
constexpr std::size_t kVectorLanes = 8;

template <std::size_t Groups>
__attribute__((target("avx2"))) void generate_vectors(const SeedWords* seeds, StateWords* out) {
  static_assert(Groups * kN * sizeof(Lanes8) <= 40 * 1024, "the states should stay in the first-level cache");
  Lanes8 b[kN][Groups];
  for (auto& step : b) {
    for (auto& v : step) v = Lanes8{} + 0x8b8b8b8bu;
  }
  Lanes8 seed_at[kS][Groups];  // seed_at[j][g][l] = seeds[g * 8 + l][j]
  for (std::size_t j = 0; j < kS; ++j) {
    for (std::size_t g = 0; g < Groups; ++g) {
      for (std::size_t l = 0; l < kVectorLanes; ++l) seed_at[j][g][l] = seeds[g * kVectorLanes + l][j];
    }
  }
  // Each step reads the previous step's result (begin[k - 1]), kept in a register: read back
  // from memory, every step would wait on the store of the one before (nothing else writes
  // begin[k - 1] in between: a step writes at k + p and k + q, then at k).
  Lanes8 previous[Groups];
  for (std::size_t g = 0; g < Groups; ++g) previous[g] = b[kN - 1][g];
  for (std::size_t k = 0; k < kM; ++k) {
    const std::size_t kp = wrap(k + kP), kq = wrap(k + kQ);
    const std::uint32_t add = k == 0 ? static_cast<std::uint32_t>(kS) : static_cast<std::uint32_t>(k);
    for (std::size_t g = 0; g < Groups; ++g) {
      const Lanes8 arg = b[k][g] ^ b[kp][g] ^ previous[g];
      const Lanes8 r1 = 1664525u * (arg ^ (arg >> 27));
      Lanes8 r2 = r1 + add;
      if (k >= 1 && k <= kS) r2 += seed_at[k - 1][g];
      b[kp][g] += r1;
      b[kq][g] += r2;
      b[k][g] = previous[g] = r2;
    }
  }
  for (std::size_t k = 0; k < kN; ++k) {
    const std::size_t kp = wrap(k + kP), kq = wrap(k + kQ);
    for (std::size_t g = 0; g < Groups; ++g) {
      const Lanes8 arg = b[k][g] + b[kp][g] + previous[g];
      const Lanes8 r3 = 1566083941u * (arg ^ (arg >> 27));
      const Lanes8 r4 = r3 - static_cast<std::uint32_t>(k);
      b[kp][g] ^= r3;
      b[kq][g] ^= r4;
      b[k][g] = previous[g] = r4;
    }
  }
  for (std::size_t g = 0; g < Groups; ++g) {
    for (std::size_t l = 0; l < kVectorLanes; ++l) {
      for (std::size_t k = 0; k < kN; ++k) out[g * kVectorLanes + l][k] = b[k][g][l];
    }
  }
}

bool has_avx2() {
  // cpu_init first: streams may be seeded by a static initializer, before libgcc's own has run.
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
  return has;
}
#endif

}  // namespace

void generate_states(std::span<const SeedWords> seeds, std::span<StateWords> out) {
  std::size_t i = 0;
#ifdef SERVELAB_SEED_AVX2
  if (has_avx2()) {
    for (; i + 2 * kVectorLanes <= seeds.size(); i += 2 * kVectorLanes) generate_vectors<2>(&seeds[i], &out[i]);
    for (; i + kVectorLanes <= seeds.size(); i += kVectorLanes) generate_vectors<1>(&seeds[i], &out[i]);
  }
#endif
  constexpr std::size_t kLanes = 4;
  for (; i + kLanes <= seeds.size(); i += kLanes) generate_lanes<kLanes>(&seeds[i], &out[i]);
  for (; i < seeds.size(); ++i) generate_lanes<1>(&seeds[i], &out[i]);
}

}  // namespace servelab::detail
