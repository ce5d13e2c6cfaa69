"""Cluster-wide placement (Algorithm 2, Sec. VII-C): servers needed to meet per-model target QPS
under Hera, Hera(Random), Random and DeepRecSys, with even (Fig. 15) or skewed (Fig. 16) targets.

Targets are in queries/s per model. ``targets_for`` builds them the way Sec. VII-C does: an even
level gives every model the same target QPS (so DLRM(B), at ~270 QPS per server, needs far more
servers than NCF at ~25,000: "low worker scalability models like DLRM(B,D) require a larger number
of servers"); a skewed one splits the same total between the low and the high models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ... import _core
from .offline import HeraOffline
from .selection import SELECTIONS
from .sweeps import offline_from, offline_source, run_points

DEFAULT_MAX_SERVERS = 100_000


@dataclass(frozen=True)
class ClusterPlan:
    """Servers placed by one policy: each a model alone or a pair, with the QPS each serves."""

    selection: str
    servers: list[dict[str, Any]]
    serviced: dict[str, float]
    target: dict[str, float]
    feasible: bool
    reason: str
    emu: float  # mean over servers of their summed load fractions
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "selection": self.selection,
            "num_servers": self.num_servers,
            "feasible": self.feasible,
            "reason": self.reason,
            "emu": self.emu,
            "target": self.target,
            "serviced": self.serviced,
            "servers": self.servers,
        }


def _targets(off: HeraOffline, target_qps: Mapping[str, float] | Sequence[float]) -> np.ndarray:
    if isinstance(target_qps, Mapping):
        unknown = sorted(set(target_qps) - set(off.names))
        if unknown:
            raise KeyError(f"target_qps names models that are not profiled: {', '.join(unknown)}")
        values = [target_qps.get(n, 0.0) for n in off.names]
    else:
        values = list(target_qps)
        if len(values) != len(off.names):
            raise ValueError(f"target_qps has {len(values)} entries for {len(off.names)} models")
    out = np.asarray(values, dtype=float)
    pairs = zip(off.names, values, strict=True)
    bad = [f"{n}={v!r}" for n, v in pairs if not (np.isfinite(v) and v >= 0)]
    if bad:
        raise ValueError(f"target_qps must be finite and >= 0: {', '.join(bad)}")
    return out


def schedule(
    off: HeraOffline,
    target_qps: Mapping[str, float] | Sequence[float],
    selection: str = "hera",
    *,
    seed: int = 0,
    max_servers: int = DEFAULT_MAX_SERVERS,
) -> ClusterPlan:
    """Places servers until every model's target QPS is serviced. An infeasible plan (a model no
    server can host, or more than ``max_servers`` needed) says which models fall short."""
    if selection not in SELECTIONS:
        raise KeyError(f"selection {selection!r} is unknown; known: {', '.join(SELECTIONS)}")
    target = _targets(off, target_qps)
    t = off.cluster_tables()
    raw = _core.hera.schedule_cluster(
        t["isolated_qps"],
        t["high"],
        t["affinity"],
        t["pair_qps"],
        target,
        selection,
        seed,
        max_servers,
    )
    names = off.names
    servers = [
        {
            "a": names[a],
            "b": names[b] if b >= 0 else None,
            "qps_a": float(qa),
            "qps_b": float(qb),
            "emu": float(e),
        }
        for a, b, qa, qb, e in zip(
            raw["model_a"],
            raw["model_b"],
            raw["qps_a"],
            raw["qps_b"],
            raw["server_emu"],
            strict=True,
        )
    ]
    reason = raw["reason"]
    for i, n in enumerate(names):  # the C++ side names models by index
        reason = reason.replace(f"model {i} ", f"model {n!r} ")
    return ClusterPlan(
        selection=selection,
        servers=servers,
        serviced=dict(zip(names, map(float, raw["serviced"]), strict=False)),
        target=dict(zip(names, map(float, target), strict=False)),
        feasible=bool(raw["feasible"]),
        reason=reason,
        emu=float(raw["emu"]),
        meta={"seed": seed, "max_servers": max_servers},
    )


def targets_for(off: HeraOffline, qps: float, low_share: float | None = None) -> dict[str, float]:
    """Per-model target QPS: even (every model ``qps``, Fig. 15), or skewed (Fig. 16): of the
    total ``qps * n``, the low worker-scalability models together get ``low_share``, evenly, and
    the high ones the rest."""
    if not (np.isfinite(qps) and qps >= 0):
        raise ValueError(f"qps={qps!r} must be finite and >= 0")
    n = len(off.names)
    if low_share is None:
        return {name: float(qps) for name in off.names}
    if not (0 <= low_share <= 1):
        raise ValueError(f"low_share={low_share!r} must be in [0, 1]")
    low, high = off.low_models, off.high_models
    if (low_share > 0 and not low) or (low_share < 1 and not high):
        missing = "low" if not low else "high"
        raise ValueError(f"low_share={low_share}: there is no {missing} worker-scalability model")
    return {m: qps * n * low_share / len(low) for m in low} | {
        m: qps * n * (1 - low_share) / len(high) for m in high
    }


def servers_table(
    off: HeraOffline,
    levels: Sequence[float],
    *,
    low_share: float | None = None,
    selections: Sequence[str] = SELECTIONS,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    max_servers: int = DEFAULT_MAX_SERVERS,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """One row per (level, selection, seed): ``servers``, ``emu``, ``feasible``, ``reason`` of
    the plan for the per-model target QPS ``level`` (Fig. 15 even, Fig. 16 with ``low_share``);
    the deterministic policies run seed ``seeds[0]`` only. The plans are independent points of
    ``servelab.sweep`` (``processes``, ``backend``, ``ray_address`` as there)."""
    for s in selections:
        if s not in SELECTIONS:
            raise KeyError(f"selection {s!r} is unknown; known: {', '.join(SELECTIONS)}")
    if not seeds:
        raise ValueError("seeds is empty")
    for level in levels:  # bad levels and shares fail here, before any point runs
        targets_for(off, level, low_share)
    points = [
        {"level": float(level), "selection": s, "seed": int(seed)}
        for level in levels
        for s in selections
        for seed in (seeds if "random" in s else seeds[:1])
    ]
    shared = {"source": offline_source(off), "low_share": low_share, "max_servers": max_servers}
    rows = run_points(
        _plan_point, points, shared, processes=processes, backend=backend, ray_address=ray_address
    )
    return pd.DataFrame(
        rows, columns=["level", "selection", "seed", "servers", "emu", "feasible", "reason"]
    )


def _plan_point(
    level: float,
    selection: str,
    seed: int,
    source: Mapping[str, Any],
    low_share: float | None,
    max_servers: int,
) -> dict[str, Any]:
    """One plan of servers_table (module level: sweep workers import it)."""
    off = offline_from(source)
    plan = schedule(
        off, targets_for(off, level, low_share), selection, seed=seed, max_servers=max_servers
    )
    return {
        "servers": plan.num_servers,
        "emu": plan.emu,
        "feasible": plan.feasible,
        "reason": plan.reason,
    }


def servers_needed(
    off: HeraOffline,
    levels: Sequence[float],
    *,
    low_share: float | None = None,
    selections: Sequence[str] = SELECTIONS,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    max_servers: int = DEFAULT_MAX_SERVERS,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> dict[str, list[float]]:
    """Servers each policy needs at each per-model target QPS level (Fig. 15 even, Fig. 16 with
    ``low_share``); the random policies average over ``seeds``. An infeasible level raises
    ValueError with the reason. ``processes``, ``backend``, ``ray_address``: see
    ``servers_table``."""
    table = servers_table(
        off, levels, low_share=low_share, selections=selections, seeds=seeds,
        max_servers=max_servers, processes=processes, backend=backend, ray_address=ray_address,
    )  # fmt: skip
    bad = table[~table["feasible"]]
    if len(bad):
        first = bad.iloc[0]
        raise ValueError(
            f"level={first['level']}, selection={first['selection']!r}: {first['reason']}"
        )
    out: dict[str, list[float]] = {s: [] for s in selections}
    for level in levels:
        for s in selections:
            rows = table[(table["level"] == float(level)) & (table["selection"] == s)]
            out[s].append(float(np.mean(rows["servers"])))
    return out
