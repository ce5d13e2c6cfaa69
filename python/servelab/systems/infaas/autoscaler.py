"""The Model-Autoscaler's decision (Sec. 4.2): the integer program of Sec. 4.2.1 solved exactly
(servelab's LP/MILP adapter, CBC, in ``servelab._lp``) and the greedy heuristic of Sec. 4.2.2
(C++, in ``servelab._core``), on the same problem::

    from servelab.infaas import autoscaler, catalogue

    problem = autoscaler.scaling_problem(catalogue.table2_variants(), load_qps=1000, slo_ms=300)
    exact = autoscaler.solve_exact(problem)     # {"instances": [0, 2, 1], ...}: 22 $/s
    greedy = autoscaler.solve_greedy(problem)   # {"instances": [0, 10, 0], ...}

A plan's ``delta`` is the scaling action per variant (> 0 load, < 0 unload), ``instances`` the
instances after it, ``objective`` the ILP's objective, ``running_cost_per_s`` the configuration's
cost (Table 3's last column).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ... import _core
from ...backends import require
from .catalogue import check_variants


def _number(name: str, value: Any, minimum: float = 0.0, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} is not a finite number")
    if value < minimum or (strict and value == minimum):
        raise ValueError(f"{name}={value!r} must be {'>' if strict else '>='} {minimum}")
    return float(value)


def scaling_problem(
    variants: Iterable[dict[str, Any]],
    load_qps: float,
    slo_ms: float,
    running: Mapping[str, int] | None = None,
    slack_qps: float = 0.0,
    lam: float = 0.0,
    resources: Mapping[str, tuple[Mapping[str, float], float]] | None = None,
) -> dict[str, Any]:
    """The problem of Sec. 4.2.1 for these variants.

    running: instances already loaded, by variant name (N). slack_qps: headroom added to the load.
    lam: lambda, the weight (1/s) of load time in the objective. resources: per resource type,
    ({variant name: amount per instance}, total available), constraint (3).
    """
    checked = check_variants(variants)
    names = [v["name"] for v in checked]
    running = dict(running or {})
    unknown = set(running) - set(names)
    if unknown:
        raise KeyError(f"running names unknown variants {sorted(unknown)}")
    for name, n in running.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"running[{name!r}]={n!r} must be an integer >= 0")
    archs: dict[str, int] = {}
    types, requirement, capacity = [], [], []
    for rtype, (per_variant, total) in (resources or {}).items():
        bad = set(per_variant) - set(names)
        if bad:
            raise KeyError(f"resources[{rtype!r}] names unknown variants {sorted(bad)}")
        types.append(str(rtype))
        requirement.append([float(per_variant.get(n, 0.0)) for n in names])
        capacity.append(_number(f"resources[{rtype!r}] total", total))
    store = _core.infaas.MetadataStore(checked)  # validates; Q_v as the C++ side defines it
    sat = [float(store.variant(i)["saturation_qps"]) for i in range(len(checked))]
    return {
        "names": names,
        "architecture": [archs.setdefault(v["architecture"], len(archs)) for v in checked],
        "saturation_qps": sat,
        "cost_per_s": [float(v["cost_per_s"]) for v in checked],
        "load_s": [float(v.get("load_s", 0.0)) for v in checked],
        # The ILP's T_inf: the batch-1 latency (a query of one item; Table 2's "Lat.").
        "latency_ms": [float(v["latency_ms"][0]) for v in checked],
        "running": [int(running.get(n, 0)) for n in names],
        "resource_types": types,
        "requirement": requirement,
        "capacity": capacity,
        "load_qps": _number("load_qps", load_qps),
        "slack_qps": _number("slack_qps", slack_qps),
        "slo_ms": _number("slo_ms", slo_ms, strict=True),
        "lambda": _number("lam", lam),
    }


def solve_exact(problem: dict[str, Any], time_limit_s: float = math.inf) -> dict[str, Any]:
    """Sec. 4.2.1's ILP solved to optimality with CBC; BackendUnavailable (a RuntimeError)
    saying why when servelab was built without the LP backend."""
    lp = require("lp")
    return dict(lp.infaas.solve_scaling_ilp(problem, time_limit_s))


def solve_greedy(problem: dict[str, Any]) -> dict[str, Any]:
    """Sec. 4.2.2's greedy heuristic (replicate vs upgrade, remove vs downgrade)."""
    return dict(_core.infaas.greedy_scaling(problem))


def configuration(problem: dict[str, Any], plan: dict[str, Any]) -> dict[str, int]:
    """{variant name: instances} of a plan, zero counts left out."""
    return {n: int(k) for n, k in zip(problem["names"], plan["instances"], strict=True) if k}


def cost_gap(exact: dict[str, Any], greedy: dict[str, Any]) -> float:
    """greedy cost / exact cost - 1 (0: the greedy found an optimum); the running costs."""
    if exact["running_cost_per_s"] <= 0:
        return 0.0 if greedy["running_cost_per_s"] <= 0 else math.inf
    return greedy["running_cost_per_s"] / exact["running_cost_per_s"] - 1.0
