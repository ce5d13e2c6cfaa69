#!/usr/bin/env python3
"""Configuration search: servelab's C++ loop against the same algorithms in numpy.

Ribbon's BO (Matern 5/2 GP, length scale by marginal likelihood over a grid, expected improvement
with xi = 0.1 over the unpruned points) and random search with pruning run on a synthetic
three-type space shaped like Ribbon's (about 1,000 configs, minimise cost subject to QoS >= 99%).
The reference is a vectorised numpy/scipy version of the same loop. Both must find the same
optimum; then the time per search (to the optimum) and the ratio reference / servelab are
printed, never asserted.

    python benchmarks/python/bench_search.py           # 20 searches per case (`make bench`)
    python benchmarks/python/bench_search.py --smoke   # 2 searches per case (the test suite)
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from scipy.special import erfc
from timing import best_of

from servelab.solvers.search import SearchSpace, minimize_cost

UPPER = (8, 11, 9)
PRICES = (0.616, 0.384, 0.3328)
TARGET = 99.0
XI = 0.1
LENGTH_SCALES = np.geomspace(0.05 * 11, 5.0 * 11, 24)  # servelab's default grid on raw counts


def qos(x) -> float:
    capacity = x[0] + 0.55 * x[1] + 0.5 * x[2] - 0.02 * x[1] * x[2]
    return 100.0 * (1.0 - math.exp(-capacity / 1.4))


def space() -> SearchSpace:
    return SearchSpace(UPPER, unit_cost=PRICES, min_total=1)


class Reference:
    """Ribbon-style search state in numpy: enumerated points, alive mask, pruning."""

    def __init__(self, seed: int) -> None:
        grids = np.meshgrid(*[np.arange(u + 1) for u in UPPER], indexing="ij")
        points = np.stack([g.ravel() for g in grids], axis=1)
        self.points = points[points.sum(axis=1) >= 1]
        self.cost = self.points @ np.array(PRICES)
        self.alive = np.ones(len(self.points), dtype=bool)
        self.rng = np.random.default_rng(seed)
        self.evaluated: list[int] = []
        self.values: list[float] = []
        self.max_cost = self.cost.max()

    def evaluate(self, i: int) -> None:
        value = qos(tuple(int(v) for v in self.points[i]))
        self.alive[i] = False
        self.evaluated.append(i)
        self.values.append(value)
        if value >= TARGET:
            self.alive &= self.cost <= self.cost[i] + 1e-9
        else:
            self.alive &= ~np.all(self.points <= self.points[i], axis=1)

    def score(self, k: int) -> float:
        i, v = self.evaluated[k], self.values[k]
        return (
            0.5 + 0.5 * (1 - self.cost[i] / self.max_cost)
            if v >= TARGET
            else 0.5 * min(v / TARGET, 1.0)
        )

    def best_cost(self) -> float:
        feasible = [
            self.cost[i] for i, v in zip(self.evaluated, self.values, strict=True) if v >= TARGET
        ]
        return min(feasible) if feasible else math.inf

    def random_alive(self) -> int:
        return int(self.rng.choice(np.flatnonzero(self.alive)))


def matern52(a: np.ndarray, b: np.ndarray, scale: float) -> np.ndarray:
    r = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)) / scale
    s = math.sqrt(5.0) * r
    return (1.0 + s + s * s / 3.0) * np.exp(-s)


def reference_bo(seed: int, optimum: float) -> int:
    state = Reference(seed)
    for _ in range(2):
        state.evaluate(state.random_alive())
    while state.alive.any() and state.best_cost() > optimum + 1e-9:
        x = state.points[state.evaluated].astype(float)
        y = np.array([state.score(k) for k in range(len(state.evaluated))])
        mean, std = y.mean(), y.std() or 1.0
        yn = (y - mean) / std
        best_ll, best = -math.inf, None
        for scale in LENGTH_SCALES:
            k = matern52(x, x, scale) + 1e-6 * np.eye(len(x))
            try:
                factor = cho_factor(k, lower=True)
            except np.linalg.LinAlgError:
                continue
            alpha = cho_solve(factor, yn)
            ll = -0.5 * yn @ alpha - np.log(np.diag(factor[0])).sum()
            if ll > best_ll:
                best_ll, best = ll, (scale, factor, alpha)
        scale, factor, alpha = best
        candidates = np.flatnonzero(state.alive)
        k_star = matern52(x, state.points[candidates].astype(float), scale)
        mu = k_star.T @ alpha * std + mean
        v = solve_triangular(factor[0], k_star, lower=True)
        sigma = np.sqrt(np.maximum(1.0 - (v * v).sum(0), 0.0)) * std
        gain = mu - y.max() - XI
        z = gain / np.maximum(sigma, 1e-12)
        ei = np.where(
            sigma > 1e-12,
            gain * 0.5 * erfc(-z / math.sqrt(2))
            + sigma * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi),
            np.maximum(gain, 0.0),
        )
        state.evaluate(int(candidates[np.argmax(ei)]))
    return len(state.evaluated)


def reference_random(seed: int, optimum: float) -> int:
    state = Reference(seed)
    while state.alive.any() and state.best_cost() > optimum + 1e-9:
        state.evaluate(state.random_alive())
    return len(state.evaluated)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="2 searches per case")
    args = parser.parse_args(argv)
    runs = 2 if args.smoke else 20
    optimum = minimize_cost(space(), qos, TARGET, method="exhaustive").best_cost

    size = len(space().enumerate())
    print(f"search to the optimum (${optimum:.4f}/h) of a {size}-config space, {runs} seeds")
    header = ("case", "evals ours", "evals ref", "ours ms/eval", "ref ms/eval", "ratio")
    print("{:10} {:>10} {:>10} {:>12} {:>12} {:>7}".format(*header))
    cases = (("bayesian", reference_bo), ("random", reference_random))
    for method, reference in cases:
        ours_s, ours = best_of(
            lambda method=method: [
                minimize_cost(space(), qos, TARGET, method=method, seed=s, stop_at=optimum)
                for s in range(runs)
            ],
            1,
        )
        for result in ours:
            if not math.isclose(result.best_cost, optimum):
                raise SystemExit(f"{method}: servelab stopped at {result.best_cost}, not {optimum}")
        ref_s, ref_evals = best_of(
            lambda reference=reference: [reference(s, optimum) for s in range(runs)], 1
        )
        ours_evals = sum(r.evaluations for r in ours)
        ours_ms, ref_ms = 1e3 * ours_s / ours_evals, 1e3 * ref_s / sum(ref_evals)
        print(
            f"{method:10} {ours_evals / runs:10.1f} {sum(ref_evals) / runs:10.1f} "
            f"{ours_ms:12.3f} {ref_ms:12.3f} {ref_ms / ours_ms:7.1f}"
        )
    print("ratio = reference / servelab time per evaluation (above 1: servelab is faster)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
