"""What this machine can measure of the contention model beyond service times: the cache-miss
curve against LLC capacity, and the QPS a model's workers sustain within its SLA.

- **Cache-miss curve.** The model's miss ratio is ``m = exp(-capacity / working_set)`` with the
  capacity ``ways * way_mb``. Without CAT the ways cannot be cut here, but the curve depends only
  on the ratio: ``measure_miss_curve`` grows a randomly gathered working set across the LLC
  instead, and reads a miss proxy from the time per access (0 when the set fits in the cache,
  1 at the largest set); ``fit_miss_curve`` fits ``m = exp(-alpha * capacity / working_set)``
  and reports how far the model's own curve (``alpha = 1``) and the fit are from the points.
- **QPS within the SLA.** ``measure_sla_qps`` serves Poisson queries of a Table I model on its
  oneDNN recommendation executor in ``servelab.serve`` (one query of ``query_items`` items per
  batch, ``w`` workers pinned one per core) and bisects the arrival rate whose p95 latency meets
  the SLA, as Sec. V-B measures max load; ``fit_sla_qps`` fits the profile's ``compute_ms`` to
  those points through the contention model's latency bound (its M/M/w tail), beside the
  prediction from the measured service time alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import _core, executors, profiles
from . import specs
from .calibration import RECSYS_MODELS, Fit, fit_profile, machine_node, measure_points


def measure_miss_curve(
    llc_mb: float,
    *,
    ratios: Sequence[float] = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0),
    accesses: int = 1 << 19,
    repeats: int = 5,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Per working set ``ratio * llc_mb`` MB: the ns per random 8-byte gather (the fastest of
    ``repeats`` rounds that visit every size in turn, so that other work on a shared machine
    slows every size alike and rarely all rounds of one) and the miss proxy (ns - ns of the
    smallest set) / (ns of the largest - ns of the smallest)."""
    if not (np.isfinite(llc_mb) and llc_mb > 0):
        raise ValueError(f"llc_mb={llc_mb!r} must be a positive number of MB")
    if len(ratios) < 3 or any(not (r > 0) for r in ratios) or list(ratios) != sorted(ratios):
        raise ValueError(f"ratios={list(ratios)!r} must be >= 3 increasing positive numbers")
    rng = np.random.default_rng(seed)
    sets = []
    for ratio in ratios:
        n = max(1, int(ratio * llc_mb * 2**20 / 8))
        sets.append((np.ones(n, dtype=np.int64), rng.integers(0, n, size=accesses)))
    best = [np.inf] * len(sets)
    for _ in range(repeats):
        for k, (data, index) in enumerate(sets):
            data.take(index)  # brings the set back into the cache after the others
            start = time.perf_counter_ns()
            data.take(index)
            best[k] = min(best[k], (time.perf_counter_ns() - start) / accesses)
    low, high = best[0], best[-1]
    return [
        {
            "ratio": float(r),
            "working_set_mb": len(d) * 8 / 2**20,
            "ns": float(ns),
            "miss": float((ns - low) / (high - low)) if high > low else 0.0,
        }
        for r, (d, _), ns in zip(ratios, sets, best, strict=True)
    ]


def fit_miss_curve(points: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Fits ``alpha`` of ``m = exp(-alpha / ratio)`` (ratio = working set / capacity) to the
    points' miss proxies by least squares; the largest absolute error of the fit and of the
    contention model's curve (alpha = 1)."""
    from scipy.optimize import least_squares  # scipy only when fitting

    ratio = np.array([p["ratio"] for p in points], dtype=float)
    miss = np.array([p["miss"] for p in points], dtype=float)
    if len(ratio) < 3:
        raise ValueError(f"fit_miss_curve: {len(ratio)} points; need at least 3")

    def curve(alpha: float) -> np.ndarray:
        return np.exp(-alpha / ratio)

    result = least_squares(lambda a: curve(a[0]) - miss, [1.0], bounds=([1e-3], [1e3]))
    alpha = float(result.x[0])
    return {
        "alpha": alpha,
        "fitted_max_error": float(np.max(np.abs(curve(alpha) - miss))),
        "model_max_error": float(np.max(np.abs(curve(1.0) - miss))),
    }


def _sla_scenario(model: str, rate: float, seconds: float, workers: int, items: int, sla_ms: float):
    profile = profiles.Profile("hera sla measurement")
    profile.add_hardware("cpu", 0.0)
    profile.add_model(model, 1.0)
    # The profile only says which queries fit a worker; the executor sets every service time.
    profile.set_latency("cpu", model, items, samples_s=[1e-3])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": workers, "models": [model], "pin": "compact"}],
        "workload": {
            "arrivals": f"poisson(rate={float(rate)!r})",
            "horizon_s": seconds,
            "apps": [{"name": model, "slo_ms": sla_ms, "sizes": f"constant(value={items})"}],
        },
        "drain_s": 10.0,
    }


def measure_sla_qps(
    model: str,
    *,
    workers: int = 1,
    sla_ms: float | None = None,
    seconds: float = 2.0,
    steps: int = 6,
    scale: float = 0.01,
    seed: int = 0,
) -> dict[str, Any]:
    """The largest Poisson rate (queries/s) whose p95 latency stays within ``sla_ms`` (default:
    Table I's) on ``workers`` pinned workers of the model's recsys executor, by ``steps``
    bisections of ``seconds`` of arrivals each between 0 and the workers' throughput. Returns the
    point ``{"workers", "qps"}``, the measured service time, each step's (rate, p95) and the
    load average."""
    if model not in RECSYS_MODELS:
        raise ValueError(
            f"model={model!r} has no recsys executor; measurable: {', '.join(RECSYS_MODELS)}"
        )
    for name, value in (("workers", workers), ("steps", steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be a positive integer")
    from ... import run  # on use: servelab.hera loads without the run machinery

    if not (isinstance(seconds, (int, float)) and 0 < seconds <= 600):
        raise ValueError(f"seconds={seconds!r} must be in (0, 600]")
    profile = specs.model(model)
    sla = float(profile.sla_ms if sla_ms is None else sla_ms)
    if not (np.isfinite(sla) and sla > 0):
        raise ValueError(f"sla_ms={sla_ms!r} must be a positive number of milliseconds")
    items = int(profile.query_items)
    service = measure_points(model, workers=[workers], scale=scale, repeats=10, seed=seed)[0]
    spec = f"recsys(model='{RECSYS_MODELS[model]}', backend='onednn', scale={scale!r})"
    builder = executors.make_executor(spec)
    config = {"intra_op_threads": 1} if "intra_op_threads" in builder.open().knobs() else {}
    lo, hi = 0.0, service["qps"] * 1.2
    tried = []
    for step in range(steps):
        rate = 0.5 * (lo + hi)
        sc = _sla_scenario(model, rate, seconds, workers, items, sla)
        if config:
            sc["workers"][0]["config"] = config
        r = run.serve(sc, scheduler="fcfs", executor=builder, seed=seed + step, spin_us=0)
        p95 = float(r.summary()["latency_ms"]["p95"])
        tried.append({"rate": rate, "p95_ms": p95})
        lo, hi = (rate, hi) if p95 <= sla else (lo, rate)
    return {
        "model": model, "workers": workers, "qps": lo, "sla_ms": sla,
        "service_ms": service["service_ms"], "tried": tried, "load_average": os.getloadavg()[0],
    }  # fmt: skip


def fit_sla_qps(
    model: str, measured: Sequence[Mapping[str, Any]], node: Any = None
) -> dict[str, Any]:
    """The contention model against measured QPS-within-SLA points (``measure_sla_qps``):
    ``predicted_errors``, the latency bound (Erlang-C tail) on each point's measured service time;
    ``fit``, ``compute_ms`` fitted to the QPS points on ``node`` (default: this machine)."""
    if not measured:
        raise ValueError("fit_sla_qps: no measured points")
    for p in measured:
        if p["service_ms"] >= p["sla_ms"]:
            raise ValueError(
                f"fit_sla_qps: {p['model']} with {p['workers']} worker(s): one query took "
                f"{p['service_ms']:.2f} ms >= sla_ms={p['sla_ms']}, so the latency bound is 0 "
                "whatever the profile: nothing to fit"
            )
        if not p["qps"] > 0:
            raise ValueError(
                f"fit_sla_qps: {p['model']} with {p['workers']} worker(s) met sla_ms={p['sla_ms']}"
                f" at no rate here (one query takes {p['service_ms']:.2f} ms): nothing to fit"
            )
    spec = specs.node(node) if node is not None else machine_node(bandwidth_mb=64)
    base = specs.model(model, sla_ms=float(measured[0]["sla_ms"]))
    predicted = [
        _core.hera.latency_bounded_qps(int(p["workers"]), float(p["service_ms"]), base.sla_ms)
        / float(p["qps"])
        - 1
        for p in measured
    ]
    points = [{"workers": int(p["workers"]), "qps": float(p["qps"])} for p in measured]
    fit: Fit = fit_profile(base, points, spec, fields=("compute_ms",))
    return {"predicted_errors": predicted, "fit": fit, "compute_ms": fit.profile.compute_ms}
