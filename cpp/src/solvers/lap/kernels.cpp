#include "kernels.hpp"

#include <cstring>
#include <limits>

// GCC and Clang on x86-64 Linux: an AVX2 clone of each kernel next to the baseline one, picked
// once when the library loads. Not under ThreadSanitizer: it instruments the clones' resolver,
// which the loader runs before the sanitizer's runtime is up (a crash at start-up).
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__SANITIZE_THREAD__)
#define SERVELAB_LAP_KERNEL __attribute__((target_clones("avx2", "default")))
#else
#define SERVELAB_LAP_KERNEL
#endif

namespace servelab::solvers::lap_kernels {
namespace {

constexpr int kLanes = 4;  // the shuffles in two_smallest assume 4
using Doubles = double __attribute__((vector_size(8 * kLanes)));
using Ints = std::int64_t __attribute__((vector_size(8 * kLanes)));
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename V, typename T>
inline V load(const T* p) {
  V x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
template <typename V, typename T>
inline void store(T* p, V x) {
  std::memcpy(p, &x, sizeof x);
}
inline Doubles select(Ints mask, Doubles a, Doubles b) {
  return reinterpret_cast<Doubles>((mask & reinterpret_cast<Ints>(a)) | (~mask & reinterpret_cast<Ints>(b)));
}
inline Ints select(Ints mask, Ints a, Ints b) { return (mask & a) | (~mask & b); }
// Lane-wise min and max; NaN never occurs here (inputs are validated).
inline Doubles min(Doubles a, Doubles b) { return select(a < b, a, b); }
inline Doubles max(Doubles a, Doubles b) { return select(a < b, b, a); }
inline Doubles splat(double x) { return Doubles{} + x; }
inline Ints splat(std::int64_t x) { return Ints{} + x; }
inline Ints lane_index() {
  Ints idx{};
  for (int k = 0; k < kLanes; ++k) idx[k] = k;
  return idx;
}

}  // namespace

SERVELAB_LAP_KERNEL
void column_min(const double* row, std::int64_t i, double* col_min, std::int64_t* argmin, std::int32_t m) {
  const Ints iv = splat(i);
  std::int32_t j = 0;
  for (; j + kLanes <= m; j += kLanes) {
    const auto r = load<Doubles>(row + j);
    const auto cm = load<Doubles>(col_min + j);
    const Ints lower = r < cm;
    store(col_min + j, select(lower, r, cm));
    store(argmin + j, select(lower, iv, load<Ints>(argmin + j)));
  }
  for (; j < m; ++j) {
    if (row[j] < col_min[j]) {
      col_min[j] = row[j];
      argmin[j] = i;
    }
  }
}

SERVELAB_LAP_KERNEL
TwoSmallest two_smallest(const double* row, const double* v, std::int32_t m) {
  // Per lane the two smallest seen (lo <= hi) and where lo first occurred, then merged across
  // lanes without branches (an unpredictable branch costs more than the whole merge).
  Doubles lo = splat(kInf), hi = splat(kInf);
  Ints lo_index = splat(std::int64_t{-1}), index = lane_index();
  std::int32_t j = 0;
  for (; j + kLanes <= m; j += kLanes) {
    const Doubles x = load<Doubles>(row + j) - load<Doubles>(v + j);
    const Ints below = x < lo;
    hi = min(hi, max(lo, x));
    lo = select(below, x, lo);
    lo_index = select(below, index, lo_index);
    index += splat(std::int64_t{kLanes});
  }
  const auto merge = [&](Doubles lo2, Doubles hi2, Ints index2) {
    const Ints take = (lo2 < lo) | ((lo2 == lo) & (index2 < lo_index) & (index2 >= 0));
    hi = min(min(hi, hi2), max(lo, lo2));
    lo = select(take, lo2, lo);
    lo_index = select(take, index2, lo_index);
  };
  merge(__builtin_shufflevector(lo, lo, 2, 3, 0, 1), __builtin_shufflevector(hi, hi, 2, 3, 0, 1),
        __builtin_shufflevector(lo_index, lo_index, 2, 3, 0, 1));
  merge(__builtin_shufflevector(lo, lo, 1, 0, 3, 2), __builtin_shufflevector(hi, hi, 1, 0, 3, 2),
        __builtin_shufflevector(lo_index, lo_index, 1, 0, 3, 2));
  TwoSmallest out{lo[0], hi[0], static_cast<std::int32_t>(lo_index[0])};
  for (; j < m; ++j) scalar::take(out, row[j] - v[j], j);
  return out;
}

SERVELAB_LAP_KERNEL
bool all_valid(const double* x, std::int64_t count, double sign) {
  // NaN compares false, so !(sign * x > -inf) catches NaN and the forbidden infinity together.
  const Doubles s = splat(sign), low = splat(-kInf);
  Ints ok = splat(std::int64_t{-1});
  std::int64_t k = 0;
  for (; k + kLanes <= count; k += kLanes) ok &= (s * load<Doubles>(x + k)) > low;
  bool valid = (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
  for (; k < count; ++k) valid &= sign * x[k] > -kInf;
  return valid;
}

SERVELAB_LAP_KERNEL
std::int32_t find_reduced(const double* row, const double* v, std::int32_t m, double value, std::int32_t from) {
  std::int32_t j = from;
  const Doubles target = splat(value);
  for (; j + kLanes <= m; j += kLanes) {
    const Ints hit = (load<Doubles>(row + j) - load<Doubles>(v + j)) == target;
    if (hit[0] | hit[1] | hit[2] | hit[3]) break;
  }
  for (; j < m; ++j)
    if (row[j] - v[j] == value) return j;
  return -1;
}

SERVELAB_LAP_KERNEL
Relaxed relax(const double* row, const double* v, double h, double* dist, std::int64_t* pred, std::int64_t i,
              std::int32_t m) {
  const Doubles hv = splat(h);
  const Ints iv = splat(i);
  Doubles best = splat(kInf);
  Ints best_index = splat(std::int64_t{-1});
  Ints count = splat(std::int64_t{0});  // per lane: how many entries equal its best
  Ints index = lane_index();
  std::int32_t j = 0;
  for (; j + kLanes <= m; j += kLanes) {
    const Doubles t = (hv + load<Doubles>(row + j)) - load<Doubles>(v + j);
    Doubles d = load<Doubles>(dist + j);
    const Ints better = t < d;
    d = select(better, t, d);
    store(dist + j, d);
    store(pred + j, select(better, iv, load<Ints>(pred + j)));
    const Ints lower = d < best;                                         // strict: each lane keeps its first minimum
    count = select(lower, splat(std::int64_t{1}), count - (d == best));  // a true mask is -1
    best = select(lower, d, best);
    best_index = select(lower, index, best_index);
    index += splat(std::int64_t{kLanes});
  }
  Relaxed out{kInf, -1, false};
  std::int64_t attained = 0;
  for (int k = 0; k < kLanes; ++k) {
    if (best[k] < out.lowest) {
      out.lowest = best[k];
      out.index = static_cast<std::int32_t>(best_index[k]);
      attained = count[k];
    } else if (best[k] == out.lowest && best[k] < kInf) {
      if (best_index[k] < out.index) out.index = static_cast<std::int32_t>(best_index[k]);
      attained += count[k];
    }
  }
  for (; j < m; ++j) {
    const double t = (h + row[j]) - v[j];
    if (t < dist[j]) {
      dist[j] = t;
      pred[j] = i;
    }
    if (dist[j] < out.lowest) {
      out.lowest = dist[j];
      out.index = j;
      attained = 1;
    } else if (dist[j] == out.lowest) {
      ++attained;
    }
  }
  out.tied = attained > 1 && out.lowest < kInf;
  return out;
}

}  // namespace servelab::solvers::lap_kernels
