"""Allowable throughput of a configuration under a query distributor: Kairos's evaluation metric.

"The maximum throughput the allocated instances can serve without causing QoS violation"
(Kairos, HPDC'23, Sec. 3): the largest Poisson arrival rate at which the p99 latency of the
artifact's workload stays within the QoS target, found by :func:`servelab.allowable_throughput`
on :func:`servelab.simulate` runs::

    from servelab import kairos

    found = kairos.evaluate("../shared/data/kairos", {"g4dn.xlarge": 2, "r5n.large": 9}, "kairos")
    found.rate                      # queries per second
    kairos.evaluate(profile, config, "drs(threshold=300)", qos_ms=350, model="rm2", queries=5000)

The workload is the artifact's: inter-arrival gaps of whole milliseconds drawn from a Poisson
distribution (``poisson_integer_ms``), query sizes from its mix rounded up to multiples of 10
(``kairos_mix``), a deadline of ``qos_ms`` after arrival. An artifact folder is imported with its
largest sample dropped, so that the decision statistic "mean" is the artifact's estimate (the mean
without the largest sample) and service times are drawn uniformly from the remaining samples, as
its emulated servers do.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core, profiles
from ...experiments import AllowableThroughput, QoS, allowable_throughput
from ...results import Result
from ...run import simulate
from ...scenario import resolve_profile
from ...workload import make_size_distribution
from .artifact import QOS_MS

#: The distributors compared in the paper, by their registered names.
DISTRIBUTORS = ("kairos", "ribbon", "drs", "clockwork", "oracle")

PathLike = str | os.PathLike[str]


@functools.lru_cache(maxsize=16)
def _artifact_profile(folder: str, model: str) -> _core.Profile:
    return profiles.import_kairos(folder, drop_max=True, models=[model])


def load_profile(source: Any, model: str) -> _core.Profile:
    """A Profile from a Profile, a Kairos artifact folder (imported for ``model`` with the largest
    sample of each list dropped, cached) or anything a scenario accepts (a profile JSON path,
    'example:<name>', a dict)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            if not ((path / "data").is_dir() or path.name == "data"):
                raise FileNotFoundError(f"{path} is a folder but not a Kairos artifact (no data/)")
            return _artifact_profile(str(path.resolve()), model)
    return resolve_profile(source)


def _check_config(profile: _core.Profile, config: Mapping[str, int], model: str) -> dict[str, int]:
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


def _qos(model: str, qos_ms: float | None) -> float:
    if qos_ms is None:
        if model not in QOS_MS:
            raise ValueError(f"qos_ms=None: give the QoS target (ms) of model {model!r}")
        return QOS_MS[model]
    if (
        isinstance(qos_ms, bool)
        or not isinstance(qos_ms, (int, float))
        or not (math.isfinite(qos_ms) and qos_ms > 0)
    ):
        raise ValueError(f"qos_ms={qos_ms!r} must be a positive number of ms")
    return float(qos_ms)


def scenario(
    profile: Any,
    config: Mapping[str, int],
    distributor: Any,
    rate: float,
    *,
    qos_ms: float | None = None,
    model: str = "rm2",
    queries: int = 20000,
    sizes: str = "kairos_mix",
    arrivals: str = "poisson_integer_ms",
    seed: int = 0,
) -> dict[str, Any]:
    """The scenario of one evaluation run: ``config`` serving ``model`` under ``distributor``
    (a registered scheduler spec, e.g. "kairos(variant='artifact')", or a Scheduler instance)
    at ``rate`` queries per second."""
    prof = load_profile(profile, model)
    qos = _qos(model, qos_ms)
    workers = [
        {"hardware": hw, "count": n, "models": [model]}
        for hw, n in _check_config(prof, config, model).items()
    ]
    if isinstance(queries, bool) or not isinstance(queries, int) or queries < 1:
        raise ValueError(f"queries={queries!r} must be an integer >= 1")
    return {
        "profile": prof,
        "workers": workers,
        "workload": {
            "arrivals": f"{arrivals}(rate={float(rate)!r})",
            "count": queries,
            "apps": [{"name": model, "slo_ms": qos, "sizes": sizes}],
        },
        "scheduler": distributor,
        "seed": seed,
        "decision_statistic": "mean",
        "service": "sample",
    }


def capacity_estimate(
    profile: Any,
    config: Mapping[str, int],
    *,
    model: str = "rm2",
    sizes: str = "kairos_mix",
    seed: int = 0,
) -> float:
    """A rough service capacity (QPS) to start the rate search from: every instance busy serving
    the size mix at its mean latency (sizes beyond a type's profile left to the others)."""
    prof = load_profile(profile, model)
    config = _check_config(prof, config, model)
    drawn = make_size_distribution(sizes).generate(seed=seed, count=2000)
    total = 0.0
    for hw, n in config.items():
        fit = drawn[drawn <= prof.max_batch(hw, model)]
        if fit.size:
            total += n / float(np.mean(prof.latency(hw, model, fit.tolist(), "mean")))
    return total


def evaluate(
    profile: Any,
    config: Mapping[str, int],
    distributor: Any = "kairos",
    *,
    qos_ms: float | None = None,
    model: str = "rm2",
    queries: int = 20000,
    seed: int = 0,
    seeds: Sequence[int] | None = None,
    percentile: float = 99.0,
    rel_tol: float = 0.01,
    low: float | None = None,
    high: float | None = None,
    sizes: str = "kairos_mix",
    arrivals: str = "poisson_integer_ms",
) -> AllowableThroughput:
    """The allowable throughput of ``config`` ({instance_type: count}) under ``distributor``.

    profile: a Kairos artifact folder, a Profile or a profile file. distributor: a registered
    scheduler spec ("kairos", "ribbon", "drs(threshold=300)", "clockwork", "oracle", ...) or a
    zero-argument callable returning a fresh Scheduler (a scheduler keeps per-run state).
    qos_ms: the p``percentile`` target, default the paper's Table 3 for ``model`` (rm2: 350 ms).
    queries: per run; a rate passes when the QoS holds on every seed of ``seeds`` (default
    ``(seed,)``). The search doubles from ``low`` (default a quarter of
    :func:`capacity_estimate`) until a rate fails, then bisects to ``rel_tol``; when even ``low``
    fails it retries from lower rates before answering infeasible (rate 0).

    Returns the :class:`~servelab.experiments.AllowableThroughput` (``.rate`` in QPS, every rate
    tried in ``.evaluations``).
    """
    prof = load_profile(profile, model)
    qos = _qos(model, qos_ms)
    config = _check_config(prof, config, model)
    make: Callable[[], Any]
    if callable(distributor) and not isinstance(distributor, (str, _core.Scheduler)):
        make = distributor
    elif isinstance(distributor, (str, Mapping)):
        make = lambda: distributor  # noqa: E731 (a spec: the scenario builds a fresh scheduler per run)
    else:
        raise ValueError(
            f"distributor={distributor!r} must be a scheduler spec such as 'kairos' or a callable "
            "returning a fresh Scheduler (a Scheduler instance keeps state between runs)"
        )

    def run(rate: float, run_seed: int) -> Result:
        return simulate(
            scenario(
                prof,
                config,
                make(),
                rate,
                qos_ms=qos,
                model=model,
                queries=queries,
                sizes=sizes,
                arrivals=arrivals,
                seed=run_seed,
            )
        )

    target = QoS(percentile=percentile, target_ms=qos)
    run_seeds = tuple(seeds) if seeds is not None else (seed,)
    start = (
        low
        if low is not None
        else max(capacity_estimate(prof, config, model=model, sizes=sizes) / 4, 0.1)
    )
    found = allowable_throughput(
        run, target, low=start, high=high, seeds=run_seeds, rel_tol=rel_tol
    )
    tries = 0
    while not found.feasible and low is None and tries < 4 and start > 0.1:
        start = max(start / 8, 0.1)
        tries += 1
        again = allowable_throughput(
            run, target, low=start, high=found.bracket[1], seeds=run_seeds, rel_tol=rel_tol
        )
        again.evaluations[:0] = found.evaluations
        found = again
    return found
