// Transition rows of RAMSIS's per-worker MDP; the derivation is in mdp_transitions.hpp.
#include "mdp_transitions.hpp"

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <numeric>

#include "servelab/systems/ramsis/arrivals.hpp"

namespace servelab::ramsis::detail {

std::int32_t Grid::level_of(double value) const {
  const auto it = std::upper_bound(levels.begin(), levels.end(), value);
  if (it == levels.begin()) return 0;
  return static_cast<std::int32_t>(it - levels.begin()) - 1;
}

LevelCdfs::LevelCdfs(const Grid& grid, double rate, std::int32_t stride) : max_i_(grid.max_queue) {
  const std::int64_t top = static_cast<std::int64_t>(max_i_) * stride;
  std::vector<double> cdf(static_cast<std::size_t>(top + 1));
  cdf_.resize(static_cast<std::size_t>(grid.num_levels()) * (max_i_ + 1));
  for (std::int32_t level = 0; level < grid.num_levels(); ++level) {
    poisson_cdf_prefix(rate * (grid.slo - grid.levels[level]), top + 1, cdf.data());
    for (std::int32_t i = 0; i <= max_i_; ++i)
      cdf_[level * (max_i_ + 1) + i] = cdf[static_cast<std::size_t>(i) * stride];
  }
}

const std::vector<double>& PhaseWeights::get(std::int32_t n, std::int32_t j, double rate, std::int32_t stride) {
  const std::int32_t state = n > grid_.max_queue ? grid_.overflow_state() : n * grid_.num_levels() + j;
  auto& w = cache_[static_cast<std::size_t>(state)];
  if (w.empty()) {
    w.resize(static_cast<std::size_t>(stride));
    conditional_poisson_weights(rate * (grid_.slo - grid_.levels[j]), static_cast<std::int64_t>(n - 1) * stride, stride,
                                w.data());
  }
  return w;
}

namespace {

// Scales a row so that it sums to 1 with the full-queue state taking 1 - sum (the artifact's
// Eq. 3), drops entries below `prune` and renormalises what is left; sorted by next state.
Row finish(std::vector<std::pair<std::int32_t, double>>& entries, std::int32_t overflow_state, double prune) {
  double total = 0;
  for (const auto& e : entries) total += e.second;
  const double overflow = std::max(0.0, 1.0 - total);
  if (overflow > 0) entries.emplace_back(overflow_state, overflow);
  const double scale = 1.0 / (total + overflow);
  double kept = 0;
  Row row;
  if (!std::is_sorted(entries.begin(), entries.end())) std::sort(entries.begin(), entries.end());
  for (const auto& [state, p] : entries) {
    const double q = p * scale;
    if (q <= 0 || q < prune) continue;
    row.next.push_back(state);
    row.prob.push_back(q);
    kept += q;
  }
  if (kept != 1.0) {
    for (auto& q : row.prob) q /= kept;
  }
  return row;
}

}  // namespace

std::vector<Row> maximal_rows(const Grid& grid, double rate, std::int32_t stride, const LevelCdfs& cdfs,
                              PhaseWeights& weights, std::int32_t n, double tau, const std::vector<std::int32_t>& js,
                              double prune) {
  const std::int32_t N = grid.max_queue, L = grid.num_levels(), K = stride;
  const double slo = grid.slo;
  const std::int64_t qmax = static_cast<std::int64_t>(N + 1) * K;  // m + c <= K - 1 + N K
  std::vector<double> ptau(static_cast<std::size_t>(qmax + 1)), cdftau(ptau.size());
  poisson_pmf_range(rate * tau, 0, qmax + 1, ptau.data());
  {
    double s = 0;
    for (std::size_t q = 0; q < ptau.size(); ++q) cdftau[q] = std::min(s += ptau[q], 1.0);
  }

  // Next queue lengths n' that can carry any mass: P(N(tau) in [(n'-1)K + 1, (n'+1)K - 1]).
  const double eps = prune * 1e-6;
  std::int32_t nlo = N + 1, nhi = 0;
  for (std::int32_t np = 1; np <= N; ++np) {
    double mass = 0;
    const std::int64_t hi = std::min<std::int64_t>(static_cast<std::int64_t>(np + 1) * K - 1, qmax);
    for (std::int64_t q = static_cast<std::int64_t>(np - 1) * K + 1; q <= hi; ++q) mass += ptau[q];
    if (prune == 0 || mass >= eps) {
      nlo = std::min(nlo, np);
      nhi = std::max(nhi, np);
    }
  }
  const std::int32_t NN = nhi >= nlo ? nhi - nlo + 1 : 0;

  // Slot boundaries e_i = max(0, tau - SLO + T_i): 0, then those above 0 (from level i0 on).
  std::int32_t i0 = 1;
  while (i0 < L - 1 && tau - slo + grid.levels[i0] <= 0) ++i0;
  const std::int32_t NB = L - i0 + 1;
  std::vector<double> bound(static_cast<std::size_t>(NB));
  bound[0] = 0;
  for (std::int32_t bi = 1; bi < NB; ++bi) bound[bi] = std::max(0.0, tau - slo + grid.levels[i0 + bi - 1]);

  // phiT[m - 1][r]: Phi(boundary, m, n') with r = bi * NN + (n' - nlo); the last row r = NB * NN
  // holds P(N(tau) <= m - 1), the mass that leaves the queue empty.
  const std::int32_t R = NB * NN + 1;
  std::vector<double> phiT(static_cast<std::size_t>(K) * R);
  std::vector<double> pt(static_cast<std::size_t>(K));
  std::vector<double> psi(static_cast<std::size_t>(K) * (NN + 1));  // [ci][m - 1], c = (nlo - 1 + ci) K
  for (std::int32_t m = 1; m <= K; ++m) phiT[static_cast<std::size_t>(m - 1) * R + NB * NN] = cdftau[m - 1];
  if (NN > 0) {
    for (std::int32_t bi = 0; bi < NB; ++bi) {
      const double t = bound[bi];
      const double rho = std::clamp(t / tau, 0.0, 1.0);
      poisson_pmf_range(rate * t, 0, K, pt.data());
      for (std::int32_t ci = 0; ci <= NN; ++ci) {
        const std::int64_t c = static_cast<std::int64_t>(nlo - 1 + ci) * K;
        const double qu = bi == 0 ? cdftau[c] : cdfs.at(i0 + bi - 1, nlo - 1 + ci);
        double* out = &psi[static_cast<std::size_t>(ci) * K];
        double value = pt[0] * qu;
        out[0] = value;
        double beta = 0;  // P(Bin(m + c) <= m - 1)
        double pi = rho < 1 ? std::pow(1 - rho, static_cast<double>(c)) : (c == 0 ? 1.0 : 0.0);  // P(Bin(m + c) = m)
        for (std::int32_t m = 1; m < K; ++m) {
          beta += (1 - rho) * pi;
          pi *= static_cast<double>(m + c) / m * rho;
          value += pt[m] * qu + ptau[m + c] * beta;
          out[m] = value;
        }
      }
      for (std::int32_t k = 0; k < NN; ++k) {
        const std::size_t r = static_cast<std::size_t>(bi) * NN + k;
        for (std::int32_t m = 0; m < K; ++m) {
          phiT[static_cast<std::size_t>(m) * R + r] =
              std::max(0.0, psi[static_cast<std::size_t>(k + 1) * K + m] - psi[static_cast<std::size_t>(k) * K + m]);
        }
      }
    }
  }

  // Kernel rows that are negligible for every phase cannot make an entry above `prune`: mix only
  // the others (the first arrival must come early enough for N(t) < m to stay likely).
  const double negligible = prune * 1e-3;
  std::vector<std::int32_t> active;  // kernel rows to mix, the empty-queue row last
  for (std::int32_t r = 0; r < R; ++r) {
    double top = 0;
    for (std::int32_t m = 0; m < K; ++m) top = std::max(top, phiT[static_cast<std::size_t>(m) * R + r]);
    if (r == R - 1 || top > negligible) active.push_back(r);
  }
  const auto RA = static_cast<std::int32_t>(active.size());
  std::vector<double> packed(static_cast<std::size_t>(K) * RA);
  for (std::int32_t m = 0; m < K; ++m) {
    for (std::int32_t a = 0; a < RA; ++a) {
      packed[static_cast<std::size_t>(m) * RA + a] = phiT[static_cast<std::size_t>(m) * R + active[a]];
    }
  }

  std::vector<Row> rows;
  rows.reserve(js.size());
  std::vector<double> mixed_active(static_cast<std::size_t>(RA)), mixed(static_cast<std::size_t>(R));
  std::vector<std::pair<std::int32_t, double>> entries;
  const std::int32_t first_slot = i0 - 1;
  for (const std::int32_t j : js) {
    const std::vector<double>& w = weights.get(n, j, rate, K);
    std::fill(mixed_active.begin(), mixed_active.end(), 0.0);
    for (std::int32_t m = 1; m <= K; ++m) {
      const double wm = w[K - m];  // phase x = K - m
      if (wm < 1e-300) continue;
      const double* col = &packed[static_cast<std::size_t>(m - 1) * RA];
      for (std::int32_t a = 0; a < RA; ++a) mixed_active[a] += wm * col[a];
    }
    std::fill(mixed.begin(), mixed.end(), 0.0);
    for (std::int32_t a = 0; a < RA; ++a) mixed[active[a]] = mixed_active[a];
    // In next-state order: n' = 1's slots, (1, SLO) for no arrival, then n' = 2, ...
    entries.clear();
    const double empty = mixed[R - 1];
    bool empty_done = false;
    for (std::int32_t k = 0; k < NN; ++k) {
      if (!empty_done && nlo + k > 1) {
        entries.emplace_back(L + L - 1, empty);
        empty_done = true;
      }
      for (std::int32_t bi = 0; bi + 1 < NB; ++bi) {
        const double v = mixed[bi * NN + k] - mixed[(bi + 1) * NN + k];
        if (v > 0) entries.emplace_back((nlo + k) * L + first_slot + bi, v);
      }
    }
    if (!empty_done) entries.emplace_back(L + L - 1, empty);
    rows.push_back(finish(entries, grid.overflow_state(), prune));
  }
  return rows;
}

namespace {

// P(Bin(q, rho) <= k) for q = q0 .. q0 + count - 1 (k < q0), by one incomplete beta and a
// recurrence in q.
void binomial_cdfs(std::int64_t k, std::int64_t q0, std::int32_t count, double rho, double* out) {
  if (rho <= 0) {
    std::fill(out, out + count, 1.0);
    return;
  }
  if (rho >= 1) {
    std::fill(out, out + count, 0.0);
    return;
  }
  using Double = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  double cdf = boost::math::ibeta(static_cast<double>(q0 - k), static_cast<double>(k + 1), 1 - rho, Double());
  const double log_pmf = std::lgamma(q0 + 1.0) - std::lgamma(k + 1.0) - std::lgamma(static_cast<double>(q0 - k) + 1.0) +
                         k * std::log(rho) + (q0 - k) * std::log1p(-rho);
  double pmf = std::exp(log_pmf);
  for (std::int32_t i = 0; i < count; ++i) {
    out[i] = std::clamp(cdf, 0.0, 1.0);
    const double q = static_cast<double>(q0 + i);
    cdf -= rho * pmf;  // P(Bin(q+1) <= k) = P(Bin(q) <= k) - rho P(Bin(q) = k)
    pmf *= (q + 1) / (q + 1 - k) * (1 - rho);
  }
}

}  // namespace

NewArrivals::NewArrivals(double rate, std::int32_t K, double tau, std::int32_t max_queue) : stride(K) {
  const std::int64_t qmax = static_cast<std::int64_t>(max_queue + 1) * K;
  std::vector<double> cdf(static_cast<std::size_t>(qmax + 1));
  poisson_cdf_prefix(rate * tau, qmax + 1, cdf.data());
  auto cdf_at = [&](std::int64_t q) { return q < 0 ? 0.0 : cdf[static_cast<std::size_t>(q)]; };
  p.resize(static_cast<std::size_t>(max_queue + 1) * K);
  top.assign(static_cast<std::size_t>(max_queue + 1), 0.0);
  for (std::int32_t a = 0; a <= max_queue; ++a) {
    for (std::int32_t x = 0; x < K; ++x) {
      // N(tau) in [aK - x, aK + K - 1 - x]: the first new arrival is event K - x.
      const std::int64_t lo = static_cast<std::int64_t>(a) * K - x;
      const double v = std::max(0.0, cdf_at(lo + K - 1) - cdf_at(lo - 1));
      p[static_cast<std::size_t>(a) * K + x] = v;
      top[a] = std::max(top[a], v);
    }
  }
}

Row variable_row(const Grid& grid, double rate, std::int32_t stride, PhaseWeights& weights, std::int32_t n,
                 std::int32_t j, std::int32_t b, double tau, const NewArrivals& arrivals, double prune) {
  const std::int32_t N = grid.max_queue, L = grid.num_levels(), K = stride;
  const double slo = grid.slo, tj = grid.levels[j], ta = slo - tj;
  const std::int64_t q0 = static_cast<std::int64_t>(n - 1) * K;
  const std::vector<double>& w = weights.get(n, j, rate, K);
  // Phases too unlikely to make any entry reach `prune` are left out.
  const double negligible = prune * 1e-3;
  std::int32_t xlo = 0, xhi = K - 1;
  while (prune > 0 && xlo < xhi && w[xlo] < negligible / K) ++xlo;
  while (prune > 0 && xhi > xlo && w[xhi] < negligible / K) --xhi;
  const std::int32_t X = xhi - xlo + 1;

  // wg[j' * X + x - xlo] = w[x] P(the (b+1)-th query's slack lands in slot j' | phase x).
  std::vector<double> wg(static_cast<std::size_t>(L) * X, 0.0);
  std::int32_t jlo = L, jhi = -1;
  if (ta <= 0) {
    const std::int32_t slot = grid.level_of(tj - tau);
    for (std::int32_t x = xlo; x <= xhi; ++x) wg[static_cast<std::size_t>(slot) * X + x - xlo] = w[x];
    jlo = jhi = slot;
  } else {
    // Boundaries f_i = clamp(T_i - T_j + tau, 0, T_A), f_0 = 0, f_L = T_A: the slot of the (b+1)-th
    // query is j' when its arrival time (after the earliest's) is in (f_j', f_j'+1]. Given N(T_A) = q,
    // P(T_bK > f) = P(Bin(q, f / T_A) <= bK - 1). Slots whose boundaries coincide are empty: only
    // those between the first boundary above 0 and the first at T_A can carry mass.
    auto boundary = [&](std::int32_t i) {
      return i == 0 ? 0.0 : i == L ? ta : std::clamp(grid.levels[i] - tj + tau, 0.0, ta);
    };
    std::int32_t first = 1;
    while (first < L && boundary(first) <= 0) ++first;
    std::int32_t last = first;
    while (last < L && boundary(last) < ta) ++last;
    jlo = first - 1;
    jhi = last - 1;
    const std::int32_t count = last - first + 2;  // boundaries first - 1 .. last
    std::vector<double> above(static_cast<std::size_t>(count) * X);
    const std::int64_t k = static_cast<std::int64_t>(b) * K - 1;
    for (std::int32_t i = first - 1; i <= last; ++i) {
      binomial_cdfs(k, q0 + xlo, X, boundary(i) / ta, &above[static_cast<std::size_t>(i - first + 1) * X]);
    }
    for (std::int32_t s = jlo; s <= jhi; ++s) {
      const double* hi = &above[static_cast<std::size_t>(s - jlo) * X];
      const double* lo = &above[static_cast<std::size_t>(s - jlo + 1) * X];
      double* out = &wg[static_cast<std::size_t>(s) * X];
      for (std::int32_t x = 0; x < X; ++x) out[x] = w[xlo + x] * std::max(0.0, hi[x] - lo[x]);
    }
  }

  // P(n - b + a, j') = sum_x w[x] g[j', x] P(a new arrivals | x); rows of `arrivals` that are
  // negligible for every phase cannot make an entry above `prune`.
  std::vector<std::pair<std::int32_t, double>> entries;
  for (std::int32_t a = 0; a <= N - (n - b); ++a) {
    if (prune > 0 && arrivals.top[a] <= negligible) continue;
    const double* pa = &arrivals.p[static_cast<std::size_t>(a) * K + xlo];
    const std::int32_t np = n - b + a;
    for (std::int32_t s = jlo; s <= jhi; ++s) {
      const double* ws = &wg[static_cast<std::size_t>(s) * X];
      double v = 0;
      for (std::int32_t x = 0; x < X; ++x) v += ws[x] * pa[x];
      if (v > 0) entries.emplace_back(np * L + s, v);
    }
  }
  return finish(entries, grid.overflow_state(), prune);
}

}  // namespace servelab::ramsis::detail
