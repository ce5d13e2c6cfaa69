#!/usr/bin/env python3
"""Co-located instances: 100 machines x 4 instances, fixed 10 ms service, each co-runner adding
10% (per_corunner), FCFS over 1M queries.

Prints simulated queries per second from Python for the same 400 instances run (a) as isolated
workers, (b) on machines without interference and (c) with it; the cost of re-timing per batch
start or end ((c) - (a) over two events a query); and the ratio against a plain-Python
simulator of the same world (reference_colocated.py) after checking that both give the same
finish times. Printed, never asserted.

    python benchmarks/python/bench_colocated.py           # 1M queries
    python benchmarks/python/bench_colocated.py --smoke   # small (the test suite)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import reference_colocated  # noqa: E402
from bench_sim import FIXED_SERVICE_MS as SERVICE_MS  # noqa: E402
from bench_sim import fixed_service_scenario  # noqa: E402
from timing import benchmark_sizes, best_of  # noqa: E402

import servelab  # noqa: E402

MACHINES, PER_MACHINE = 100, 4
SLOWDOWN = 0.1
RATE_QPS = 0.6 * MACHINES * PER_MACHINE / (SERVICE_MS / 1e3)  # 60% of the instances alone


def scenario(queries: int, machines: bool, interference: bool) -> dict:
    """bench_sim's fixed-service case on 400 instances at RATE_QPS: isolated, on machines, or
    on machines with interference."""
    sc = fixed_service_scenario(queries)
    sc["workers"] = [{"hardware": "cpu", "count": MACHINES * PER_MACHINE}]
    sc["workload"]["arrivals"] = f"poisson(rate={RATE_QPS})"
    if machines:
        sc["machines"] = [{"name": "box", "count": MACHINES}]
        sc["workers"] = [{"hardware": "cpu", "count": PER_MACHINE, "machine": "box"}]
    if interference:
        sc["interference"] = f"per_corunner(slowdown={SLOWDOWN})"
    return sc


def main(argv: list[str] | None = None) -> int:
    run = benchmark_sizes(__doc__, argv)
    queries, reference_queries, repeats = run.queries, run.reference_queries, run.repeats
    servelab.simulate(scenario(1000, True, True))  # warm-up: first-call costs are not the engine's

    times = {}
    for label, machines, interference in (
        ("isolated workers", False, False),
        ("machines, no interference", True, False),
        ("machines, per_corunner", True, True),
    ):
        sc = scenario(queries, machines, interference)
        times[label], result = best_of(lambda sc=sc: servelab.simulate(sc), repeats)
    slowed = result.columns["finish_ns"] - result.columns["start_ns"]
    service_ns = round(SERVICE_MS * 1e6)

    # The same arrivals through the plain-Python simulator (a prefix when it would take long).
    arrivals = result.columns["arrival_ns"][:reference_queries].tolist()
    ref_s, ref_finish = best_of(
        lambda: reference_colocated.simulate(arrivals, service_ns, MACHINES, PER_MACHINE, SLOWDOWN),
        1,
    )
    small = servelab.simulate(scenario(reference_queries, True, True))
    diff = np.abs(np.asarray(ref_finish) - small.columns["finish_ns"])
    if diff.max() > 64:
        print(f"MISMATCH: finish times differ by up to {diff.max()} ns", file=sys.stderr)
        return 1

    print(
        f"FCFS, {MACHINES} machines x {PER_MACHINE} instances, fixed {SERVICE_MS:g} ms, "
        f"{RATE_QPS:g} q/s, {queries} queries"
    )
    for label, seconds in times.items():
        print(f"  {label:28s} {queries / seconds / 1e6:7.2f} M queries/s from Python")
    base, full = times["isolated workers"], times["machines, per_corunner"]
    print("  goal: >= 5 M queries/s with interference")
    print(
        f"  re-timing cost: {(full - base) / (2 * queries) * 1e9:.1f} ns per batch start or end"
        f" ({full / base:.2f}x the isolated run)"
    )
    print(
        f"  batches slowed by co-runners: {np.mean(slowed > service_ns):.0%},"
        f" mean service {slowed.mean() / 1e6:.2f} ms (alone {SERVICE_MS:g} ms)"
    )
    ours_per_q = full / queries
    ref_per_q = ref_s / reference_queries
    print(
        f"  plain-Python simulator ({reference_queries} queries): {1 / ref_per_q / 1e6:.2f} M"
        f" queries/s; ratio {ref_per_q / ours_per_q:.1f}x; finish times within {diff.max()} ns"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
