#!/usr/bin/env python3
"""Simulator throughput: FCFS with 100 workers over 1M queries, against plain Python.

Checks first that servelab's engine and the plain-Python reference (reference_fcfs.py) give the
same finish time for every query, then prints simulated queries per second for both, their ratio,
and the bytes each query record takes. Printed, never asserted.

    python benchmarks/python/bench_sim.py           # 1M queries (`make bench`)
    python benchmarks/python/bench_sim.py --smoke   # small (the test suite)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import reference_engine  # noqa: E402
from reference_fcfs import simulate_fcfs  # noqa: E402
from timing import best_of  # noqa: E402

import servelab  # noqa: E402

WORKERS = 100
SERVICE_MS_AT_1, SERVICE_MS_PER_ITEM = 8.0, 0.5  # a linear latency profile, batch 1..16


def scenario(queries: int) -> dict:
    profile = servelab.Profile("benchmark: linear latency, one hardware type")
    profile.set_price("cpu", 0.1)
    for batch in range(1, 17):
        ms = SERVICE_MS_AT_1 + SERVICE_MS_PER_ITEM * (batch - 1)
        profile.set_latency("cpu", "m", batch, samples_s=[ms / 1e3])
    mean_service_s = (SERVICE_MS_AT_1 + SERVICE_MS_PER_ITEM * 7.5) / 1e3
    rate = 0.8 * WORKERS / mean_service_s  # about 80% utilisation
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": WORKERS}],
        "workload": {
            "arrivals": f"poisson(rate={rate:.6g})",
            "count": queries,
            "apps": [{"name": "a", "slo_ms": 100, "sizes": "uniform(low=1, high=16)"}],
        },
        "scheduler": "fcfs",
        "service": "mean",
        "seed": 7,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="20k queries, one repeat")
    parser.add_argument("--queries", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    queries = 20_000 if args.smoke else args.queries
    reference_queries = min(queries, 20_000 if args.smoke else 200_000)
    repeats = 1 if args.smoke else 3
    sc = scenario(queries)

    ours_s, result = best_of(lambda: servelab.simulate(sc), repeats)
    cols = result.columns
    assert (cols["status"] == 0).all(), "every query should complete"

    # The reference runs the same queries (a prefix when it would take too long).
    wl = servelab.Scenario.from_dict(sc).build_workload().generate(seed=sc["seed"])
    arrivals = np.rint(wl["arrival_s"][:reference_queries] * 1e9).astype(np.int64).tolist()
    sizes = wl["size"][:reference_queries].tolist()
    table = sc["profile"].decision_table_ns("cpu", "m", "mean").tolist()
    service = table[1:]  # entry 0 repeats batch 1; service[b - 1] is batch b
    slo_ns = sc["workload"]["apps"][0]["slo_ms"] * 1_000_000
    ref_s, ref_records = best_of(
        lambda: reference_engine.simulate(arrivals, sizes, slo_ns, table, WORKERS), 1
    )
    loop_s, loop_finish = best_of(lambda: simulate_fcfs(arrivals, sizes, service, WORKERS), 1)
    prefix = servelab.simulate({**sc, "workload": {**sc["workload"], "count": reference_queries}})
    expected = prefix.columns["finish_ns"]
    for name, finish in (
        ("reference_engine", [r.finish for r in ref_records]),
        ("reference_fcfs", loop_finish),
    ):
        if not np.array_equal(np.asarray(finish), expected):
            print(f"MISMATCH: servelab and {name} disagree on finish times", file=sys.stderr)
            return 1

    ours_qps = queries / ours_s
    ref_qps = reference_queries / ref_s
    loop_qps = reference_queries / loop_s
    stored = sum(a.itemsize for name, a in cols.items() if name != "id")
    print(f"FCFS, {WORKERS} workers, {queries} queries (references: {reference_queries})")
    print(f"  servelab (incl. Python API):   {ours_qps / 1e6:7.2f} M simulated queries/s")
    print(f"  plain-Python engine:           {ref_qps / 1e6:7.3f} M simulated queries/s")
    print(f"  ratio vs the Python engine:    {ours_qps / ref_qps:7.1f}x  (goal >= 100x)")
    print(f"  minimal Python FCFS loop:      {loop_qps / 1e6:7.3f} M simulated queries/s")
    print(f"  ratio vs the minimal loop:     {ours_qps / loop_qps:7.1f}x  (no records, no checks)")
    print(f"  bytes per query record:        {stored:7d}  (goal <= 100; `id` is derived)")
    print(f"  finish times identical on {reference_queries} queries for both references")
    return 0


if __name__ == "__main__":
    sys.exit(main())
