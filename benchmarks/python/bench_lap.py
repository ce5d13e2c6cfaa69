#!/usr/bin/env python3
"""Linear assignment from Python: servelab.solvers.linear_sum_assignment against scipy's.

For each size n, both solve the same set of distinct random n x n matrices (uniform in [0, 1)),
one call per matrix, as a scheduler would (every decision brings a new matrix). The optimal costs
are checked to agree first; then each side is timed, interleaved, best of N repeats, and the
per-call times and the ratio scipy / servelab are printed (above 1: servelab is faster).

A second table re-solves one matrix over and over. It flatters branchy code (the CPU learns the
branches of that one matrix), so it is a lower bound for the ratio rather than the typical case.

    python benchmarks/python/bench_lap.py            # full (`make bench`)
    python benchmarks/python/bench_lap.py --smoke    # a second or so (the test suite)
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment as scipy_lsa

from servelab.solvers import linear_sum_assignment as servelab_lsa

SIZES = (8, 20, 64, 128, 512)


@dataclass(frozen=True)
class Row:
    table: str
    n: int
    matrices: int
    scipy_us: float
    servelab_us: float

    @property
    def ratio(self) -> float:
        return self.scipy_us / self.servelab_us


def matrices_for(n: int, smoke: bool) -> int:
    if smoke:
        return 4
    return 400 if n <= 20 else 100 if n <= 64 else 30 if n <= 128 else 6


def check_agreement(mats: list[np.ndarray]) -> None:
    for c in mats:
        r1, c1 = scipy_lsa(c)
        r2, c2 = servelab_lsa(c)
        a, b = c[r1, c1].sum(), c[r2, c2].sum()
        if abs(a - b) > 1e-9 * max(1.0, abs(a)):
            raise SystemExit(f"mismatch on a {c.shape} matrix: scipy {a!r}, servelab {b!r}")


def time_calls(fn, mats: list[np.ndarray], loops: int) -> float:
    """Seconds per call over `loops` passes through `mats`."""
    t = time.perf_counter()
    for _ in range(loops):
        for c in mats:
            fn(c)
    return (time.perf_counter() - t) / (loops * len(mats))


def compare(table: str, n: int, mats: list[np.ndarray], repeats: int) -> Row:
    # Enough loops per repeat for ~20 ms of scipy work (small n calls are sub-microsecond).
    loops = max(1, int(0.02 / max(time_calls(scipy_lsa, mats, 1), 1e-9) / len(mats)))
    best = {"scipy": float("inf"), "servelab": float("inf")}
    for _ in range(repeats):  # interleaved, so that machine noise hits both alike
        best["scipy"] = min(best["scipy"], time_calls(scipy_lsa, mats, loops))
        best["servelab"] = min(best["servelab"], time_calls(servelab_lsa, mats, loops))
    return Row(table, n, len(mats), best["scipy"] * 1e6, best["servelab"] * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny run for the test suite")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    repeats = 2 if args.smoke else 9
    rng = np.random.default_rng(20230616)

    rows = []
    print("linear_sum_assignment, distinct random matrices (one call per matrix)")
    print(f"{'n':>5} {'matrices':>9} {'scipy us':>11} {'servelab us':>12} {'ratio':>7}")
    for n in SIZES:
        mats = [rng.random((n, n)) for _ in range(matrices_for(n, args.smoke))]
        check_agreement(mats)
        row = compare("distinct", n, mats, repeats)
        rows.append(row)
        times = f"{row.scipy_us:>11.2f} {row.servelab_us:>12.2f}"
        print(f"{n:>5} {row.matrices:>9} {times} {row.ratio:>6.2f}x")

    print("\nthe same matrix solved repeatedly (branch predictors trained on it)")
    print(f"{'n':>5} {'scipy us':>21} {'servelab us':>12} {'ratio':>7}")
    for n in SIZES:
        row = compare("repeated", n, [rng.random((n, n))], repeats)
        rows.append(row)
        print(f"{n:>5} {row.scipy_us:>21.2f} {row.servelab_us:>12.2f} {row.ratio:>6.2f}x")

    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) | {"ratio": r.ratio} for r in rows], f, indent=2)


if __name__ == "__main__":
    main()
