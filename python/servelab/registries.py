"""Every registry of servelab in one listing: what can be named in a scenario or a spec string
(schedulers, executors, arrival processes, size distributions, config, loop and interference
models, search methods) and the implementations optional modules add (RRL's estimator backends,
INFaaS's scaling solvers, the recommendation-model backends), each with where it came from::

    servelab.registries()["schedulers"]  # [{"name": "fcfs", "doc": ..., "params": [...]}, ...]
    servelab.registries()["scaling_solvers"]  # [{"name": "greedy", "origin": "servelab._core"}]

``servelab registries`` prints the same. Listing loads the backends that are usable here (their
modules add their entries as they load), as ``servelab.list_executors()`` does.
"""

from __future__ import annotations

from typing import Any

from . import _core

# The registries of named, parameterised things, by the name the listing gives them.
_SPEC_REGISTRIES = {
    "arrival_processes": "list_arrival_processes",
    "size_distributions": "list_size_distributions",
    "config_models": "list_config_models",
    "loop_models": "list_loop_models",
    "interference_models": "list_interference_models",
}


def _origins(table: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "origin": origin} for name, origin in sorted(table.items())]


def registries() -> dict[str, list[dict[str, Any]]]:
    """Every registry, by name: a list of entries (name plus doc and typed params for the spec
    registries, name plus origin module for the plugin tables)."""
    from .executors import list_executors  # loads the usable backends, which add theirs
    from .schedulers import list_schedulers

    out: dict[str, list[dict[str, Any]]] = {
        "schedulers": list_schedulers(),
        "executors": list_executors(),
    }
    for name, function in _SPEC_REGISTRIES.items():
        out[name] = list(getattr(_core, function)())
    out["search_methods"] = list(_core.solvers.list_search_methods())
    out["estimator_backends"] = _origins(_core.rrl.estimator_backends())
    out["scaling_solvers"] = _origins(_core.infaas.scaling_solvers())
    out["recsys_backends"] = _origins(_core.recsys.loaded_backends())
    return out
