#!/usr/bin/env python3
"""What the Open Inference Protocol front-end adds to a request's latency: sequential requests
(one at a time, so none waits for another) to one session with the ``emulated`` executor and a
1 us profile, sent three ways and interleaved round by round:

- ``submit``: ``Session.submit(app).result()`` in-process, the floor;
- ``http``: ``tritonclient.http`` to the front-end's HTTP/REST server on loopback;
- ``grpc``: ``tritonclient.grpc`` to its gRPC server.

Printed: p50 and p99 of each in microseconds, the front-end's addition (p50 over ``submit``'s),
and the load average (the machine is shared: read the numbers against it). Never asserted.

    python benchmarks/python/bench_frontend.py                 # 500 requests each
    python benchmarks/python/bench_frontend.py --smoke         # seconds (the test suite)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import servelab


def scenario() -> dict:
    profile = servelab.Profile("benchmark: a 1 us model")
    profile.set_price("cpu", 0.0)
    profile.set_latency("cpu", "noop", 1, samples_s=[1e-6])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": 1}],
        "workload": {"arrivals": "poisson(rate=1)", "count": 1, "apps": [
            {"name": "noop", "slo_ms": 1000}
        ]},
        "scheduler": "fcfs",
        "seed": 0,
    }  # fmt: skip


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
    times: dict[str, list[float]] = {"submit": [], "http": [], "grpc": []}
    with servelab.Session(scenario()) as session:
        with Frontend(session, http_port=0, grpc_port=0) as frontend:
            h = httpclient.InferenceServerClient(frontend.http_url.removeprefix("http://"))
            g = grpcclient.InferenceServerClient(frontend.grpc_address)
            ways = {
                "submit": lambda: session.submit("noop").result(),
                "http": lambda: h.infer("noop", []),
                "grpc": lambda: g.infer("noop", []),
            }
            for i in range(warmup + n):
                for name, call in ways.items():
                    t0 = time.perf_counter()
                    call()
                    dt = time.perf_counter() - t0
                    if i >= warmup:
                        times[name].append(dt)
            h.close()
            g.close()
        session.close()
    load = os.getloadavg()
    print(f"front-end latency, {n} sequential requests each (emulated executor, 1 us model)")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    base = float(np.percentile(times["submit"], 50)) * 1e6
    for name, values in times.items():
        us = np.asarray(values) * 1e6
        p50, p99 = np.percentile(us, 50), np.percentile(us, 99)
        added = "" if name == "submit" else f"   +{p50 - base:8.1f} us over submit (p50)"
        print(f"  {name:<6}  p50 {p50:8.1f} us   p99 {p99:8.1f} us{added}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
