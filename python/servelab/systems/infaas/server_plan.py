"""How a :class:`ModelRegistry` becomes one serving session of the ``infaas`` policy.

- **Profile**: the registry's profile, each variant under two names: ``<app>@<variant>`` (the
  variants an ``app=`` query may use) and ``@<model>@<variant>`` (a ``model=`` query's). The
  policy gives each variant one task, so a variant cannot be a candidate of both an application
  and one of its models; the two names make them separate instances (the executor shares the
  loaded weights). Registered names hold no ``@``, so neither prefix matches another's.
- **Applications**, by index: per registry app ``<app>`` (online) and ``<app>@offline``; per model
  ``@<model>`` and ``@<model>@offline``. ``app_models`` gives an application and its offline twin
  the same prefix, so they share their variants (one task); ``offline_apps`` lists the twins.
- **Workers**: one group per run of equal hardware, in the order given (worker ids follow it).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ... import profiles
from .registry import ModelRegistry

#: A query without a latency goal gets this SLO (one hour): every variant meets it.
NO_GOAL_MS = 3_600_000.0


@dataclass
class SessionPlan:
    """The session's scenario pieces and the names that map it back to the registry."""

    profile: Any
    apps: list[str]
    app_models: list[str]
    offline_apps: list[int]
    workers: list[dict[str, Any]]
    variant_of: dict[str, str] = field(default_factory=dict)  # profile model -> variant name

    def scenario(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "workers": self.workers,
            "workload": {
                "arrivals": "poisson(rate=1)",  # a session's arrivals are its submissions
                "count": 1,
                "apps": [{"name": a, "slo_ms": NO_GOAL_MS} for a in self.apps],
            },
        }


def online_app(app: str | None, model: str | None) -> str:
    """The session application of an ``app=`` or ``model=`` query."""
    return app if app is not None else f"@{model}"


def offline_app(app: str | None, model: str | None) -> str:
    return f"{online_app(app, model)}@offline"


def _groups(hardware: list[str]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = []
    for hw in hardware:
        if groups and groups[-1]["hardware"] == hw:
            groups[-1]["count"] += 1
        else:
            groups.append({"hardware": hw, "count": 1})
    return groups


def plan(registry: ModelRegistry, hardware: list[str]) -> SessionPlan:
    """The session for ``registry`` on workers of ``hardware`` (one entry per worker)."""
    wanted = set(hardware)
    variants = [v for v in registry.variants() if v["hardware"] in wanted]
    source = profiles.to_dict(registry.profile())
    prof = {k: v for k, v in source.items() if k not in ("models", "latency")}
    prof["models"], prof["latency"] = {}, []
    for key in ("load_time_s", "memory_mb"):
        if key in source:
            prof[key] = {hw: {} for hw in source[key]}
    latency: dict[str, list[dict[str, Any]]] = {}
    for entry in source["latency"]:
        latency.setdefault(entry["model"], []).append(entry)
    variant_of: dict[str, str] = {}
    models = registry.models
    for v in variants:
        name, hw = v["name"], v["hardware"]
        for alias in (f"{models[v['model']]['app']}@{name}", f"@{v['model']}@{name}"):
            variant_of[alias] = name
            prof["models"][alias] = copy.deepcopy(source["models"][name])
            prof["latency"] += [dict(e, model=alias) for e in latency[name]]
            for key in ("load_time_s", "memory_mb"):
                if name in source.get(key, {}).get(hw, {}):
                    prof[key][hw][alias] = source[key][hw][name]
    apps, app_models, offline = [], [], []
    served = sorted({models[v["model"]]["app"] for v in variants})
    for app in served:
        apps += [online_app(app, None), offline_app(app, None)]
        app_models += [f"{app}@*"] * 2
    for model in sorted({v["model"] for v in variants}):
        apps += [online_app(None, model), offline_app(None, model)]
        app_models += [f"@{model}@*"] * 2
    offline = [i for i, a in enumerate(apps) if a.endswith("@offline")]
    return SessionPlan(
        profile=profiles.from_dict(prof, where="the server's profile"),
        apps=apps,
        app_models=app_models,
        offline_apps=offline,
        workers=_groups(hardware),
        variant_of=variant_of,
    )
