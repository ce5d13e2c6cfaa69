#!/usr/bin/env python3
"""Serving workers in separate processes: what the trip to a worker process costs per batch, and
the throughput of 1 vs 2 worker processes.

- transport overhead: one worker, saturated (every query arrives at once), so batches run back to
  back and the wall time per batch is the loop's own cost plus the executor's. The same no-op
  executor (``constant(latency_ms=0)``) runs in-process and in a worker process over a Unix socket
  and over loopback TCP; rounds run interleaved A/B/C and the medians are compared (ratio remote /
  in-process, and the difference: the transport per batch), for the run's wall time per batch
  (every stall of a loaded machine counts), and the difference of the median batch service times
  (finish - start; no ratio, as the in-process no-op batch takes next to nothing).
  ``transport_times()`` gives the median round trip minus the worker's own time per batch at
  light load as a second measure;
- throughput: saturated runs with 1 and 2 worker processes hosting ``--executor`` (default
  ``constant(latency_ms=2)``), interleaved, medians of queries per second and the speed-up 2 / 1,
  against the same executors in-process.

Printed, never asserted. The numbers depend on the machine's load: run it on a quiet machine.

    python benchmarks/python/bench_remote_workers.py            # about a minute
    python benchmarks/python/bench_remote_workers.py --smoke    # seconds
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import servelab
from servelab.worker_process import LocalWorkers, transport_times


def scenario(executors: list[str], rate: float, count: int) -> dict:
    profile = servelab.Profile("benchmark: a no-op model")
    profile.set_price("cpu", 0.0)
    profile.set_latency("cpu", "noop", 1, samples_s=[1e-6])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": 1, "executor": e} for e in executors],
        "workload": {
            "arrivals": f"poisson(rate={rate:.6g})",
            "count": count,
            "apps": [{"name": "noop", "slo_ms": 100_000}],
        },
        "scheduler": "fcfs",
        "seed": 5,
        "drain_s": 600,
    }


def per_batch_us(executors: list[str], count: int) -> tuple[float, float]:
    """A saturated run's wall time per batch (one query per batch under FCFS) and its median
    batch service time (finish - start: the worker thread's run() call, transport included), us.
    The mean feels every stall of a loaded machine; the median much less."""
    r = servelab.serve(scenario(executors, 1e9, count))
    assert r.summary()["completed"] == count, r.meta["drop_reasons"]
    c = r.columns
    service = float(np.median(c["finish_ns"] - c["start_ns"])) / 1e3
    return r.meta["duration_ns"] / count / 1e3, service


def throughput_qps(executors: list[str], count: int) -> float:
    r = servelab.serve(scenario(executors, 1e9, count))
    assert r.summary()["completed"] == count, r.meta["drop_reasons"]
    return count / (r.meta["duration_ns"] / 1e9)


def transport_overhead(count: int, rounds: int) -> None:
    noop = "constant(latency_ms=0)"
    with LocalWorkers(1, noop) as unix, LocalWorkers(1, noop, transport="tcp") as tcp:
        runs = {"in-process": [noop], "unix": [unix.spec(0)], "tcp": [tcp.spec(0)]}
        walls: dict[str, list[float]] = {k: [] for k in runs}
        services: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for label, executors in runs.items():
                wall, service = per_batch_us(executors, count)
                walls[label].append(wall)
                services[label].append(service)
        wall = {k: float(np.median(v)) for k, v in walls.items()}
        service = {k: float(np.median(v)) for k, v in services.items()}
        for label in ("unix", "tcp"):
            w, w0 = wall[label], wall["in-process"]
            v, v0 = service[label], service["in-process"]
            print(
                f"per batch, saturated, no-op executor, {count} batches x {rounds} rounds "
                f"(medians): {label} worker process vs in-process: wall {w:.1f} vs {w0:.1f} us "
                f"(ratio {w / w0:.2f}, +{w - w0:.1f} us), batch service {v:.1f} vs {v0:.2f} us "
                f"(+{v - v0:.1f} us: the round trip, as a no-op batch takes next to nothing)"
            )
        # Light load: each batch alone on the wire; the log splits its round trip.
        for label, pool in (("unix", unix), ("tcp", tcp)):
            transport_times()
            r = servelab.serve(scenario([pool.spec(0)], 500.0, count // 4))
            assert r.summary()["completed"] == count // 4, r.meta["drop_reasons"]
            t = transport_times()
            print(
                f"light load (500 q/s), {label}: round trip median "
                f"{np.median(t['round_trip_ns']) / 1e3:.1f} us, of which transport "
                f"{np.median(t['transport_ns']) / 1e3:.1f} us and the worker "
                f"{np.median(t['worker_ns']) / 1e3:.1f} us"
            )


def throughput(executor: str, count: int, rounds: int) -> None:
    with LocalWorkers(2, executor) as pool:
        runs = {
            "1 process": [pool.spec(0)],
            "2 processes": [pool.spec(0), pool.spec(1)],
            "1 in-process": [executor],
            "2 in-process": [executor, executor],
        }
        qps: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for label, executors in runs.items():
                qps[label].append(throughput_qps(executors, count))
    med = {k: float(np.median(v)) for k, v in qps.items()}
    one, two = med["1 process"], med["2 processes"]
    print(
        f"throughput, saturated, {executor}, {count} queries x {rounds} rounds (medians): "
        f"1 worker process {one:,.0f} q/s, 2 worker processes {two:,.0f} q/s, "
        f"speed-up 2 / 1 = {two / one:.2f}; in-process {med['1 in-process']:,.0f} and "
        f"{med['2 in-process']:,.0f} q/s (ratio 2 processes / 2 in-process = "
        f"{two / med['2 in-process']:.2f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small, seconds")
    parser.add_argument(
        "--executor",
        default="constant(latency_ms=2)",
        help="what the worker processes host for the throughput runs",
    )
    args = parser.parse_args(argv)
    transport_overhead(400 if args.smoke else 5_000, 3 if args.smoke else 7)
    throughput(args.executor, 200 if args.smoke else 2_000, 3 if args.smoke else 5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
