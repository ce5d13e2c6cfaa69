"""The parallelism performance model (cpp/include/servelab/systems/rrl/perf_model.hpp) and the hook
that fits it to measurements of a real executor.

CPU service time of a request with ``a`` inter-op and ``b`` intra-op threads while ``k`` requests
run on ``C`` cores::

    S = 1 / ((1 - p) + p / b) * 1 / ((1 - q) + q / min(a, W))        Amdahl within and across ops
    u = k * min(a, W) * b / C                              threads wanting a core, per core
    t = (base_ms / S + sync_ms * (a b - 1)) * max(1, u) * (1 + kappa * max(0, u - 1))

GPU service time of a batch of ``n`` with ``j`` batches on the GPU:
``(batch_fixed_ms + per_item_ms * n) * (1 + gpu_interference * (j - 1))``. Every service time is
multiplied by a lognormal factor of mean 1 and coefficient of variation ``noise_cv``.

The defaults describe an Inception-v3-like model (400 ms on one thread) on a 16-core server and
on a GTX 1080 Ti (15 ms + 1.5 ms per image), the paper's testbed and main model.
:func:`fit_cpu_model` replaces them by parameters fitted to profiled latencies of a real executor
(one row per measured (inter_op, intra_op, concurrent requests)).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._core import rrl as _rrl


@dataclass(frozen=True)
class PerfModel:
    """Parameters of the performance model (see the module doc); validated by the C++ core."""

    cores: float = 16
    base_ms: float = 400
    intra_fraction: float = 0.9
    inter_fraction: float = 0.4
    op_width: float = 4
    interference: float = 0.25
    sync_ms: float = 0.5
    batch_fixed_ms: float = 15
    per_item_ms: float = 1.5
    gpu_interference: float = 0.7
    noise_cv: float = 0.1

    def to_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def replace(self, **changes: Any) -> PerfModel:
        return dataclasses.replace(self, **changes)


def cpu_service_ms(model: PerfModel, inter: int, intra: int, in_service: int = 1) -> float:
    """Service time (ms) of one request under the CPU model."""
    return _rrl.cpu_service_ms(model.to_dict(), inter, intra, in_service)


def gpu_service_ms(model: PerfModel, batch: int, concurrent: int = 1) -> float:
    """Service time (ms) of one batch under the GPU model."""
    return _rrl.gpu_service_ms(model.to_dict(), batch, concurrent)


@dataclass(frozen=True)
class CpuModelFit:
    model: PerfModel
    rms_relative_error: float  # sqrt(mean(((fitted - measured) / measured)^2))
    rows: int


def _columns(values: Any, name: str, count: int | None, *, integer: bool) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if count is not None and array.size != count:
        raise ValueError(f"{name} has {array.size} values, expected {count} (one per measurement)")
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ValueError(f"{name} must hold positive finite values")
    if integer and np.any(array != np.round(array)):
        raise ValueError(f"{name} must hold whole numbers")
    return array


def fit_cpu_model(
    inter: Any,
    intra: Any,
    in_service: Any,
    latency_ms: Any,
    *,
    cores: int,
    op_width: float = 4,
    base: PerfModel | None = None,
) -> CpuModelFit:
    """Fits (base_ms, sync_ms, intra_fraction, inter_fraction, interference) to measured service
    times, minimising the relative error. The model is linear in base_ms and sync_ms once the
    fractions and the interference are fixed, so those three are searched on a grid and the two
    linear ones solved by non-negative least squares at each point; the best point wins.
    ``cores`` and ``op_width`` are the machine's and the model graph's, not fitted."""
    a = _columns(inter, "inter", None, integer=True)
    b = _columns(intra, "intra", a.size, integer=True)
    k = _columns(in_service, "in_service", a.size, integer=True)
    t = _columns(latency_ms, "latency_ms", a.size, integer=False)
    if a.size < 3:
        raise ValueError(f"fit_cpu_model needs at least 3 measurements, got {a.size}")
    if not (isinstance(cores, int) and cores >= 1):
        raise ValueError(f"cores={cores!r} must be a positive integer")
    used = np.minimum(a, op_width)
    demand = k * used * b / cores
    best: tuple[float, dict[str, float]] | None = None
    for kappa in np.linspace(0, 2, 21):
        slow = np.maximum(1, demand) * (1 + kappa * np.maximum(0, demand - 1))
        for p in np.linspace(0, 1, 21):
            for q in np.linspace(0, 1, 11):
                inv_speedup = ((1 - p) + p / b) * ((1 - q) + q / used)
                design = np.stack([inv_speedup * slow, (a * b - 1) * slow], axis=1) / t[:, None]
                coef = _nonnegative_lstsq(design, np.ones_like(t))
                error = float(np.sqrt(np.mean((design @ coef - 1) ** 2)))
                if best is None or error < best[0]:
                    best = (error, {"base_ms": coef[0], "sync_ms": coef[1], "intra_fraction": p,
                                    "inter_fraction": q, "interference": kappa})  # fmt: skip
    assert best is not None
    error, params = best
    if not params["base_ms"] > 0:
        raise ValueError(
            "the measurements do not determine a positive base_ms; measure more settings"
        )
    fitted = (base or PerfModel()).replace(cores=float(cores), op_width=float(op_width), **params)
    return CpuModelFit(fitted, error, int(a.size))


def _nonnegative_lstsq(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    """min ||design x - target|| over x >= 0 for two columns: the unconstrained solution, or the
    better of the two one-column solutions when it leaves the orthant."""
    x, *_ = np.linalg.lstsq(design, target, rcond=None)
    if np.all(x >= 0):
        return x
    candidates = []
    for j in range(2):
        col = design[:, j]
        denom = float(col @ col)
        value = max(0.0, float(col @ target) / denom) if denom > 0 else 0.0
        candidate = np.zeros(2)
        candidate[j] = value
        candidates.append(candidate)
    return min(candidates, key=lambda c: float(np.sum((design @ c - target) ** 2)))
