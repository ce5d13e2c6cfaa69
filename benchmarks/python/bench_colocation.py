"""A Triton-like scenario: N instances of one model on one machine, simulated and served.

The model is the recsys ``rm2`` on the oneDNN backend (tables at ``--scale``), one intra-op
thread per instance. The machine is this host's first two allowed CPUs (``cores: 2``); the
instances are Triton's ``instance_group`` count:

- N=1: one instance with ``cores: 1`` (pinned to the first core);
- N=2: two instances with ``cores: 1`` each (one core each);
- N=3: three instances without the knob (sharing both cores, as Triton's instances share a GPU).

For each N the script profiles the model alone (``servelab.profile``), measures the co-located
slowdowns (``servelab.profile_colocated``: the model alone and beside N-1 copies of itself,
pinned as in the served run) and fits the ``measured`` interference model from them. Then one
workload is simulated without interference, simulated with the fitted model, and served on the
real executors, and the script prints throughput and latency percentiles of the three, with the
host's load average (``os.getloadavg``) before and after, since the cores are shared with
whatever else runs::

    python benchmarks/python/bench_colocation.py --count 3000 --rate 900
"""

from __future__ import annotations

import argparse
import json
import os

import servelab
from servelab import pinning
from servelab.results import COMPLETED

MODEL = "rm2"


def spec(scale: float) -> str:
    return f"recsys(model='{MODEL}', backend='onednn', scale={scale}, intra_op_threads=1)"


def scenario(
    profile: servelab.profiles.Profile, n: int, executor: str, rate: float, count: int
) -> dict:
    host = pinning.allowed_cpus()[:2]
    group = {"hardware": "cpu", "count": n, "models": [MODEL], "machine": "box"}
    group["executor"] = executor
    if n <= 2:
        group["config"] = {"cores": 1}
    return {
        "profile": profile,
        "machines": [{"name": "box", "cores": len(host), "core_ids": host}],
        "workers": [group],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": MODEL, "slo_ms": 20, "sizes": "uniform(low=8, high=32)"}],
        },
        "scheduler": "fcfs",
        "drain_s": 10,
    }


def digest(res: servelab.Result) -> dict:
    s = res.summary()
    c = res.columns
    done = c["status"] == COMPLETED
    service = (c["finish_ns"][done] - c["start_ns"][done]) / 1e6
    return {
        "throughput_qps": round(s["throughput_qps"], 1),
        "p50_ms": round(s["latency_ms"]["p50"], 3),
        "p99_ms": round(s["latency_ms"]["p99"], 3),
        "service_mean_ms": round(float(service.mean()), 3) if len(service) else None,
        "slo_violation_rate": round(s["slo_violation_rate"], 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instances", default="1,2,3", help="instance counts N to run")
    ap.add_argument("--rate", type=float, default=300.0, help="queries/s (about 20 items each)")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--scale", type=float, default=0.01, help="recsys table scale")
    ap.add_argument("--repeats", type=int, default=40, help="profile repeats per cell")
    args = ap.parse_args()
    executor = spec(args.scale)
    host = pinning.allowed_cpus()[:2]
    out: dict = {"load_average_before": os.getloadavg(), "executor": executor, "runs": {}}
    profile = servelab.profile(
        executor,
        batches=[1, 2, 4, 8, 16, 32],
        repeats=args.repeats,
        warmup=3,
        model=MODEL,
        price_per_hour=0.1,
    )
    for n in (int(x) for x in args.instances.split(",")):
        runs = servelab.profile_colocated(
            {MODEL: executor},
            sets=[[MODEL], [MODEL] * n] if n > 1 else [[MODEL]],
            batch=20,
            repeats=args.repeats,
            warmup=3,
            cores=[[c] for c in host] if n <= 2 else [host],  # as the served instances are pinned
        )
        interference = servelab.fit_interference(runs).spec if n > 1 else "none"
        sc = scenario(profile, n, executor, args.rate, args.count)
        plain = servelab.simulate(sc)
        fitted = servelab.simulate(sc, interference=interference)
        served = servelab.serve(sc, spin_us=0)
        out["runs"][n] = {
            "interference": interference,
            # what the fit read: each member's median batch and pace (time per batch over the run)
            "profiled": [
                {
                    "set": len(r["co_runners"]) + 1,
                    "median_ms": r["median_ms"],
                    "pace_ms": r["pace_ms"],
                }
                for r in runs.rows
            ],
            "sim": digest(plain),
            "sim_measured": digest(fitted),
            "serve": digest(served),
            "pinning": sorted({tuple(r["cores"]) for r in served.meta.get("pinning", [])}),
        }
        print(json.dumps({n: out["runs"][n]}), flush=True)
    out["load_average_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
