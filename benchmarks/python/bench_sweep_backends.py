#!/usr/bin/env python3
"""Sweep backends: the local process pool against Ray, measured in the same process.

1. A 200-point sweep of small simulations with 1 and 2 workers on each backend: wall time and the
   speed-up of 2 workers over 1 (on a 2-core machine shared with others, expect below 2).
2. The overhead per point: 200 points that do nothing, on 2 workers, minus nothing (the whole
   wall time divided by the points).
3. A paper-size RAMSIS comparison (image at 150 ms: 3 methods x 10 constant loads with 60 workers,
   and the 5-minute trace with 60/70/80 workers, ModelSwitching's tables from the artifact, sent
   once as a shared input) with 2 workers on each backend, against the same points run serially.

Rows agree across backends (checked before any time is printed). Printed, never asserted.

    python benchmarks/python/bench_sweep_backends.py            # full
    python benchmarks/python/bench_sweep_backends.py --smoke    # 20 points, no RAMSIS
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

import servelab
from servelab import sweep

BASE = servelab.load_scenario("default")


def simulated_point(rate: float, seed: int) -> servelab.Result:
    load = dict(BASE.workload, arrivals=f"poisson(rate={rate})", count=40000)
    return servelab.simulate(BASE, scheduler="jsq", workload=load, seed=seed)


def empty_point(i: int) -> dict:
    return {"i2": i}


def ramsis_point(method, workers, load, on_trace, data, ms_tables, cache_dir):
    from servelab import ramsis

    run = ramsis.run_experiment(
        "image", method, workers, load=load, trace=True if on_trace else None, slo_ms=150.0,
        data=data, ms_table=ms_tables.get(workers), cache_dir=cache_dir,
    )  # fmt: skip
    row = run.row()
    row.pop("sim_seconds", None)  # a timing, not a result: differs between runs
    return row


def timed(**kwargs) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    frame = sweep(progress=False, **kwargs)
    return time.perf_counter() - start, frame


def find_ramsis_data() -> Path | None:
    candidates = [os.environ.get("SERVELAB_RAMSIS_DATA")]
    candidates.append(str(Path(__file__).resolve().parents[3] / "shared" / "data" / "ramsis"))
    for c in candidates:
        if c and (Path(c) / "derived").is_dir():
            return Path(c)
    return None


def bench_speed_up(points: int) -> None:
    grid = [{"rate": 20 + i % 20, "seed": i} for i in range(points)]
    print(f"{points}-point simulation sweep (wall s)")
    reference = None
    for backend in ("local", "ray"):
        times = {}
        for workers in (1, 2):
            times[workers], frame = timed(
                fn=simulated_point, grid=grid, processes=workers, backend=backend
            )
            if reference is None:
                reference = frame
            pd.testing.assert_frame_equal(reference, frame)  # same rows everywhere
        print(
            f"  {backend:5}  1 worker {times[1]:7.2f}  2 workers {times[2]:7.2f}  "
            f"speed-up {times[1] / times[2]:5.2f}"
        )


def bench_overhead(points: int) -> None:
    grid = {"i": list(range(points))}
    print(f"overhead per point ({points} empty points, 2 workers; in this process for reference)")
    for label, kwargs in (
        ("in-process", {"processes": 1}),
        ("local", {"processes": 2}),
        ("ray", {"processes": 2, "backend": "ray"}),
    ):
        seconds, _ = timed(fn=empty_point, grid=grid, **kwargs)
        print(f"  {label:10}  {seconds / points * 1e3:8.3f} ms")


def bench_ramsis(data: Path) -> None:
    from servelab import ramsis
    from servelab.ramsis.paper import CONSTANT_LOADS, METHODS

    tables = ramsis.read_artifact_ms_tables((60, 70, 80), data)
    grid = [
        {"method": m, "workers": 60, "load": x, "on_trace": False}
        for x in CONSTANT_LOADS
        for m in METHODS
    ] + [
        {"method": m, "workers": w, "load": None, "on_trace": True}
        for w in (60, 70, 80)
        for m in METHODS
    ]
    with tempfile.TemporaryDirectory() as cache:
        shared = {"data": str(data), "ms_tables": tables, "cache_dir": cache}
        # Warm the policy cache once, so that every backend times the same work.
        serial_s, serial = timed(fn=ramsis_point, grid=grid, processes=1, shared=shared)
        serial_s, serial = timed(fn=ramsis_point, grid=grid, processes=1, shared=shared)
        print(f"paper-size RAMSIS comparison ({len(grid)} runs, wall s)")
        print(f"  serial      {serial_s:7.2f}  (one process, its caches warm)")
        # Local worker processes start afresh with every sweep; Ray's stay, with what they loaded
        # (task data, policies), so its second run shows a warm cluster.
        for label, backend in (("local", "local"), ("ray", "ray"), ("ray warm", "ray")):
            seconds, frame = timed(
                fn=ramsis_point, grid=grid, processes=2, backend=backend, shared=shared
            )
            pd.testing.assert_frame_equal(serial, frame)
            print(f"  {label:8} x2 {seconds:7.2f}  speed-up {serial_s / seconds:5.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="20 points, no RAMSIS")
    args = parser.parse_args(argv)
    try:
        import ray
    except ImportError:
        print("Ray is not installed (pip install 'servelab[ray]'): benchmark skipped")
        return 0
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        # Ray starts its worker processes on first use: warm them so that start-up is not timed.
        sweep(empty_point, {"i": [0, 1, 2, 3]}, backend="ray", processes=2, progress=False)
        points = 20 if args.smoke else 200
        bench_speed_up(points)
        bench_overhead(points)
        data = find_ramsis_data()
        if data is None and not args.smoke:
            print("RAMSIS data not found ($SERVELAB_RAMSIS_DATA): RAMSIS part skipped")
        elif not args.smoke:
            bench_ramsis(data)
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
