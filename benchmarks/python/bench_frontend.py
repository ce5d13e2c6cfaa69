#!/usr/bin/env python3
"""What the Open Inference Protocol front-end adds to a request's latency: sequential requests
(one at a time, so none waits for another) to one session with the ``emulated`` executor and a
1 us profile, sent these ways and interleaved round by round:

- ``submit``: ``Session.submit(app).result()`` in-process, the floor;
- ``http``: ``tritonclient.http`` to the front-end's HTTP/REST server on loopback (aiohttp);
- ``http-cpp``: the same to the C++ HTTP engine (``http_engine="cpp"``);
- ``raw`` / ``raw-cpp``: a minimal keep-alive client (one prepared request on a socket, the
  answer read by its Content-Length) to each engine: the server's part without tritonclient's;
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
import socket
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


class RawClient:
    """One keep-alive connection sending the same inference request (no inputs) and reading each
    answer by its Content-Length: the least a client can add."""

    def __init__(self, url: str, model: str) -> None:
        host, _, port = url.removeprefix("http://").rpartition(":")
        self.sock = socket.create_connection((host.strip("[]"), int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        body = b'{"inputs":[]}'
        self.request = (
            f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: x\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        self.buffer = b""

    def __call__(self) -> bytes:
        self.sock.sendall(self.request)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"the server answered {head[:40]!r}")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(rest) < length:
            rest += self.sock.recv(65536)
        body, self.buffer = rest[:length], rest[length:]
        return body

    def close(self) -> None:
        self.sock.close()


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


def report(title: str, times: dict[str, list[float]], base_us: float, base_p99: float) -> None:
    print(title)
    for name, values in times.items():
        us = np.asarray(values) * 1e6
        p50, p99 = np.percentile(us, 50), np.percentile(us, 99)
        added = "" if name == "submit" else f"   +{p50 - base_us:8.1f} us over submit (p50)"
        if name != "submit":
            added += f", +{p99 - base_p99:8.1f} (p99)"
        print(f"  {name:<8}  p50 {p50:8.1f} us   p99 {p99:8.1f} us{added}")


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
        with (
            Frontend(session, http_port=0, grpc_port=0) as frontend,
            Frontend(session, http_port=0, grpc_port=None, http_engine="cpp") as cpp,
        ):
            h = httpclient.InferenceServerClient(frontend.http_url.removeprefix("http://"))
            hc = httpclient.InferenceServerClient(cpp.http_url.removeprefix("http://"))
            g = grpcclient.InferenceServerClient(frontend.grpc_address)
            raw, raw_cpp = RawClient(frontend.http_url, "noop"), RawClient(cpp.http_url, "noop")
            ways = {
                "submit": lambda: session.submit("noop").result(),
                "http": lambda: h.infer("noop", []),
                "http-cpp": lambda: hc.infer("noop", []),
                "raw": raw,
                "raw-cpp": raw_cpp,
                "grpc": lambda: g.infer("noop", []),
            }
            inproc = measure(ways, n, warmup)
            for client in (h, hc, g, raw, raw_cpp):
                client.close()
        session.close()
    base = float(np.percentile(inproc["submit"], 50)) * 1e6
    base_p99 = float(np.percentile(inproc["submit"], 99)) * 1e6
    report("servers in the client's process (sharing its GIL):", inproc, base, base_p99)

    # The front-end in a process of its own (`servelab frontend`), as a real client sees it.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(scenario()))
        command = [sys.executable, "-m", "servelab", "frontend", str(path), "--json",
                   "--http-port", "0", "--grpc-port", "0"]  # fmt: skip
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        cpp_command = [*command, "--no-grpc", "--http-engine", "cpp"]
        proc_cpp = subprocess.Popen(cpp_command, stdout=subprocess.PIPE, text=True)
        try:
            where = json.loads(proc.stdout.readline())
            where_cpp = json.loads(proc_cpp.stdout.readline())
            h = httpclient.InferenceServerClient(where["http"].removeprefix("http://"))
            hc = httpclient.InferenceServerClient(where_cpp["http"].removeprefix("http://"))
            g = grpcclient.InferenceServerClient(where["grpc"])
            raw, raw_cpp = RawClient(where["http"], "noop"), RawClient(where_cpp["http"], "noop")
            ways = {
                "http": lambda: h.infer("noop", []),
                "http-cpp": lambda: hc.infer("noop", []),
                "raw": raw,
                "raw-cpp": raw_cpp,
                "grpc": lambda: g.infer("noop", []),
            }
            apart = measure(ways, n, warmup)
            for client in (h, hc, g, raw, raw_cpp):
                client.close()
        finally:
            for p in (proc, proc_cpp):
                p.terminate()
                p.communicate(timeout=60)
    report("servers in a process of their own (servelab frontend):", apart, base, base_p99)
    load = os.getloadavg()
    print(f"load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
