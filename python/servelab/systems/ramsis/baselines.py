"""The offline steps of RAMSIS's baselines (paper sec. 7): Jellyfish+ and ModelSwitching.

Both are load-granular: one (model, largest batch) per load (their schedulers are in
``schedulers.py``).

- Jellyfish+ serves, per load, the most accurate model whose throughput at some batch exceeds the
  per-worker load by 5% with a latency within half the SLO, with the largest such batch
  (:func:`jellyfish_rule`).
- ModelSwitching serves the model of a choice table built by :func:`model_switching_table`, which
  simulates every model at every load (constant Poisson load, fixed p95 service times) and keeps
  the most accurate one whose violation rate stays below 1% (its p99 response latency within the
  SLO). ``data.read_policy_gen`` reads the artifact's tables (its ``policy_gen/`` folder).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import _core
from ...profiles import Profile
from .tasks import HARDWARE


def model_switching_table(
    profile: Profile,
    models: Sequence[str] = (),
    *,
    workers: int,
    slo_ms: float,
    loads: Sequence[float],
    duration_s: float = 300.0,
    target_violation: float = 0.01,
    seed: int = 0,
    replications: int = 1,
    hardware: str = HARDWARE,
    statistic: str = "p95",
    threads: int = 1,
) -> dict[str, Any]:
    """ModelSwitching's offline step: for each load, the most accurate of ``models`` (default:
    every model of ``hardware``) whose simulated violation rate over ``duration_s`` of constant
    Poisson load on ``workers`` workers is below ``target_violation``; the fastest model when
    none is. Models that cannot sustain a load at all are not simulated (their queue grows without
    bound). Returns ``{"loads", "models", "candidates", "violation", "simulated"}``:
    ``violation[i, j]`` is candidate j's rate at load i (NaN where a more accurate model already
    qualified). ``replications`` > 1 pools that many runs (seeds ``seed``, ``seed + 1``, ...) per
    cell, which steadies choices near a model's capacity. The same seed gives the same table,
    whatever ``threads``."""
    return _core.ramsis.model_switching_table(
        profile, hardware, workers=workers, slo_ms=slo_ms, loads=[float(x) for x in loads],
        models=list(models), duration_s=duration_s, target_violation=target_violation,
        seed=seed, replications=replications, statistic=statistic, threads=threads,
    )  # fmt: skip


def jellyfish_rule(
    profile: Profile,
    models: Sequence[str],
    *,
    slo_ms: float,
    load_qps: float,
    workers: int,
    headroom: float = 1.05,
    hardware: str = HARDWARE,
    statistic: str = "p95",
) -> tuple[str, int]:
    """(model, largest batch) Jellyfish+ serves with at ``load_qps`` over ``workers`` workers."""
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers={workers!r} must be an integer >= 1")
    return _core.ramsis.adaptive_batch_rule(
        profile, hardware, list(models), slo_ms=slo_ms, rate_per_worker_qps=load_qps / workers,
        headroom=headroom, statistic=statistic,
    )  # fmt: skip
