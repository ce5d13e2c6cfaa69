"""Hera's node-level resource management unit (Algorithm 3) against a PARTIES-style feedback
manager, on a node hosting two models (Sec. VII-A2 and VII-B, Fig. 12-14).

The managers run in C++ (``servelab._core.hera``) window by window over the contention model:
each window they see each model's p95 latency and arrival rate and set the next cores and LLC
ways. Loads are given as fractions of each model's isolated max load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import _core
from .offline import HeraOffline

CONTROLLERS = ("hera", "parties")
FIG12_LOADS = (0.4, 0.5, 0.6, 0.7, 0.8)


def fig14_loads(windows: int = 60) -> np.ndarray:
    """Fig. 14's pattern as [windows x 2] load fractions (model A = DLRM(D), B = NCF in the paper):
    both rise until T1 (a third of the run), where B drops to 20%; at T2 (two thirds) B jumps
    20% -> 60% while A drops 70% -> 10%."""
    if windows < 3:
        raise ValueError(f"windows={windows!r} must be >= 3")
    t1, t2 = windows // 3, 2 * windows // 3
    out = np.empty((windows, 2))
    for k in range(windows):
        if k < t1:
            f = k / max(t1 - 1, 1)
            out[k] = (0.2 + 0.5 * f, 0.2 + 0.4 * f)
        elif k < t2:
            out[k] = (0.7, 0.2)
        else:
            out[k] = (0.1, 0.6)
    return out


def run_node(
    off: HeraOffline,
    a: str,
    b: str,
    loads: Sequence[Sequence[float]] | np.ndarray,
    controller: str = "hera",
    *,
    window_s: float = 1.0,
    workers: tuple[int, int] | None = None,
    ways: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Runs a and b on one node under a manager; ``loads`` are [windows x 2] fractions of each
    model's isolated max load. The start is Hera's bootstrapping (cores and ways split evenly)
    unless given. Returns per-window p95/SLA, workers, ways, arrival and served QPS, violations."""
    if controller not in CONTROLLERS:
        raise KeyError(f"controller {controller!r} is unknown; known: {', '.join(CONTROLLERS)}")
    fractions = np.asarray(loads, dtype=float)
    if fractions.ndim != 2 or fractions.shape[1] != 2:
        raise ValueError(f"loads must have shape (windows, 2), got {fractions.shape}")
    if not np.all(np.isfinite(fractions) & (fractions >= 0)):
        raise ValueError("loads must be finite fractions >= 0")
    i, j = off.index(a), off.index(b)
    node = off.node
    cores, llc = node.cores, node.llc_ways
    workers = workers or (cores // 2, cores - cores // 2)
    ways = ways or (llc // 2, llc - llc // 2)
    rates = fractions * np.array([off.tables[i].isolated_qps, off.tables[j].isolated_qps])
    i_args = (off.models[i], off.tables[i])
    j_args = (off.models[j], off.tables[j])
    start = (list(workers), list(ways))
    return _core.hera.simulate_node(node, *i_args, *j_args, controller, rates, window_s, *start)


def max_partner_loads(
    off: HeraOffline,
    x_model: str = "dlrm_d",
    partners: Sequence[str] | None = None,
    loads: Sequence[float] = FIG12_LOADS,
    controllers: Sequence[str] = CONTROLLERS,
) -> dict[str, dict[str, list[float]]]:
    """Fig. 12: with ``x_model`` at each load fraction, the largest fraction of each partner's
    max load each manager sustains: {controller: {partner: [y per load]}}."""
    partners = [p for p in (partners or off.names) if p != x_model]
    i = off.index(x_model)
    out: dict[str, dict[str, list[float]]] = {}
    for c in controllers:
        if c not in CONTROLLERS:
            raise KeyError(f"controller {c!r} is unknown; known: {', '.join(CONTROLLERS)}")
        out[c] = {}
        for p in partners:
            j = off.index(p)
            out[c][p] = [
                _core.hera.max_partner_load(
                    off.node,
                    off.models[i],
                    off.tables[i],
                    off.models[j],
                    off.tables[j],
                    c,
                    float(x),
                )
                for x in loads
            ]
    return out


def rmu_emu(
    off: HeraOffline,
    x_model: str = "dlrm_d",
    partners: Sequence[str] | None = None,
    loads: Sequence[float] = FIG12_LOADS,
) -> dict[str, float]:
    """Mean EMU (x + y over every partner and load of Fig. 12) under each manager, and Hera's
    gain over PARTIES (the paper: +12% on average)."""
    curves = max_partner_loads(off, x_model, partners, loads)
    mean = {
        c: float(np.mean([x + y for ys in v.values() for x, y in zip(loads, ys, strict=False)]))
        for c, v in curves.items()
    }
    return {**mean, "gain": mean["hera"] / mean["parties"] - 1}
