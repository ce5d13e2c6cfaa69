#!/usr/bin/env python3
"""Hera's offline algorithms: servelab (C++) against a straightforward Python implementation
(reference_hera.py) of the same algorithm, on synthetic lookup tables.

  (a) Algorithm 1, the co-location affinity table of 100 models (11 LLC ways): goal <= 10 ms
      (the paper: "less than one second" for hundreds of models);
  (b) Algorithm 2, the cluster schedule of 100 models onto about 1,000 servers: goal <= 1 ms
      (the paper: "less than 100 ms").
Both sides must agree (same affinity table, same server sequence) before they are timed. The
times and ratios are printed, never asserted.

    python benchmarks/python/bench_hera.py            # full
    python benchmarks/python/bench_hera.py --smoke    # small, a second
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import reference_hera  # noqa: E402
from timing import best_of  # noqa: E402

import servelab  # noqa: E402

WAYS = 11
SYSTEM_BW = 128.0


def synthetic_tables(n: int, seed: int):
    """Per model: QPS rising with ways (half cores), its bandwidth, class, isolated QPS and the
    QPS kept on a shared server; deterministic in the seed."""
    rng = np.random.default_rng(seed)
    sensitivity = rng.uniform(0.05, 1.5, n)
    ways = np.arange(WAYS + 1)
    qps = np.zeros((n, WAYS + 1))
    qps[:, 1:] = 1 - np.exp(-np.outer(1 / sensitivity, ways[1:]) / 2) * 0.6
    qps *= rng.uniform(100, 20000, n)[:, None]
    bandwidth = rng.uniform(1, 100, n)
    high = rng.random(n) > 0.3
    isolated = rng.uniform(200, 25000, n)
    share = rng.uniform(0.3, 0.9, (n, n))
    pair = share * isolated[:, None]
    np.fill_diagonal(pair, 0)
    return qps, bandwidth, high, isolated, pair


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args()
    n, servers, repeats = (20, 100, 1) if args.smoke else (100, 1000, 5)
    core = servelab._core.hera
    qps, bw, high, isolated, pair = synthetic_tables(n, seed=0)

    ours_s, ours = best_of(lambda: core.affinity_matrix(qps, bw, SYSTEM_BW), repeats)
    ref_s, ref = best_of(
        lambda: reference_hera.affinity_matrix(qps.tolist(), bw.tolist(), SYSTEM_BW), 1
    )
    same = np.allclose(ours, np.array(ref), rtol=1e-12, atol=0)
    print(f"(a) affinity table, {n} models x {WAYS} ways: identical {same}")
    print(
        f"    servelab {ours_s * 1e3:8.3f} ms   reference {ref_s * 1e3:9.2f} ms"
        f"   ratio {ref_s / ours_s:7.0f}x"
    )
    print(f"    goal <= 10 ms: {'met' if ours_s <= 0.010 else 'MISSED'} (paper: < 1 s)")
    if not same:
        return 1

    # Targets sized so that the Hera placement needs about `servers` servers.
    target = isolated * servers / n
    aff = ours
    # The reference gets plain lists, converted before timing.
    lists = (isolated.tolist(), high.tolist(), aff.tolist(), pair.tolist(), target.tolist())
    for selection in ("hera", "deeprecsys"):
        ours_s, plan = best_of(
            lambda s=selection: core.schedule_cluster(isolated, lists[1], aff, pair, target, s),
            repeats,
        )
        ref_s, ref_servers = best_of(lambda s=selection: reference_hera.schedule(*lists, s), 1)
        placed = list(zip(plan["model_a"].tolist(), plan["model_b"].tolist(), strict=True))
        same = placed == ref_servers
        print(
            f"(b) cluster schedule ({selection}), {n} models -> {len(placed)} servers: "
            f"identical {same}"
        )
        print(
            f"    servelab {ours_s * 1e3:8.3f} ms   reference {ref_s * 1e3:9.2f} ms"
            f"   ratio {ref_s / ours_s:7.0f}x"
        )
        print(f"    goal <= 1 ms: {'met' if ours_s <= 0.001 else 'MISSED'} (paper: < 100 ms)")
        if not same:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
