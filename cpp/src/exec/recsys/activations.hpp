// exp, sigmoid and tanh written without branches or library calls, so loops over them vectorise
// (std::exp does not without -ffast-math): DIEN's GRU gates and the attention softmax are a large
// share of those models' time otherwise. Relative error of exp below 2e-7 (Cephes' polynomial).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace servelab::exec::recsys {

inline float exp_poly(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  // n = round(x / ln2) by the 1.5 * 2^23 trick (exact for |x / ln2| < 2^22), since std::floor
  // vectorises only from SSE4.1 on; x = n ln2 + r, |r| <= ln2 / 2.
  constexpr float kRound = 12582912.0f;
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const auto scale = std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);  // 2^n
  return y * scale;
}

inline float sigmoid_poly(float x) { return 1.0f / (1.0f + exp_poly(-x)); }

inline float tanh_poly(float x) { return 2.0f / (1.0f + exp_poly(-2.0f * x)) - 1.0f; }

}  // namespace servelab::exec::recsys
