"""Hera's node resource manager as a registered scheduler, run through ``servelab.simulate`` (or
``servelab.serve``): a Scenario with two applications on one node, one Table I model each.

By default (``machine=True``) the node is a machine (``machines:``, with the node's cores, LLC
ways and DRAM bandwidth) hosting the two models' workers as co-located instances, and the run's
interference model is ``hera_contention``: the profile gives each model its service time alone on
the whole node, and the simulator stretches every query by the contention model's slowdown under
the partition the manager sets (each instance's ``cores`` and ``llc_ways``) and the queries running
beside it, re-timing running queries whenever that changes. ``machine=False`` builds the older
scenario: one machine per worker, each model's service time the contention model's at Hera's
starting allocation and the scenario's loads, not following the ways the manager sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import _core
from ...profiles import Profile
from ...scenario import Scenario
from .offline import HeraOffline
from .schedulers import MANAGERS, manager_spec

HARDWARE = "xeon-core"  # one worker per core of the node
MACHINE = "node"  # the machine group of a co-located scenario


def contention_spec(off: HeraOffline, a: str, b: str) -> str:
    """The ``hera_contention`` interference model of models a and b on ``off.node`` (its cores,
    ways and bandwidth come from the scenario's machine). ValueError when a model is not Table I's
    as shipped (the registered model knows only those)."""
    for name in (a, b):
        mine = off.models[off.index(name)]
        try:
            shipped = _core.hera.table1_model(name)
        except KeyError:
            shipped = None
        same = shipped is not None and all(
            getattr(mine, f) == getattr(shipped, f)
            for f in ("compute_ms", "cache_stall", "shared_ws_mb", "private_ws_mb", "sparse_mb",
                      "dense_mb", "sla_ms")
        )  # fmt: skip
        if not same:
            raise ValueError(
                f"model {name!r} is not Table I's as shipped: hera_contention knows only those "
                "(use machine=False)"
            )
    n = off.node
    return (
        f"hera_contention(models='{a},{b}', llc_mb={n.llc_mb!r}, "
        f"mem_bandwidth_gbs={n.mem_bandwidth_gbs!r}, core_bandwidth_gbs={n.core_bandwidth_gbs!r}, "
        f"bandwidth_knee={n.bandwidth_knee!r})"
    )


def alone_profile(off: HeraOffline, a: str, b: str) -> Profile:
    """A Profile with one hardware type (a core of the node) and models a, b; each model's
    latency (batch 1: one query) is its time alone on the whole node (one worker, every way,
    idle DRAM), which ``hera_contention`` stretches by the partition and the co-runners."""
    profile = Profile()
    profile.add_hardware(HARDWARE, price_per_hour=0.0)
    n = off.node
    for name in (a, b):
        s = off.models[off.index(name)].alone_latency_ms(n.llc_mb, n.core_bandwidth_gbs) / 1e3
        profile.set_latency(HARDWARE, name, 1, samples_s=[0.9 * s, s, 1.1 * s])
    return profile


def machine_workers(
    off: HeraOffline, a: str, b: str, start: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The machine group (the node) and the worker groups of a co-located scenario starting from
    ``start`` (``HeraOffline.pair``): each worker an instance with a core ("cores": 1), each
    model's ways split over its instances ("llc_ways", the first ones one more)."""
    n = off.node
    machines = [
        {
            "name": MACHINE,
            "count": 1,
            "cores": n.cores,
            "llc_ways": n.llc_ways,
            "memory_bw_gbps": n.mem_bandwidth_gbs,
        }
    ]
    workers = []
    for name, key in ((a, "a"), (b, "b")):
        count, ways = int(start[f"workers_{key}"]), int(start[f"ways_{key}"])
        each, more = divmod(ways, count)
        for k, c in ((each + 1, more), (each, count - more)):
            if c > 0:
                workers.append(
                    {
                        "hardware": HARDWARE,
                        "count": c,
                        "models": [name],
                        "machine": MACHINE,
                        "config": {"cores": 1, "llc_ways": k},
                    }
                )
    return machines, workers


def node_profile(off: HeraOffline, a: str, b: str, load_a: float, load_b: float) -> Profile:
    """A Profile with one hardware type (a core of the node) and models a, b; each model's
    latency (batch 1: one query) is the contention model's service time at Hera's starting
    allocation of the pair, at loads (fractions of isolated max load) load_a and load_b."""
    i, j = off.index(a), off.index(b)
    start = off.pair(a, b)
    if not start["feasible"]:
        raise ValueError(f"{a} and {b} cannot share a node: {start['reason']}")
    rates = [load_a * off.tables[i].isolated_qps, load_b * off.tables[j].isolated_qps]
    tenants = [
        (off.models[i], start["workers_a"], start["ways_a"]),
        (off.models[j], start["workers_b"], start["ways_b"]),
    ]
    loaded = _core.hera.evaluate_at(off.node, tenants, rates)
    profile = Profile()
    profile.add_hardware(HARDWARE, price_per_hour=0.0)
    for name, t in ((a, loaded[0]), (b, loaded[1])):
        s = t["service_ms"] / 1e3
        profile.set_latency(HARDWARE, name, 1, samples_s=[0.9 * s, s, 1.1 * s])
    return profile


def node_scenario(
    off: HeraOffline,
    a: str,
    b: str,
    load_a: float,
    load_b: float,
    manager: str = "hera_rmu",
    *,
    duration_s: float = 30.0,
    monitor_s: float = 1.0,
    seed: int = 0,
    machine: bool = True,
) -> Scenario:
    """Two applications (a and b, Poisson, one query = one request) on one node starting from
    Hera's allocation of the pair, managed by ``manager`` ('hera_rmu' or 'parties'); the node a
    machine of co-located instances under ``hera_contention`` unless ``machine=False`` (see the
    module's docstring)."""
    if manager not in MANAGERS:
        raise KeyError(f"manager {manager!r} is unknown; known: {', '.join(MANAGERS)}")
    for name, load in (("load_a", load_a), ("load_b", load_b)):
        if not (isinstance(load, (int, float)) and 0 < load <= 2):
            raise ValueError(f"{name}={load!r} must be a fraction of the max load in (0, 2]")
    if not (duration_s > 0 and monitor_s > 0):
        raise ValueError(f"duration_s={duration_s!r} and monitor_s={monitor_s!r} must be > 0")
    i, j = off.index(a), off.index(b)
    rate_a, rate_b = load_a * off.tables[i].isolated_qps, load_b * off.tables[j].isolated_qps
    start = off.pair(a, b)
    if not start["feasible"]:
        raise ValueError(f"{a} and {b} cannot share a node: {start['reason']}")
    extra: dict[str, Any] = {}
    if machine:
        machines, workers = machine_workers(off, a, b, start)
        profile = alone_profile(off, a, b)
        extra = {"machines": machines, "interference": contention_spec(off, a, b)}
    else:
        profile = node_profile(off, a, b, load_a, load_b)
        workers = [
            {"hardware": HARDWARE, "count": start["workers_a"], "models": [a]},
            {"hardware": HARDWARE, "count": start["workers_b"], "models": [b]},
        ]
    return Scenario(
        profile=profile,
        workers=workers,
        **extra,
        workload={
            "arrivals": f"poisson(rate={rate_a + rate_b})",
            "horizon_s": duration_s,
            "apps": [
                {
                    "name": a,
                    "slo_ms": off.models[i].sla_ms,
                    "share": rate_a,
                    "sizes": "constant(value=1)",
                },
                {
                    "name": b,
                    "slo_ms": off.models[j].sla_ms,
                    "share": rate_b,
                    "sizes": "constant(value=1)",
                },
            ],
        },
        scheduler=manager_spec(manager, a, b, cores=off.node.cores, monitor_s=monitor_s),
        seed=seed,
        name=f"hera node {a}+{b} ({manager})",
    )


def run_managed(
    off: HeraOffline, a: str, b: str, load_a: float, load_b: float, **kwargs: Any
) -> dict[str, Any]:
    """Simulates ``node_scenario`` under each manager. Per manager: ``by_app`` (the per-application
    ``Result.summary``), ``summary`` (the whole run's) with one Hera key added, ``emu``: the sum
    over the two models of their goodput (queries/s that met the SLA) as a fraction of their
    isolated max load (1.0 = 100%), and the ``result``."""
    import servelab  # the package: simulate lives there

    out = {}
    for manager in MANAGERS:
        scenario = node_scenario(off, a, b, load_a, load_b, manager, **kwargs)
        result = servelab.simulate(scenario)
        by_app = result.summary(by="app")
        emu = sum(by_app[m]["goodput_qps"] / off.isolated_qps(m) for m in (a, b))
        summary = {**result.summary(), "emu": emu}
        out[manager] = {"by_app": by_app, "summary": summary, "emu": emu, "result": result}
    return out


def settled_tails(
    off: HeraOffline,
    a: str,
    b: str,
    load_a: float,
    loads_b: Sequence[float],
    manager: str = "hera_rmu",
    *,
    duration_s: float = 20.0,
    monitor_s: float = 1.0,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Fig. 12's points in the engine: ``node_scenario`` on a machine under ``hera_contention``
    at constant loads (a at ``load_a``, b at each of ``loads_b``), and each model's p95 over its
    SLA over the queries arriving in the second half of the run (an uncompleted query counts as
    infinitely late). One row per load: ``load_b``, ``tail_a``, ``tail_b``, ``sustained`` (both
    within their SLAs)."""
    import servelab  # the package: simulate lives there

    slo = [off.models[off.index(m)].sla_ms for m in (a, b)]
    rows = []
    for load_b in loads_b:
        scenario = node_scenario(
            off, a, b, load_a, float(load_b), manager, duration_s=duration_s,
            monitor_s=monitor_s, seed=seed,
        )  # fmt: skip
        c = servelab.simulate(scenario).columns
        latency = np.where(c["finish_ns"] >= 0, c["finish_ns"] - c["arrival_ns"], np.inf)
        late = c["arrival_ns"] >= duration_s / 2 * 1e9
        tails = []
        for app in (0, 1):
            x = latency[(c["app"] == app) & late].astype(float)
            tails.append(float(np.quantile(x, 0.95, method="higher")) / (slo[app] * 1e6))
        rows.append(
            {
                "load_b": float(load_b),
                "tail_a": tails[0],
                "tail_b": tails[1],
                "sustained": bool(tails[0] <= 1 and tails[1] <= 1),
            }
        )
    return rows
