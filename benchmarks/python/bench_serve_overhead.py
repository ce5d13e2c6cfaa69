#!/usr/bin/env python3
"""The real serving loop's own cost per query (queue, dispatch, record), with a no-op executor.

servelab serves with ``constant(latency_ms=0)`` executors (run() returns at once) under FCFS, so
everything measured is the loop: the controller taking each arrival, the scheduler's dispatch, the
hand-over to a worker thread, its completion and the record. Two measures:

- saturated: every query arrives at once (a very high rate), so the loop runs flat out: wall time
  per query, against a plain Python loop of the same shape (a controller thread, worker threads, a
  queue each way, per-query records), whose ratio python / servelab is printed;
- light load: queries arrive one by one; the median and p99 of finish - arrival are the latency the
  loop adds to a query that never waits for a worker;
- a no-op executor written in Python (``register_executor``) against the C++ ``constant``: runs
  interleaved A/B, medians of the per-query wall time under saturation and of each batch's own
  time in its worker (``exec_ns``: taking the GIL, building the batch object, the Python call).

Printed, never asserted.

    python benchmarks/python/bench_serve_overhead.py           # `make bench`
    python benchmarks/python/bench_serve_overhead.py --smoke   # seconds (the test suite)
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time

import numpy as np

import servelab

WORKERS = 2


def scenario(rate: float, count: int) -> dict:
    profile = servelab.Profile("benchmark: a no-op model")
    profile.set_price("cpu", 0.0)
    profile.set_latency("cpu", "noop", 1, samples_s=[1e-6])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": WORKERS}],
        "workload": {
            "arrivals": f"poisson(rate={rate:.6g})",
            "count": count,
            "apps": [{"name": "noop", "slo_ms": 1000}],
        },
        "scheduler": "fcfs",
        "seed": 3,
    }


def serve_noop(rate: float, count: int) -> tuple[float, servelab.Result]:
    """The run's own duration in seconds (t = 0 once the worker threads run, to the last event:
    the loop, without building the run) and its result."""
    r = servelab.serve(scenario(rate, count), executor="constant(latency_ms=0)")
    return r.meta["duration_ns"] / 1e9, r


class NoOp:
    """The Python executor under test: does nothing with its batch."""

    def run(self, batch) -> None:
        pass


def python_executor_overhead(count: int, rounds: int) -> None:
    """A no-op Python executor vs constant(latency_ms=0), interleaved A/B in this process."""
    servelab.register_executor("bench_noop", NoOp, params=[])
    try:
        walls: dict[str, list[float]] = {"constant": [], "python": []}
        execs: dict[str, list[float]] = {"constant": [], "python": []}
        for _ in range(rounds):
            for label, spec in (("constant", "constant(latency_ms=0)"), ("python", "bench_noop")):
                r = servelab.serve(scenario(1e9, count), executor=spec)
                assert r.summary()["completed"] == count, r.meta["drop_reasons"]
                walls[label].append(r.meta["duration_ns"] / count / 1e3)
                execs[label].append(float(np.median(r.columns["exec_ns"])) / 1e3)
    finally:
        servelab.unregister_executor("bench_noop")
    wall = {k: float(np.median(v)) for k, v in walls.items()}
    run = {k: float(np.median(v)) for k, v in execs.items()}
    print(
        f"python no-op executor vs constant(latency_ms=0), saturated, {count} queries x {rounds} "
        f"rounds (medians): {wall['python']:.2f} vs {wall['constant']:.2f} us/query, ratio "
        f"python / constant = {wall['python'] / wall['constant']:.2f}; per batch in the worker "
        f"{run['python']:.2f} vs {run['constant']:.2f} us "
        f"(+{run['python'] - run['constant']:.2f} us)"
    )


def python_loop(count: int) -> float:
    """The reference: a controller hands each query to an idle worker thread through a queue and
    records its finish from the completions queue, like the real loop but in Python."""
    done: queue.Queue[tuple[int, int, int]] = queue.Queue()
    inboxes = [queue.Queue() for _ in range(WORKERS)]

    def worker(w: int) -> None:
        while (q := inboxes[w].get()) is not None:
            start = time.perf_counter_ns()  # the no-op batch
            done.put((w, q, start))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
    for t in threads:
        t.start()
    finish = np.full(count, -1, dtype=np.int64)
    idle = list(range(WORKERS))
    waiting = list(range(count))[::-1]  # every query has arrived
    start = time.perf_counter()
    ended = 0
    while ended < count:
        while idle and waiting:
            inboxes[idle.pop()].put(waiting.pop())
        w, q, _ = done.get()
        finish[q] = time.perf_counter_ns()
        idle.append(w)
        ended += 1
    elapsed = time.perf_counter() - start
    for box in inboxes:
        box.put(None)
    for t in threads:
        t.join()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small, seconds")
    args = parser.parse_args(argv)
    count = 2_000 if args.smoke else 100_000

    # Saturated: all arrivals within a microsecond or so of each other.
    wall, r = serve_noop(1e9, count)
    assert r.summary()["completed"] == count, r.meta["drop_reasons"]
    ours_us = wall / count * 1e6
    ref_us = min(python_loop(count) for _ in range(3 if args.smoke else 1)) / count * 1e6
    print(
        f"saturated, {WORKERS} workers, {count} queries: servelab {ours_us:.2f} us/query "
        f"({count / wall:,.0f} q/s), python loop {ref_us:.2f} us/query; "
        f"ratio python / servelab = {ref_us / ours_us:.2f}"
    )

    # Light load: the latency the loop adds to a query that finds a worker idle.
    light = 300 if args.smoke else 5_000
    _, r = serve_noop(1000.0, light)
    c = r.columns
    added_us = (c["finish_ns"] - c["arrival_ns"]) / 1e3
    print(
        f"light load (1000 q/s, {light} queries): the loop adds "
        f"median {np.median(added_us):.1f} us, "
        f"p99 {np.percentile(added_us, 99):.1f} us per query (arrival to recorded finish)"
    )

    python_executor_overhead(1_000 if args.smoke else 20_000, 3 if args.smoke else 5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
