#!/usr/bin/env python3
"""The front-end under overload: ``servelab frontend`` in a process of its own, serving a
scenario whose two workers carry about 500 requests/s (4 ms each, FCFS), is sent twice that
(1,000 requests/s, open loop, Poisson) for 60 s over 1,000 concurrent HTTP connections, with at
most 256 requests in flight at the server (``--max-concurrent``: the rest are refused at once).

What must hold (checked and printed, the run exits 1 otherwise): every request is answered or
refused with a protocol status naming the problem (200, or 503 "too many requests in flight" /
"dropped", or 504 past the request timeout), none is lost (no connection error, no missing
answer); the server keeps serving afterwards (a health check and one inference succeed); its
memory stays bounded (resident memory sampled every second: the growth over the second half of the
run is printed beside the first half's, since a queue that grows without bound would grow both).

    python benchmarks/python/bench_frontend_overload.py            # 60 s, 1,000 connections
    python benchmarks/python/bench_frontend_overload.py --smoke    # 4 s, 200 connections

Printed: requests by status, client-side errors, p50/p99 latency of the served ones, the
server's resident memory (start, peak, end, growth per half) and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

SERVICE_MS = 4.0
WORKERS = 2
CAPACITY_QPS = WORKERS * 1000.0 / SERVICE_MS


def scenario() -> dict:
    """Two workers of one application, the emulated executor waiting a fixed 4 ms per request."""
    return {
        "profile": {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 0.0}},
            "models": {"m": {}},
            "latency": [{"hardware": "cpu", "model": "m", "batch": 1, "samples_ms": [SERVICE_MS]}],
        },
        "workers": [{"hardware": "cpu", "count": WORKERS}],
        "workload": {"arrivals": "poisson(rate=1)", "count": 1, "apps": [
            {"name": "m", "slo_ms": 100}
        ]},
        "scheduler": "fcfs",
        "service": "mean",
        "seed": 0,
    }  # fmt: skip


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def drive(url: str, rate: float, seconds: float, connections: int, pid: int) -> dict:
    import aiohttp

    rng = np.random.default_rng(0)
    statuses: Counter[str] = Counter()
    examples: dict[str, str] = {}  # the first answer of each refusal status
    latencies: list[float] = []
    memory: list[tuple[float, float]] = []
    body = json.dumps({"inputs": []}).encode()
    connector = aiohttp.TCPConnector(limit=connections, force_close=False)
    timeout = aiohttp.ClientTimeout(total=120)

    async def one(session: aiohttp.ClientSession) -> None:
        began = time.perf_counter()
        try:
            async with session.post(f"{url}/v2/models/m/infer", data=body) as r:
                text = await r.text()
                statuses[str(r.status)] += 1
                if r.status != 200:
                    examples.setdefault(str(r.status), text[:160])
                if r.status == 200:
                    latencies.append(time.perf_counter() - began)
        except Exception as e:  # a lost request: counted, never hidden
            statuses[f"client error: {type(e).__name__}"] += 1

    async def sample() -> None:
        t0 = time.perf_counter()
        while True:
            memory.append((time.perf_counter() - t0, rss_mib(pid)))
            await asyncio.sleep(1.0)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        # Open every connection first: the server holds them all at once.
        await asyncio.gather(*(session.get(f"{url}/v2/health/live") for _ in range(connections)))
        sampler = asyncio.create_task(sample())
        tasks = []
        start = time.perf_counter()
        at = 0.0
        while at < seconds:
            at += rng.exponential(1.0 / rate)
            delay = start + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(session)))
        await asyncio.gather(*tasks)
        sampler.cancel()
        # Still serving afterwards.
        async with session.get(f"{url}/v2/health/ready") as r:
            ready = r.status == 200
        async with session.post(f"{url}/v2/models/m/infer", data=body) as r:
            after = r.status
    return {
        "sent": len(tasks), "statuses": statuses, "examples": examples, "latencies": latencies,
        "memory": memory,
        "ready_after": ready, "infer_after": after,
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--overload", type=float, default=2.0, help="rate over capacity")
    parser.add_argument("--max-concurrent", type=int, default=256, help="the server's limit")
    parser.add_argument("--smoke", action="store_true", help="4 s, 200 connections, limit 64")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.connections, args.max_concurrent = 4.0, 200, 64
    rate = args.overload * CAPACITY_QPS
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(scenario()))
        command = [sys.executable, "-m", "servelab", "frontend", str(path), "--json",
                   "--http-port", "0", "--no-grpc", "--request-timeout-s", "10",
                   "--max-concurrent", str(args.max_concurrent)]  # fmt: skip
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            where = json.loads(proc.stdout.readline())
            out = asyncio.run(drive(where["http"], rate, args.seconds, args.connections, proc.pid))
        finally:
            proc.terminate()
            proc.communicate(timeout=120)
    statuses, sent = out["statuses"], out["sent"]
    answered = sum(n for s, n in statuses.items() if s.isdigit())
    lost = sent - answered
    lat = np.asarray(out["latencies"]) * 1e3
    mem = out["memory"]
    half = len(mem) // 2
    print(f"{sent} requests at {rate:.0f}/s ({args.overload:g}x capacity) for {args.seconds:g} s "
          f"over {args.connections} connections")  # fmt: skip
    print("| status | requests |\n|---|---|")
    for status, n in sorted(statuses.items()):
        print(f"| {status} | {n} |")
    for status, text in sorted(out["examples"].items()):
        print(f"first {status} answer: {text}")
    if len(lat):
        print(f"served: p50 {np.percentile(lat, 50):.1f} ms, p99 {np.percentile(lat, 99):.1f} ms")
    if len(mem) >= 2:
        values = [m for _, m in mem]
        first = values[half] - values[0] if half else 0.0
        second = values[-1] - values[half]
        print(f"server memory: start {values[0]:.1f} MiB, peak {max(values):.1f} MiB, "
              f"end {values[-1]:.1f} MiB; growth first half {first:+.1f} MiB, "
              f"second half {second:+.1f} MiB")  # fmt: skip
    print(f"still serving after: ready={out['ready_after']}, infer={out['infer_after']}")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    ok = lost == 0 and out["ready_after"] and out["infer_after"] == 200
    ok = ok and set(s for s in statuses if s.isdigit()) <= {"200", "503", "504"}
    print(f"verdict: {'every request answered or refused; serving on' if ok else 'FAILED'} "
          f"(lost {lost})")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
