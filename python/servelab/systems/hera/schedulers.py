"""Spec builders for Hera's registered schedulers (``servelab.list_schedulers()`` documents every
parameter)::

    servelab.simulate(scenario, scheduler=hera.manager_spec("hera_rmu", "ncf", "dlrm_d", cores=16))
"""

from __future__ import annotations

#: name -> what it is (the registry's doc has the details)
SCHEDULERS = {
    "hera_rmu": "Hera's node resource manager (Algorithm 3): workers and LLC ways per model",
    "parties": "the PARTIES-style feedback manager, Hera's baseline",
}
MANAGERS = tuple(SCHEDULERS)


def manager_spec(manager: str, a: str, b: str, *, cores: int, monitor_s: float) -> str:
    """The spec of ``manager`` ('hera_rmu' or 'parties') managing the pair of models ``a`` and
    ``b`` on a node of ``cores`` cores, deciding every ``monitor_s`` seconds."""
    if manager not in SCHEDULERS:
        raise KeyError(f"manager {manager!r} is unknown; known: {', '.join(SCHEDULERS)}")
    return f"{manager}(models='{a},{b}', cores={int(cores)}, monitor_s={float(monitor_s)!r})"
