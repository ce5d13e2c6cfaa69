"""Calibration: fitting a model profile's contention parameters to measured points.

A measured point is what a profiler observes on a real node: ``workers`` workers with ``ways``
LLC ways (the whole LLC where CAT is absent) sustaining ``qps`` within the SLA, or serving one
query in ``service_ms``. ``fit_profile`` adjusts the chosen fields of a profile (by default the
core time per query and the embedding traffic) so that the contention model reproduces the
points, by least squares on relative errors, and reports the largest error left.

``calibrate_from_executor`` measures the points on this machine: the oneDNN recommendation
executor of each Table I model that servelab.recsys has (NCF, DIN, DIEN, WnD) serves one query
(``query_items`` items in one batch, one intra-op thread, as one Hera worker on one core) in
``w`` concurrent workers for each ``w`` in ``workers`` (the profiler's timed batches, one session
per worker, started together); each worker count gives a point ``{"workers": w, "service_ms":
median}`` and a measured throughput ``w * 1000 / service_ms`` QPS. The node is this machine's
(``machine_node``: its cores, its LLC as sysfs reports it, its bandwidth by a STREAM-like triad).
What a 2-core machine cannot measure (16-core scaling, CAT ways) stays the contention model's
extrapolation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core, executors, textio
from ...pinning import machine_cores
from ...profiling import concurrent_batch_ms
from . import specs as specs

DEFAULT_FIELDS = ("compute_ms", "sparse_mb")


@dataclass(frozen=True)
class Fit:
    profile: Any  # the fitted ModelProfile
    max_relative_error: float
    errors: list[float]  # per point, signed (model / measured - 1)


def predict(node: Any, profile: Any, point: Mapping[str, Any]) -> float:
    """The contention model's value for a point: QPS, or service_ms when the point has it."""
    workers, ways = int(point["workers"]), int(point.get("ways", node.llc_ways))
    tenant = _core.hera.evaluate(node, [(profile, workers, ways)])["tenants"][0]
    return tenant["service_ms"] if "service_ms" in point else tenant["qps"]


def fit_profile(
    base: Any,
    points: Sequence[Mapping[str, Any]],
    node: Any = "xeon-gold-6242",
    fields: Sequence[str] = DEFAULT_FIELDS,
) -> Fit:
    """Fits ``fields`` of the profile ``base`` to ``points`` (each with workers, optional ways,
    and qps or service_ms). ValueError for no points, an unknown field or a bad measurement."""
    from scipy.optimize import least_squares  # scipy only when fitting

    spec = specs.node(node)
    profile = specs.model(base)
    if not points:
        raise ValueError("fit_profile: no measured points")
    unknown = [f for f in fields if f not in specs.MODEL_FIELDS]
    if unknown or not fields:
        raise ValueError(
            f"fit_profile: fields {list(fields)} must be among {', '.join(specs.MODEL_FIELDS)}"
        )
    measured = []
    for i, p in enumerate(points):
        key = "service_ms" if "service_ms" in p else "qps"
        value = p.get(key)
        if "workers" not in p or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(
                f"points[{i}]={dict(p)!r} needs workers and a positive qps or service_ms"
            )
        measured.append(float(value))
    start = np.array([getattr(profile, f) for f in fields], dtype=float)
    floor = np.where(start > 0, start * 1e-3, 1e-6)

    def residuals(x: np.ndarray) -> np.ndarray:
        trial = specs.model(profile, **dict(zip(fields, map(float, x), strict=False)))
        pairs = zip(points, measured, strict=True)
        return np.array([predict(spec, trial, p) / m - 1 for p, m in pairs])

    # Fit in log space so every field stays positive and scales alike.
    result = least_squares(
        lambda z: residuals(np.exp(z)), np.log(np.maximum(start, floor)), method="trf"
    )
    fitted = specs.model(profile, **dict(zip(fields, map(float, np.exp(result.x)), strict=False)))
    errors = [float(e) for e in residuals(np.exp(result.x))]
    return Fit(fitted, max(abs(e) for e in errors), errors)


# Table I models with a servelab.recsys counterpart (the same architecture, docs/recsys.md).
RECSYS_MODELS = {"ncf": "ncf", "din": "din", "dien": "dien", "wnd": "wnd"}
_LLC = Path("/sys/devices/system/cpu/cpu0/cache/index3")
THREADS_KNOB = "intra_op_threads"


def machine_node(*, bandwidth_mb: float = 256.0) -> Any:
    """This machine as a node: the cores this process may use, the LLC's size and ways as sysfs
    reports them (Table II's where it does not), the memory, and the DRAM bandwidth of a triad over
    ``bandwidth_mb`` MB arrays on every core (``core_bandwidth_gbs``: on one core)."""
    cores = machine_cores()
    fields: dict[str, Any] = {"cores": cores}
    try:
        size = textio.read_text(_LLC / "size", what="LLC size").strip()
        ways = int(textio.read_text(_LLC / "ways_of_associativity", what="LLC ways").strip())
        mb = float(size[:-1]) / 1024 if size.endswith("K") else float(size) / 2**20
        fields.update(llc_mb=mb, llc_ways=max(1, min(ways, 64)))
    except (OSError, ValueError):  # no sysfs cache entry (containers, other systems)
        pass
    pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    fields["mem_capacity_gb"] = pages * page / 1e9
    triad = _core.recsys.measure_triad_gbps
    one, every = triad(bandwidth_mb, threads=1), triad(bandwidth_mb, threads=cores)
    # On a shared machine every core's triad can come out below one core's: the node needs
    # the whole at least as large as a part.
    fields["core_bandwidth_gbs"], fields["mem_bandwidth_gbs"] = one, max(one, every)
    return specs.node("xeon-gold-6242", **fields)


def measure_points(
    model: str,
    *,
    workers: Sequence[int] = (1, 2),
    backend: str = "onednn",
    scale: float = 0.01,
    repeats: int = 20,
    warmup: int = 3,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Per worker count: ``{"workers", "service_ms", "qps"}`` measured on the recsys executor of
    the Table I ``model`` (one query = ``query_items`` items, one thread per worker)."""
    if model not in RECSYS_MODELS:
        raise ValueError(
            f"model={model!r} has no recsys executor; measurable: {', '.join(RECSYS_MODELS)}"
        )
    counts = sorted(set(workers)) if not isinstance(workers, str) else []
    if not counts or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in counts):
        raise ValueError(f"workers={workers!r} must be a non-empty list of positive integers")
    if max(counts) > 4 * machine_cores():
        raise ValueError(f"workers={workers!r}: at most {4 * machine_cores()} on this machine")
    items = int(specs.model(model).query_items)
    spec = f"recsys(model='{RECSYS_MODELS[model]}', backend='{backend}', scale={scale!r})"
    builder = executors.make_executor(spec)
    sessions = [builder.open(seed=seed + i) for i in range(max(counts))]
    config = {THREADS_KNOB: 1} if THREADS_KNOB in sessions[0].knobs() else {}
    points = []
    for w in counts:
        samples = concurrent_batch_ms(sessions[:w], [1] * items, config, repeats, warmup)
        ms = float(np.median(samples))
        points.append({"workers": w, "service_ms": ms, "qps": w * 1e3 / ms})
    return points


@dataclass(frozen=True)
class Calibration:
    model: str
    points: list[dict[str, float]]  # measured: workers, service_ms, qps (throughput)
    default_errors: list[float]  # the shipped Table I profile on this node, per point (signed)
    fit: Fit
    load_average: float  # the machine's 1-minute load average after measuring (shared cores)

    def summary(self) -> dict[str, Any]:
        base, fitted = specs.model(self.model), self.fit.profile
        return {
            "model": self.model, "points": self.points, "load_average": self.load_average,
            "default_max_error": max(abs(e) for e in self.default_errors),
            "default_errors": self.default_errors,
            "fitted_max_error": self.fit.max_relative_error, "fitted_errors": self.fit.errors,
            "default": {f: getattr(base, f) for f in DEFAULT_FIELDS},
            "fitted": {f: getattr(fitted, f) for f in DEFAULT_FIELDS},
        }  # fmt: skip


def calibrate_from_executor(
    models: Sequence[str] = ("ncf", "wnd", "din"),
    *,
    workers: Sequence[int] = (1, 2),
    node: Any = None,
    fields: Sequence[str] = DEFAULT_FIELDS,
    repeats: int = 20,
    warmup: int = 3,
    scale: float = 0.01,
    seed: int = 0,
) -> dict[str, Calibration]:
    """Measures each model's service time per query against the worker count on its oneDNN
    executor (:func:`measure_points`) and fits ``fields`` of its Table I profile to the points on
    ``node`` (default: :func:`machine_node`). Per model: the points, the shipped profile's errors
    and the fit."""
    if isinstance(models, str) or not models:
        raise ValueError(f"models={models!r} must be a non-empty list of Table I model names")
    spec = specs.node(node) if node is not None else machine_node()
    out = {}
    for name in models:
        points = measure_points(
            name, workers=workers, scale=scale, repeats=repeats, warmup=warmup, seed=seed
        )
        fit_points = [{"workers": p["workers"], "service_ms": p["service_ms"]} for p in points]
        base = specs.model(name)
        default_errors = [predict(spec, base, p) / p["service_ms"] - 1 for p in fit_points]
        fit = fit_profile(base, fit_points, spec, fields)
        out[name] = Calibration(name, points, default_errors, fit, os.getloadavg()[0])
    return out
