"""Hera's node resource manager as a registered scheduler, run through ``servelab.simulate`` (or
``servelab.serve``): a Scenario with two applications on one node, one Table I model each.

The scenario's profile gives each model the service time the contention model predicts for it at
Hera's starting allocation of the pair (``HeraOffline.pair``: cores split, ways by
adjust_LLC_partition) and the scenario's loads; the simulator's service times do not change with
the ways the manager sets later (see docs/hera.md). The schedulers ``hera_rmu`` and
``parties`` then add and remove workers every ``monitor_s`` and set each worker's ``llc_ways``.
"""

from __future__ import annotations

from typing import Any

from ... import _core
from ...profiles import Profile
from ...scenario import Scenario
from .offline import HeraOffline

HARDWARE = "xeon-core"  # one worker per core of the node
MANAGERS = ("hera_rmu", "parties")


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
) -> Scenario:
    """Two applications (a and b, Poisson, one query = one request) on one node starting from
    Hera's allocation of the pair, managed by ``manager`` ('hera_rmu' or 'parties')."""
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
    return Scenario(
        profile=node_profile(off, a, b, load_a, load_b),
        workers=[
            {"hardware": HARDWARE, "count": start["workers_a"], "models": [a]},
            {"hardware": HARDWARE, "count": start["workers_b"], "models": [b]},
        ],
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
        scheduler=f"{manager}(models='{a},{b}', cores={off.node.cores}, monitor_s={monitor_s})",
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
