"""Calibration: fitting a model profile's contention parameters to measured points.

A measured point is what a profiler observes on a real node: ``workers`` workers with ``ways``
LLC ways (the whole LLC where CAT is absent) sustaining ``qps`` within the SLA, or serving one
query in ``service_ms``. ``fit_profile`` adjusts the chosen fields of a profile (by default the
core time per query and the embedding traffic) so that the contention model reproduces the
points, by least squares on relative errors, and reports the largest error left.

The points are meant to come from the profiler of the oneDNN recommendation executors (latency
by batch and thread count, bytes moved). That profiler is not part of this package yet; until it
is, pass points measured any other way. What a 2-core machine cannot measure (16-core scaling,
CAT ways) stays the contention model's extrapolation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _core
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
