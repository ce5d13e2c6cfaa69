"""The initial variant set for several applications: Sec. 4.2.1's integer program extended to
every application at once, solved exactly with servelab's LP/MILP adapter (``solvers.lp``, CBC),
and the Sec. 4.2.2 greedy run per application beside it, so the greedy's cost gap can be
reported::

    from servelab.infaas import catalogue, planner

    apps = [{"name": "resnet50", "slo_ms": 50, "accuracy_floor": 0.749, "qps": 300}, ...]
    plan = planner.plan_placement(catalogue.table8_variants(), apps, {"cpu": 5, "gpu": 5})
    plan["instances"]     # {variant name: instances}
    planner.worker_groups(plan, variants, {"cpu": 5, "gpu": 5})   # a scenario's workers

**The program** (Sec. 4.2.1 with N = 0, lambda = 0, for applications a and variants v):
minimise sum_v C_v n_v over integers n_v >= 0 (instances) and served loads x_av >= 0, subject to
(1) sum_v x_av + u_a >= L_a x slack for each application, (2) x_av only where v has a's task,
meets a's accuracy floor and its batch-1 latency meets a's SLO, capacity sum_a x_av / Q_av <=
n_v, and (3) sum_{v on h} n_v <= the workers of hardware h: one instance per worker, since a
servelab worker runs one batch at a time. Q_av is v's saturation QPS over the batches whose
latency meets a's SLO (the C++ ``Variant::saturation_qps(slo)`` the infaas policy decides with,
through ``MetadataStore.saturation_qps``): a batch-4 CPU variant whose batch of 4 misses the SLO
carries its batch-1 rate. Applications with different SLOs may share an instance, each using a
share x_av / Q_av of it. Model-less: one instance may serve several applications. u_a is load
left unserved, priced far above any instance, so the program always has a solution and says
how much the workers cannot carry (``unserved_qps``).

**Ties** (``tie_break``). When the workers cannot carry every load, every optimum uses every
worker and leaves the same load unserved, so many plans cost the same: which one CBC returns is
an accident of the search. ``tie_break="headroom"`` makes the answer lexicographic: among the
plans of optimal cost and with the same load unserved per application, the one maximising the
smallest headroom (capacity given / load, over the applications it serves in full): the plan
that carries the largest uniform rise of every served load, so the busiest applications get
the fastest variants. ``None`` (the default) keeps the first solve's plan.

**The greedy beside it** (``greedy_placement``): the C++ Sec. 4.2.2 heuristic on each
application alone (its own candidates with Q_v within its SLO, every worker of each hardware
type available to it), the instances summed; it neither shares instances between applications
nor sees the other applications' use of the workers, so it may need more workers than there are
(``fits``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ... import _core
from ...solvers import lp
from . import autoscaler
from .catalogue import check_variants

#: Unserved load costs this many times the dearest instance, per QPS.
UNSERVED_PENALTY = 1000.0
#: ``plan_placement``'s rules for choosing among plans of equal cost (module doc, "Ties").
TIE_BREAKS = (None, "headroom")


def _check(apps: Sequence[Mapping[str, Any]], workers: Mapping[str, int], slack: float) -> None:
    if not apps:
        raise ValueError("apps is empty: give at least one application")
    for i, a in enumerate(apps):
        for key in ("slo_ms", "qps"):
            value = a.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"apps[{i}].{key}={value!r} must be a number >= 0")
    for hw, n in workers.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"workers[{hw!r}]={n!r} must be an integer >= 0")
    if not (isinstance(slack, int | float) and slack >= 1.0):
        raise ValueError(f"slack={slack!r} must be >= 1")


def _saturation(variants: list[dict[str, Any]]) -> list[float]:
    store = _core.infaas.MetadataStore(variants)  # Q_v as the C++ side defines it
    return [float(store.saturation_qps(i)) for i in range(len(variants))]


def _serves(v: Mapping[str, Any], app: Mapping[str, Any]) -> bool:
    """Constraint (2): the variant meets the application's floor and, at batch 1, its SLO; an
    application naming a ``task`` or an ``architecture`` takes its variants only."""
    if app.get("task") is not None and v["task"] != app["task"]:
        return False
    if app.get("architecture") is not None and v["architecture"] != app["architecture"]:
        return False
    return v["accuracy"] >= app.get("accuracy_floor", 0.0) and v["latency_ms"][0] <= app["slo_ms"]


def saturation_within_slo(
    variants: Sequence[Mapping[str, Any]], apps: Sequence[Mapping[str, Any]]
) -> dict[tuple[int, int], float]:
    """Q_av for every (application index, variant index) pair that constraint (2) allows: the
    variant's saturation QPS over its batches meeting the application's SLO, computed by the C++
    ``Variant::saturation_qps(slo)`` (the infaas policy's own Q_v)."""
    checked = check_variants(variants)
    store = _core.infaas.MetadataStore(checked)
    out = {}
    for a, app in enumerate(apps):
        for i, v in enumerate(checked):
            if _serves(v, app):
                q = float(store.saturation_qps(i, float(app["slo_ms"])))
                if q > 0:
                    out[a, i] = q
    return out


def plan_placement(
    variants: Sequence[Mapping[str, Any]],
    apps: Sequence[Mapping[str, Any]],
    workers: Mapping[str, int],
    slack: float = 1.05,
    cost: Mapping[str, float] | None = None,
    time_limit_s: float = 60.0,
    tie_break: str | None = None,
    mip_gap: float = 1e-9,
    node_limit: int | None = None,
) -> dict[str, Any]:
    """The exact multi-application program (see the module doc); ``mip_gap`` and ``node_limit``
    (branch-and-bound nodes): CBC stops at this relative gap or after this many nodes with its
    best plan so far (both deterministic, unlike the time limit; the defaults are exact).
    ``apps``: dicts with ``slo_ms``, ``qps`` (the expected load L_a) and optionally
    ``accuracy_floor``, ``task``, ``architecture`` and ``name``;
    ``workers``: {hardware: count}; ``cost``: $/s of an instance by hardware (default: each
    variant's ``cost_per_s``); ``tie_break``: one of ``TIE_BREAKS`` (module doc, "Ties"; the
    result's ``min_headroom`` is the smallest headroom either way). Needs the LP backend
    (RuntimeError saying why otherwise)."""
    _check(apps, workers, slack)
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break={tie_break!r} must be one of {list(TIE_BREAKS)}")
    checked = [v for v in check_variants(variants) if workers.get(v["hardware"], 0) > 0]
    if not checked:
        raise ValueError(f"no variant runs on the workers' hardware {sorted(workers)}")
    q = saturation_within_slo(checked, apps)
    price = [float((cost or {}).get(v["hardware"], v["cost_per_s"])) for v in checked]
    penalty = UNSERVED_PENALTY * max(max(price), 1e-9)
    started = time.perf_counter()
    prog = lp.LinearProgram()
    n = [prog.add_variable(f"n{i}", integer=True, objective=price[i]) for i in range(len(checked))]
    flows: dict[tuple[int, int], Any] = {}
    unserved_vars = []
    for a, app in enumerate(apps):
        unserved = prog.add_variable(f"u{a}", objective=penalty)
        unserved_vars.append(unserved)
        terms = {unserved: 1.0}
        for i in range(len(checked)):
            if (a, i) in q:
                flows[a, i] = prog.add_variable(f"x{a}_{i}")
                terms[flows[a, i]] = 1.0
        prog.add_constraint(terms, lower=float(app["qps"]) * slack, name=f"load{a}")
    for i in range(len(checked)):
        # Each application's load takes the share x_av / Q_av of the instances' time.
        terms = {x: 1.0 / q[a, j] for (a, j), x in flows.items() if j == i}
        terms[n[i]] = -1.0
        prog.add_constraint(terms, upper=0.0, name=f"capacity{i}")
    for hw, count in workers.items():
        terms = {n[i]: 1.0 for i, v in enumerate(checked) if v["hardware"] == hw}
        if terms:
            prog.add_constraint(terms, upper=float(count), name=f"workers_{hw}")
    res = prog.solve(time_limit=time_limit_s, iteration_limit=node_limit, mip_gap=mip_gap)
    solve_s = time.perf_counter() - started
    if res.x is None:
        raise RuntimeError(f"the placement program ended {res.status} without a solution")
    val = res.values()
    # The load of each application served in full (one served in part has no headroom to give:
    # its capacity is what it is served).
    need = [
        float(app["qps"]) * slack if float(val[f"u{a}"]) <= 1e-9 else 0.0
        for a, app in enumerate(apps)
    ]
    if tie_break == "headroom" and any(d > 1e-9 for d in need):
        # Second stage, on the first's optima: the cost no higher, each application's unserved
        # load fixed, the smallest headroom h maximised (capacity of a >= h x its served load).
        optimum = sum(price[i] * val[f"n{i}"] for i in range(len(checked)))
        prog.add_constraint(
            {n[i]: price[i] for i in range(len(checked))},
            upper=optimum * (1 + 1e-9) + 1e-12,
            name="optimal_cost",
        )
        objective = {var: 0.0 for var in n}
        for a, u in enumerate(unserved_vars):
            prog.set_bounds(u, float(val[f"u{a}"]), float(val[f"u{a}"]))
            objective[u] = 0.0
        # Bounded above by the largest headroom any single instance could give.
        cap = max(q.values()) * max(workers.values()) / min(d for d in need if d > 1e-9)
        h = prog.add_variable("h", upper=cap, objective=-1.0)
        for a in range(len(apps)):
            if need[a] > 1e-9:
                terms = {x: 1.0 for (b, _), x in flows.items() if b == a}
                terms[h] = -need[a]
                prog.add_constraint(terms, lower=0.0, name=f"headroom{a}")
        prog.set_objective(objective)
        res = prog.solve(time_limit=time_limit_s, iteration_limit=node_limit, mip_gap=mip_gap)
        if res.x is None:
            raise RuntimeError(f"the placement program's tie-break ended {res.status}")
        val = res.values()
        solve_s = time.perf_counter() - started
    instances = {v["name"]: int(round(val[f"n{i}"])) for i, v in enumerate(checked)}
    capacity = [
        sum(q[a, i] * instances[checked[i]["name"]] for (b, i) in flows if b == a)
        for a in range(len(apps))
    ]
    served = {
        app.get("name", str(a)): {
            checked[i]["name"]: float(val[f"x{a}_{i}"])
            for (b, i) in flows
            if b == a and val[f"x{a}_{i}"] > 1e-9
        }
        for a, app in enumerate(apps)
    }
    return {
        "status": res.status,
        "instances": {k: c for k, c in instances.items() if c},
        "cost_per_s": sum(price[i] * instances[v["name"]] for i, v in enumerate(checked)),
        "unserved_qps": sum(float(val[f"u{a}"]) for a in range(len(apps))),
        # Capacity / load over the applications served in full (an instance's whole capacity
        # counted for each application it may serve).
        "min_headroom": min(
            (capacity[a] / need[a] for a in range(len(apps)) if need[a] > 1e-9), default=math.inf
        ),
        "served": served,
        "solve_s": solve_s,
    }


def greedy_placement(
    variants: Sequence[Mapping[str, Any]],
    apps: Sequence[Mapping[str, Any]],
    workers: Mapping[str, int],
    slack: float = 1.05,
    cost: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The Sec. 4.2.2 greedy on each application alone, its instances summed (module doc)."""
    _check(apps, workers, slack)
    checked = [v for v in check_variants(variants) if workers.get(v["hardware"], 0) > 0]
    price = {v["name"]: float((cost or {}).get(v["hardware"], v["cost_per_s"])) for v in checked}
    total: dict[str, int] = {}
    started = time.perf_counter()
    short = []
    for a, app in enumerate(apps):
        own = [dict(v, cost_per_s=price[v["name"]]) for v in checked if _serves(v, app)]
        if not own:
            short.append(app.get("name", str(a)))
            continue
        hardware = sorted({v["hardware"] for v in own})
        resources = {
            f"{hw} workers": ({v["name"]: 1.0 for v in own if v["hardware"] == hw}, workers[hw])
            for hw in hardware
        }
        problem = autoscaler.scaling_problem(
            own, load_qps=float(app["qps"]), slo_ms=float(app["slo_ms"]),
            slack_qps=float(app["qps"]) * (slack - 1.0), resources=resources,
        )  # fmt: skip
        # Q_v within the SLO, as the infaas policy's own problem (model_autoscaler.cpp) has it.
        store = _core.infaas.MetadataStore(own)
        problem["saturation_qps"] = [
            float(store.saturation_qps(i, float(app["slo_ms"]))) for i in range(len(own))
        ]
        plan = autoscaler.solve_greedy(problem)
        if not plan["feasible"]:
            short.append(app.get("name", str(a)))
            continue
        for name, k in autoscaler.configuration(problem, plan).items():
            total[name] = total.get(name, 0) + k
    used: dict[str, int] = {}
    for name, k in total.items():
        hw = next(v["hardware"] for v in checked if v["name"] == name)
        used[hw] = used.get(hw, 0) + k
    return {
        "instances": total,
        "cost_per_s": sum(price[name] * k for name, k in total.items()),
        "unplaced_apps": short,
        "workers_used": used,
        "fits": all(used.get(hw, 0) <= n for hw, n in workers.items()) and not short,
        "solve_s": time.perf_counter() - started,
    }


def compare_with_greedy(
    variants: Sequence[Mapping[str, Any]],
    apps: Sequence[Mapping[str, Any]],
    workers: Mapping[str, int],
    slack: float = 1.05,
    cost: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The exact program and the per-application greedy on the same input, with the greedy's
    cost gap (greedy cost / optimum - 1) and whether the greedy fits the workers."""
    exact = plan_placement(variants, apps, workers, slack, cost)
    greedy = greedy_placement(variants, apps, workers, slack, cost)
    gap = greedy["cost_per_s"] / exact["cost_per_s"] - 1.0 if exact["cost_per_s"] > 0 else math.nan
    return {"exact": exact, "greedy": greedy, "greedy_gap": gap}


def worker_groups(
    plan: Mapping[str, Any], variants: Sequence[Mapping[str, Any]], workers: Mapping[str, int]
) -> list[dict[str, Any]]:
    """A scenario's worker groups holding the plan's instances, one per worker; a worker the
    plan leaves free holds its hardware's planned variant with the highest saturation QPS (a
    scenario's worker starts with a model), or, when the plan puts none there, the first
    variant of that hardware."""
    checked = check_variants(variants)
    q = dict(zip((v["name"] for v in checked), _saturation(checked), strict=True))
    hardware_of = {v["name"]: v["hardware"] for v in checked}
    groups = []
    for hw, count in workers.items():
        if count <= 0:
            continue
        mine = sorted(
            ((name, k) for name, k in plan["instances"].items() if hardware_of[name] == hw),
            key=lambda item: (-q[item[0]], item[0]),
        )
        placed = 0
        for name, k in mine:
            k = min(k, count - placed)
            if k > 0:
                groups.append({"hardware": hw, "count": k, "models": [name]})
                placed += k
        if placed < count:
            spare = mine[0][0] if mine else next(v["name"] for v in checked if v["hardware"] == hw)
            groups.append({"hardware": hw, "count": count - placed, "models": [spare]})
    return groups
