#!/usr/bin/env python3
"""Kairos's upper bound of every configuration under the budget: servelab against plain Python.

The reference is the artifact's computation written out in plain Python (enumerate the box, keep
the configurations under the budget, bound each, stable-sort); it must give the same ranking and
the same numbers as servelab before anything is timed. Prints the time of one full ranking for
both, their ratio, and servelab's time against the 1 ms goal and the paper's "within 2 seconds".
Printed, never asserted.

    python benchmarks/python/bench_kairos_bounds.py           # budgets $2.5, $5 and $10/h
    python benchmarks/python/bench_kairos_bounds.py --smoke   # $2.5/h only, few repeats
"""

from __future__ import annotations

import argparse
import itertools
import math

from timing import best_of

from servelab import kairos
from servelab._core import kairos as _k

TYPES = ["g4dn.xlarge", "c5n.2xlarge", "r5n.large", "t3.xlarge"]
PRICES = [0.526, 0.432, 0.149, 0.1664]
MAX_NUM = [5, 6, 17, 15]
# allocator_profile.json's rm2 entry (Kairos artifact).
GPU_QPS = 15.04
AUX = {
    "c5n.2xlarge": (10.73, 910, 0.989, 0.959, {910: 10.73}),
    "r5n.large": (10.39, 870, 0.984, 0.941, {870: 10.39, 910: 10.27}),
    "t3.xlarge": (6.39, 400, 0.837, 0.614, {400: 6.39, 910: 4.74, 870: 4.83}),
}


def reference(budget: float, max_num: list[int]) -> list[tuple[tuple[int, ...], float]]:
    """The artifact's ranking, in plain Python."""
    out = []
    for counts in itertools.product(*(range(m + 1) for m in max_num)):
        price = 0.0
        for p, n in zip(PRICES, counts, strict=True):
            price += p * n
        if price > budget + 1e-9 * max(1.0, budget) or counts[0] == 0:
            continue
        present = [(t, n) for t, n in zip(TYPES[1:], counts[1:], strict=True) if n]
        if not present:
            out.append((counts, GPU_QPS * counts[0]))
            continue
        s = max(AUX[t][1] for t, _ in present)
        f = max(AUX[t][2] for t, _ in present)
        r = max(AUX[t][3] for t, _ in present)
        total = sum([n * AUX[t][4][s] for t, n in present])
        large = GPU_QPS * (1 - f) / (1 - r)
        max_qps = total / f
        target = max_qps - total
        if target >= large * counts[0]:
            out.append((counts, large * counts[0] / (1 - f)))
        else:
            out.append((counts, max_qps + GPU_QPS * counts[0] * (1 - target / (large * counts[0]))))
    return sorted(out, key=lambda item: item[1], reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one budget, few repeats")
    args = parser.parse_args()
    inputs = _k.BoundProfile(
        "g4dn.xlarge", GPU_QPS, [_k.AuxiliaryProfile(t, *v) for t, v in AUX.items()]
    )
    scales = [1] if args.smoke else [1, 2, 4]
    repeats = 3 if args.smoke else 20
    print(
        f"{'budget $/h':>10} {'configs':>8} {'servelab ms':>12} {'python ms':>10} {'ratio':>8} "
        f"{'vs 1 ms goal':>13} {'vs paper 2 s':>13}"
    )
    for scale in scales:
        budget = 2.5 * scale
        max_num = [math.ceil(m * scale) for m in MAX_NUM]
        space = kairos.InstanceSpace(TYPES, PRICES, max_num, budget)
        ours_s, table = best_of(
            lambda space=space: _k.upper_bounds(inputs, space, "artifact"), repeats * 10
        )
        ref_s, ref = best_of(lambda b=budget, m=max_num: reference(b, m), max(1, repeats // scale))
        counts = table.counts
        ours = [(tuple(int(x) for x in counts[i]), float(table.bound[i])) for i in table.order]
        if ours != ref:
            raise SystemExit(f"servelab and the reference disagree at budget {budget}")
        print(
            f"{budget:>10.1f} {len(table):>8} {ours_s * 1e3:>12.4f} {ref_s * 1e3:>10.2f} "
            f"{ref_s / ours_s:>7.0f}x {1e-3 / ours_s:>12.1f}x {2.0 / ours_s:>12.0f}x"
        )
    print("rankings identical to the reference; ratio = plain Python / servelab")


if __name__ == "__main__":
    main()
