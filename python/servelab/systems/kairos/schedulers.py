"""Kairos's query distributor and the baselines it is compared with, as registered schedulers.

The distributors are C++ schedulers in servelab's one registry (``servelab.list_schedulers()``),
so they run unchanged in the simulator and in the real serving loop::

    servelab.simulate(scenario, scheduler="kairos(variant='artifact')")
    servelab.make_scheduler("drs(threshold=300)")

This module holds what the Python side needs to know about them: their registered names, the
configurations they serve, the base type they pick and where DRS draws its size line by default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ... import _core
from .data import load_profile
from .paper import qos_target

#: name -> what it is (the registry's doc has the details)
SCHEDULERS = {
    "kairos": "Kairos's distributor: min-cost matching of pending queries to instances",
    "ribbon": "Ribbon: FCFS from a central queue, preferring an idle base-type instance",
    "drs": "DRS: queries above a size threshold to the base type, the others to the auxiliary",
    "clockwork": "Clockwork: per-instance FCFS queues, each query where it would finish first",
    "oracle": "ORCL's rule: idle base instances take the largest query, auxiliary the smallest",
}
#: The distributors compared in the paper, by their registered names.
DISTRIBUTORS = tuple(SCHEDULERS)


def check_config(profile: _core.Profile, config: Mapping[str, int], model: str) -> dict[str, int]:
    """``config`` ({instance_type: count}) checked against the profile, zero counts left out."""
    if not isinstance(config, Mapping) or not config:
        raise ValueError(f"config={config!r} must be a non-empty {{instance_type: count}} dict")
    out = {}
    for hw, n in config.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"config[{hw!r}]={n!r} must be an integer >= 0")
        if hw not in profile.hardware:
            raise KeyError(
                f"config: instance type {hw!r} is not in the profile "
                f"({', '.join(profile.hardware)})"
            )
        if n > 0:
            if not profile.has_latency(hw, model):
                raise KeyError(f"config: the profile has no latency of model {model!r} on {hw!r}")
            out[str(hw)] = int(n)
    if not out:
        raise ValueError(f"config={dict(config)!r} has no instance (every count is 0)")
    return out


def distributor_factory(distributor: Any) -> Callable[[], Any]:
    """A zero-argument callable giving what each run's scenario takes as its scheduler: the spec
    itself ("kairos", "drs(threshold=300)", a dict: the scenario builds a fresh scheduler per run)
    or the user's own factory of fresh Scheduler instances. A Scheduler instance is refused: it
    keeps state between runs."""
    if callable(distributor) and not isinstance(distributor, (str, _core.Scheduler)):
        return distributor
    if isinstance(distributor, (str, Mapping)):
        return lambda: distributor
    raise ValueError(
        f"distributor={distributor!r} must be a scheduler spec such as 'kairos' or a callable "
        "returning a fresh Scheduler (a Scheduler instance keeps state between runs)"
    )


def base_type(
    profile: Any, config: Mapping[str, int], *, model: str = "rm2", statistic: str = "mean"
) -> str:
    """The base type of a configuration: the type with the lowest latency on the largest query
    size every type present covers (as the schedulers' ClusterRoles decide)."""
    prof = load_profile(profile, model)
    present = list(check_config(prof, config, model))
    largest = min(prof.max_batch(hw, model) for hw in present)
    return min(
        present,
        key=lambda hw: (prof.latency(hw, model, largest, statistic), prof.hardware_index(hw)),
    )


def default_drs_threshold(
    profile: Any,
    config: Mapping[str, int],
    *,
    model: str = "rm2",
    qos_ms: float | None = None,
    step: int = 10,
) -> int:
    """The largest multiple of ``step`` that every auxiliary type present serves within QoS (by
    the mean latency): where drs(threshold=-1) draws the line, and the hill climb starts."""
    prof = load_profile(profile, model)
    config = check_config(prof, config, model)
    qos = qos_target(model, qos_ms)
    base = base_type(prof, config, model=model)
    limit = max(prof.max_batch(hw, model) for hw in config)
    best = 0
    for size in range(step, limit + 1, step):
        aux = [hw for hw in config if hw != base]
        if aux and all(
            size <= prof.max_batch(hw, model) and 1e3 * prof.latency(hw, model, size, "mean") <= qos
            for hw in aux
        ):
            best = size
    return best
