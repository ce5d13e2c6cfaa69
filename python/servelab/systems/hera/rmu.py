"""Hera's node-level resource management unit (Algorithm 3) against a PARTIES-style feedback
manager, on a node hosting two models (Sec. VII-A2 and VII-B, Fig. 12-14).

The managers run in C++ (``servelab._core.hera``) window by window over the contention model:
each window they see each model's p95 latency and arrival rate and set the next cores and LLC
ways. Loads are given as fractions of each model's isolated max load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import _core
from .offline import HeraOffline
from .sweeps import offline_from, offline_source, run_points

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


def best_static_partner_load(
    off: HeraOffline, a: str, b: str, load_a: float, *, resolution: float = 0.005
) -> dict[str, Any]:
    """The bound a node manager can reach at one Fig. 12 point, in the contention model: with a at
    ``load_a`` of its isolated max load, the largest fraction of b's max load that some fixed
    allocation (every split of the cores and of the ways) serves with both p95s within their
    SLAs (``evaluate_at``). Returns ``partner_load`` and the allocation (``workers``, ``ways``).
    Bisection on the load to ``resolution``."""
    if not 0 <= load_a <= 1:
        raise ValueError(f"load_a={load_a!r} must be in [0, 1]")
    i, j = off.index(a), off.index(b)
    node = off.node
    ma, mb = off.models[i], off.models[j]
    rate_a = load_a * off.tables[i].isolated_qps

    def fits(load_b: float) -> tuple[tuple[int, int], tuple[int, int]] | None:
        rates = [rate_a, load_b * off.tables[j].isolated_qps]
        for wa in range(1, node.cores):
            for wb in range(1, node.cores - wa + 1):
                for ka in range(1, node.llc_ways):
                    kb = node.llc_ways - ka
                    try:
                        t = _core.hera.evaluate_at(node, [(ma, wa, ka), (mb, wb, kb)], rates)
                    except ValueError:  # beyond the node's memory
                        continue
                    if t[0]["p95_ms"] <= ma.sla_ms and t[1]["p95_ms"] <= mb.sla_ms:
                        return (wa, wb), (ka, kb)
        return None

    lo, hi, best = 0.0, 1.0, fits(1.0)
    if best is not None:
        lo = hi
    while hi - lo > resolution:
        mid = 0.5 * (lo + hi)
        found = fits(mid)
        if found is not None:
            lo, best = mid, found
        else:
            hi = mid
    return {
        "partner_load": lo,
        "workers": best[0] if best else None,
        "ways": best[1] if best else None,
    }


def partner_loads_table(
    off: HeraOffline,
    x_model: str = "dlrm_d",
    partners: Sequence[str] | None = None,
    loads: Sequence[float] = FIG12_LOADS,
    controllers: Sequence[str] = CONTROLLERS,
    *,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Fig. 12 as rows (controller, partner, load, partner_load): with ``x_model`` at ``load`` of
    its max load, the largest fraction of the partner's max load the controller sustains. Each row
    is a point of ``servelab.sweep`` (``processes``, ``backend``, ``ray_address`` as there)."""
    partners = [p for p in (partners or off.names) if p != x_model]
    off.index(x_model)
    for p in partners:
        off.index(p)
    for c in controllers:
        if c not in CONTROLLERS:
            raise KeyError(f"controller {c!r} is unknown; known: {', '.join(CONTROLLERS)}")
    points = [
        {"controller": c, "partner": p, "load": float(x)}
        for c in controllers
        for p in partners
        for x in loads
    ]
    shared = {"source": offline_source(off), "x_model": x_model}
    rows = run_points(
        _partner_point, points, shared, processes=processes, backend=backend,
        ray_address=ray_address,
    )  # fmt: skip
    return pd.DataFrame(rows, columns=["controller", "partner", "load", "partner_load"])


def _partner_point(
    controller: str, partner: str, load: float, source: Mapping[str, Any], x_model: str
) -> dict[str, float]:
    """One point of partner_loads_table (module level: sweep workers import it)."""
    off = offline_from(source)
    i, j = off.index(x_model), off.index(partner)
    y = _core.hera.max_partner_load(
        off.node, off.models[i], off.tables[i], off.models[j], off.tables[j], controller, load
    )
    return {"partner_load": float(y)}


def max_partner_loads(
    off: HeraOffline,
    x_model: str = "dlrm_d",
    partners: Sequence[str] | None = None,
    loads: Sequence[float] = FIG12_LOADS,
    controllers: Sequence[str] = CONTROLLERS,
    **sweep_args: Any,
) -> dict[str, dict[str, list[float]]]:
    """Fig. 12: with ``x_model`` at each load fraction, the largest fraction of each partner's
    max load each manager sustains: {controller: {partner: [y per load]}}. ``sweep_args``:
    ``processes``, ``backend``, ``ray_address`` (see ``partner_loads_table``)."""
    table = partner_loads_table(off, x_model, partners, loads, controllers, **sweep_args)
    out: dict[str, dict[str, list[float]]] = {}
    for row in table.itertuples(index=False):
        out.setdefault(row.controller, {}).setdefault(row.partner, []).append(row.partner_load)
    return out


def rmu_emu(
    off: HeraOffline,
    x_model: str = "dlrm_d",
    partners: Sequence[str] | None = None,
    loads: Sequence[float] = FIG12_LOADS,
    **sweep_args: Any,
) -> dict[str, float]:
    """Mean EMU (x + y over every partner and load of Fig. 12) under each manager, and Hera's
    gain over PARTIES (the paper: +12% on average). ``sweep_args`` as for max_partner_loads."""
    curves = max_partner_loads(off, x_model, partners, loads, **sweep_args)
    mean = {
        c: float(np.mean([x + y for ys in v.values() for x, y in zip(loads, ys, strict=False)]))
        for c, v in curves.items()
    }
    return {**mean, "gain": mean["hera"] / mean["parties"] - 1}
