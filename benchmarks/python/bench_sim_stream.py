#!/usr/bin/env python3
"""A streamed simulation (records="none") of the issue's FCFS case at scale: 100 workers, fixed
10 ms service, Poisson 8,000 q/s, by default one billion queries. Prints the run's time, queries
per second, the peak resident memory of the process (VmHWM) and the run's own accounting of what
it held (records not yet streamed out, sketches, time series), then the summary.

First, at a small size in the same process, it checks that the streamed summary agrees with the
summary of the full records (counts exact, percentiles within the sketch's relative error) and
prints the streamed run's speed against the records="all" run. Printed, never asserted.

    nice python benchmarks/python/bench_sim_stream.py                  # 1e9 queries (~minutes)
    python benchmarks/python/bench_sim_stream.py --queries 100000000
    python benchmarks/python/bench_sim_stream.py --smoke
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_sim import fixed_service_scenario  # noqa: E402
from timing import best_of  # noqa: E402

import servelab  # noqa: E402
from servelab.results import _flatten  # noqa: E402


def peak_rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return -1


def agreement(queries: int) -> bool:
    sc = fixed_service_scenario(queries)
    full_s, full = best_of(lambda: servelab.simulate(sc), 3)
    stream_s, streamed = best_of(lambda: servelab.simulate(sc, records="none"), 3)
    alpha = streamed.streamed["relative_error"]
    approximate = set(streamed.streamed["approximate"])
    a, b = _flatten(full.summary()), _flatten(streamed.summary())
    worst = 0.0
    for key, x in a.items():
        y = b[key]
        if x is None or y is None:
            if x is not y:
                print(f"MISMATCH {key}: {x} vs {y}", file=sys.stderr)
                return False
        elif isinstance(x, int | float) and not isinstance(x, bool):
            rel = abs(x - y) / abs(x) if x else abs(y)
            if key in approximate:
                worst = max(worst, rel)
            if rel > (alpha if key in approximate else 1e-9):
                print(f"MISMATCH {key}: {x} vs {y}", file=sys.stderr)
                return False
        elif x != y:
            print(f"MISMATCH {key}: {x} vs {y}", file=sys.stderr)
            return False
    print(f"{queries} queries: streamed summary = full-records summary (counts exact;")
    print(f"  percentiles worst {worst:.3%} off, stated bound {alpha:.1%})")
    print(f"  records='all':  {queries / full_s / 1e6:6.2f} M queries/s (workload + run + arrays)")
    print(
        f"  records='none': {queries / stream_s / 1e6:6.2f} M queries/s "
        f"({full_s / stream_s:.2f}x the records='all' run)"
    )
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1_000_000_000)
    parser.add_argument("--smoke", action="store_true", help="small sizes, for a quick check")
    args = parser.parse_args(argv)
    queries = 200_000 if args.smoke else args.queries
    if not agreement(20_000 if args.smoke else 1_000_000):
        return 1
    print()
    # VmHWM back to the current resident size: the peak below is this run's, not the check's.
    Path("/proc/self/clear_refs").write_text("5")
    start = time.perf_counter()
    r = servelab.simulate(fixed_service_scenario(queries), records="none")
    wall = time.perf_counter() - start
    s = r.summary()
    print(f"FCFS, 100 workers, fixed 10 ms, 8000 q/s, records='none', {queries:,} queries")
    print(f"  time:                 {wall:9.1f} s  ({queries / wall / 1e6:.2f} M queries/s)")
    print(f"  simulated span:       {r.duration_s:9.0f} s")
    print(f"  peak resident memory: {peak_rss_bytes() / 2**20:9.1f} MiB (whole process, VmHWM)")
    print(
        f"  held by the run:      {r.streamed['peak_bytes'] / 2**20:9.1f} MiB (its own accounting)"
    )
    lat = s["latency_ms"]
    print(
        f"  completed {s['completed']:,}, latency p50 {lat['p50']:.3f} ms, p99 {lat['p99']:.3f} ms,"
        f" max {lat['max']:.3f} ms, utilisation {s['utilisation']['mean']:.3f}"
    )
    return 0 if s["queries"] == queries and not math.isnan(lat["p99"]) else 1


if __name__ == "__main__":
    sys.exit(main())
