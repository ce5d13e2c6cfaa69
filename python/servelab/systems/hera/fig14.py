"""Hera's Fig. 14 as a Scenario: two models on one node whose loads move in opposite directions,
managed by the registered schedulers ``hera_rmu`` and ``parties`` in ``servelab.simulate`` (or
``servelab.serve``), the same policies that ``rmu.run_node`` drives over the contention model.

Each application has its own arrival process: Poisson at a rate that is constant within each
window (``piecewise_rate``), following ``rmu.fig14_loads``: both models rise until T1 (a third of
the run), where model b drops to 20% of its max load; at T2 (two thirds) b jumps 20% -> 60% while
a drops 70% -> 10%. As in ``experiments.node_scenario``, the node is by default a machine whose
co-located instances slow each other down under ``hera_contention``, following the cores and ways
the manager sets as it sets them; ``machine=False`` gives the older scenario, whose service times
are the contention model's at Hera's starting allocation and each model's highest load of the run,
fixed for the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...results import Result
from ...scenario import Scenario
from .experiments import (
    HARDWARE,
    alone_profile,
    contention_spec,
    machine_workers,
    node_profile,
)
from .offline import HeraOffline
from .rmu import fig14_loads
from .schedulers import MANAGERS, manager_spec

#: the paper's finding (Sec. VII-B): Hera holds the SLA through both load changes; PARTIES, a
#: feedback loop of one core or way per window, "frequently exhibits sudden spikes of SLA
#: violations"
PAPER_FIG14 = {"hera_rmu": "at or below the SLA", "parties": "spikes over the SLA"}


def _rates_spec(rates: np.ndarray, window_s: float) -> str:
    listed = ", ".join(f"{r:.6g}" for r in rates)
    return f"piecewise_rate(interval_s={window_s!r}, rates=[{listed}])"


def fig14_scenario(
    off: HeraOffline,
    a: str = "dlrm_d",
    b: str = "ncf",
    manager: str = "hera_rmu",
    *,
    windows: int = 60,
    window_s: float = 1.0,
    scale: float = 1.0,
    seed: int = 0,
    machine: bool = True,
) -> Scenario:
    """Fig. 14 on one node: application a (model a) and b (model b), each arriving at
    ``fig14_loads(windows)`` x its isolated max load, one rate per window of ``window_s`` seconds,
    managed by ``manager`` ('hera_rmu' or 'parties') every ``window_s``. The run lasts
    ``windows * window_s`` seconds and starts from Hera's allocation of the pair. ``scale``
    multiplies every rate (1: the paper's loads; less for a short real-serving check).
    ``machine``: co-located instances under ``hera_contention`` (the module's docstring)."""
    if manager not in MANAGERS:
        raise KeyError(f"manager {manager!r} is unknown; known: {', '.join(MANAGERS)}")
    if not (isinstance(window_s, (int, float)) and np.isfinite(window_s) and window_s > 0):
        raise ValueError(f"window_s={window_s!r} must be a positive number of seconds")
    if not (isinstance(scale, (int, float)) and np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale={scale!r} must be a positive number (1: the paper's loads)")
    loads = fig14_loads(windows)  # ValueError for windows < 3
    i, j = off.index(a), off.index(b)
    start = off.pair(a, b)
    if not start["feasible"]:
        raise ValueError(f"{a} and {b} cannot share a node: {start['reason']}")
    peak_a, peak_b = (float(x) for x in loads.max(axis=0))
    apps = []
    for name, k, column in ((a, i, 0), (b, j, 1)):
        rates = loads[:, column] * off.tables[k].isolated_qps * scale
        apps.append(
            {
                "name": name,
                "slo_ms": off.models[k].sla_ms,
                "sizes": "constant(value=1)",
                "arrivals": _rates_spec(rates, float(window_s)),
            }
        )
    extra: dict[str, Any] = {}
    if machine:
        machines, workers = machine_workers(off, a, b, start)
        profile = alone_profile(off, a, b)
        extra = {"machines": machines, "interference": contention_spec(off, a, b)}
    else:
        profile = node_profile(off, a, b, peak_a, peak_b)
        workers = [
            {"hardware": HARDWARE, "count": start["workers_a"], "models": [a]},
            {"hardware": HARDWARE, "count": start["workers_b"], "models": [b]},
        ]
    return Scenario(
        profile=profile,
        workers=workers,
        **extra,
        workload={"horizon_s": windows * float(window_s), "apps": apps},
        scheduler=manager_spec(manager, a, b, cores=off.node.cores, monitor_s=float(window_s)),
        seed=seed,
        name=f"hera fig14 {a}+{b} ({manager})",
    )


def window_tails(result: Result, window_s: float, slo_ms: Sequence[float]) -> np.ndarray:
    """Each application's p95 latency over SLA per window, as Fig. 14 plots it: shape
    (apps, windows), queries grouped by the window of their arrival, a query that did not complete
    counting as infinitely late, NaN for a window without arrivals."""
    c = result.columns
    window_ns = round(window_s * 1e9)
    n_windows = max(1, round(result.meta["scenario"]["workload"]["horizon_s"] / window_s))
    latency = np.where(c["finish_ns"] >= 0, c["finish_ns"] - c["arrival_ns"], np.inf).astype(float)
    window = np.minimum(c["arrival_ns"] // window_ns, n_windows - 1)
    out = np.full((len(slo_ms), n_windows), np.nan)
    for app, slo in enumerate(slo_ms):
        mine = c["app"] == app
        for w in range(n_windows):
            x = latency[mine & (window == w)]
            if x.size:
                out[app, w] = np.quantile(x, 0.95, method="higher") / (slo * 1e6)
    return out


def run_fig14(
    off: HeraOffline,
    a: str = "dlrm_d",
    b: str = "ncf",
    *,
    windows: int = 60,
    window_s: float = 1.0,
    settle_windows: int = 3,
    seed: int = 0,
    machine: bool = True,
) -> dict[str, dict[str, Any]]:
    """Simulates ``fig14_scenario`` under each manager. Per manager: ``tails`` (p95 / SLA per
    application and window, ``window_tails``), ``over`` (windows over the SLA per application),
    ``over_settled`` (the same, counting only windows at least ``settle_windows`` after each of the
    two sudden load changes T1 and T2, up to the next: whether the manager settles) and
    ``result``."""
    import servelab  # the package: simulate lives there

    if not (isinstance(settle_windows, int) and 0 <= settle_windows < windows // 3):
        raise ValueError(
            f"settle_windows={settle_windows!r} must be an integer in [0, windows // 3)"
        )
    t1, t2 = windows // 3, 2 * windows // 3
    settled = np.zeros(windows, dtype=bool)
    settled[t1 + settle_windows : t2] = True
    settled[t2 + settle_windows :] = True
    slo = [off.models[off.index(m)].sla_ms for m in (a, b)]
    out = {}
    for manager in MANAGERS:
        scenario = fig14_scenario(
            off, a, b, manager, windows=windows, window_s=window_s, seed=seed, machine=machine
        )
        result = servelab.simulate(scenario)
        tails = window_tails(result, window_s, slo)
        over = tails > 1.0  # NaN (no arrivals) is not over
        out[manager] = {
            "tails": tails,
            "over": [int(n) for n in over.sum(axis=1)],
            "over_settled": [int(n) for n in over[:, settled].sum(axis=1)],
            "result": result,
        }
    return out
