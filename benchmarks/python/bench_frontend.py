#!/usr/bin/env python3
"""What the Open Inference Protocol front-end adds to a request's latency: sequential requests
(one at a time, so none waits for another) to one session with the ``emulated`` executor and a
1 us profile, sent three ways and interleaved round by round:

- ``submit``: ``Session.submit(app).result()`` in-process, the floor;
- ``http``: ``tritonclient.http`` to the front-end's HTTP/REST server on loopback;
- ``grpc``: ``tritonclient.grpc`` to its gRPC server.

Twice: with the servers in this process (a `Frontend` on a thread, sharing the client's GIL), and
in a process of their own (``servelab frontend`` on a JSON copy of the scenario), as a real
client sees them; ``submit`` is measured in this process both times.

Printed: p50 and p99 of each in microseconds, the front-end's addition (p50 over ``submit``'s),
and the load average (the machine is shared: read the numbers against it). Never asserted.

    python benchmarks/python/bench_frontend.py                 # 500 requests each
    python benchmarks/python/bench_frontend.py --smoke         # seconds (the test suite)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import servelab


def scenario() -> dict:
    """One worker, one application, the emulated executor on a 1 us profile (plain JSON, so that
    the front-end's own process can read it from a file)."""
    return {
        "profile": {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 0.0}},
            "models": {"noop": {}},
            "latency": [{"hardware": "cpu", "model": "noop", "batch": 1, "samples_ms": [0.001]}],
        },
        "workers": [{"hardware": "cpu", "count": 1}],
        "workload": {"arrivals": "poisson(rate=1)", "count": 1, "apps": [
            {"name": "noop", "slo_ms": 1000}
        ]},
        "scheduler": "fcfs",
        "seed": 0,
    }  # fmt: skip


def measure(ways: dict[str, Callable[[], object]], n: int, warmup: int) -> dict[str, list[float]]:
    """Each way called ``warmup + n`` times, interleaved round by round; the last n timed."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    for i in range(warmup + n):
        for name, call in ways.items():
            t0 = time.perf_counter()
            call()
            dt = time.perf_counter() - t0
            if i >= warmup:
                times[name].append(dt)
    return times


def report(title: str, times: dict[str, list[float]], base_us: float) -> None:
    print(title)
    for name, values in times.items():
        us = np.asarray(values) * 1e6
        p50, p99 = np.percentile(us, 50), np.percentile(us, 99)
        added = "" if name == "submit" else f"   +{p50 - base_us:8.1f} us over submit (p50)"
        print(f"  {name:<6}  p50 {p50:8.1f} us   p99 {p99:8.1f} us{added}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500, help="requests per way (default 500)")
    parser.add_argument("--smoke", action="store_true", help="a few requests, to check it runs")
    args = parser.parse_args()
    try:
        import tritonclient.grpc as grpcclient
        import tritonclient.http as httpclient

        from servelab.frontend import Frontend
    except ImportError as e:
        print(f"skipped: the front-end's libraries are not installed ({e})")
        return 0
    n = 20 if args.smoke else args.requests
    warmup = 5 if args.smoke else 50
    load = os.getloadavg()
    print(f"front-end latency, {n} sequential requests each (emulated executor, 1 us model)")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    with servelab.Session(scenario()) as session:
        with Frontend(session, http_port=0, grpc_port=0) as frontend:
            h = httpclient.InferenceServerClient(frontend.http_url.removeprefix("http://"))
            g = grpcclient.InferenceServerClient(frontend.grpc_address)
            ways = {
                "submit": lambda: session.submit("noop").result(),
                "http": lambda: h.infer("noop", []),
                "grpc": lambda: g.infer("noop", []),
            }
            inproc = measure(ways, n, warmup)
            h.close()
            g.close()
        session.close()
    base = float(np.percentile(inproc["submit"], 50)) * 1e6
    report("servers in the client's process (sharing its GIL):", inproc, base)

    # The front-end in a process of its own (`servelab frontend`), as a real client sees it.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(scenario()))
        command = [sys.executable, "-m", "servelab", "frontend", str(path), "--json",
                   "--http-port", "0", "--grpc-port", "0"]  # fmt: skip
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            where = json.loads(proc.stdout.readline())
            h = httpclient.InferenceServerClient(where["http"].removeprefix("http://"))
            g = grpcclient.InferenceServerClient(where["grpc"])
            ways = {"http": lambda: h.infer("noop", []), "grpc": lambda: g.infer("noop", [])}
            apart = measure(ways, n, warmup)
            h.close()
            g.close()
        finally:
            proc.terminate()
            proc.communicate(timeout=60)
    report("servers in a process of their own (servelab frontend):", apart, base)
    load = os.getloadavg()
    print(f"load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
