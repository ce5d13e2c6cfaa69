// IEEE half precision <-> float, for FP16 tensors written or read as JSON numbers.
#pragma once

#include <bit>
#include <cstdint>

namespace servelab::frontend {

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, nan
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    // Subnormal: normalise it.
    exp = 1;
    while (!(mant & 0x400)) {
      mant <<= 1;
      --exp;
    }
    mant &= 0x3ff;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// Rounds to nearest, ties to even, as numpy's astype(float16).
inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0);  // inf, nan
  if (abs >= 0x477ff000) return sign | 0x7c00;                                   // rounds past 65504: inf
  if (abs < 0x38800000) {                                                        // subnormal or zero
    if (abs < 0x33000000) return sign;
    const std::uint32_t e = abs >> 23, m = (abs & 0x7fffff) | 0x800000;
    const std::uint32_t shift = 126 - e;  // 14 + (112 - e) + 1 ... bits dropped below the half's lsb
    std::uint32_t half = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return sign | static_cast<std::uint16_t>(half);
  }
  std::uint32_t half = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | static_cast<std::uint16_t>(half);
}

}  // namespace servelab::frontend
