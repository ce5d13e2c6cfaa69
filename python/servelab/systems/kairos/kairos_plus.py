"""Kairos+ (Algorithm 1) and the search methods it is compared with, over Kairos's space.

Every method evaluates configurations one at a time with ``objective`` (typically the allowable
throughput of a configuration, servelab.kairos.evaluate_config, or a lookup of measured values) and
prunes the sub-configurations of what it evaluated (fewer instances never serve more). Kairos+
visits configurations in descending upper-bound order and also prunes every configuration whose
bound does not exceed the best value found; it stops when the next bound is no better.

Sub-configuration pruning is correct only for a distributor under which removing an instance never
raises the throughput. First-come-first-served distributors break that (Ribbon, DRS: an extra slow
instance takes queries it serves beyond QoS), so a search over their throughput can prune its own
optimum. ``monotone_pruning=False`` turns that pruning off; :func:`monotone_pruning_for` gives the
default of a distributor (see :data:`MONOTONE_DISTRIBUTORS`). Bound pruning stays correct as long
as the bound is above the objective::

    result = kairos.search(frame, objective=lambda c: throughput[c], method="kairos+")
    result.best_value, result.evaluations, result.share, result.best_index
    kairos.named_config(frame, result.best_config)   # {type: count}
    kairos.search_trace(result, frame)               # each evaluation with its bound and rank

The result is servelab's one :class:`~servelab.solvers.SearchResult` (configurations as counts
tuples in the order of the frame's types); ``best_index`` is the evaluation that found the best
configuration and ``share`` the evaluations as a share of the space.

The competitors (``random``, ``genetic``, ``bo`` (Ribbon's Bayesian optimisation), ``annealing``,
``hill_climbing``, ``exhaustive``) come from the generic searches of servelab's solvers; as in the
paper they get sub-configuration pruning, and bound pruning too with ``bound_pruning=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._core import kairos as _k
from ...solvers.search import SearchResult
from .bounds import Source, table_of, upper_bounds

#: Whether a search over a distributor's throughput prunes sub-configurations by default. Ribbon
#: and DRS serve first come, first served: an extra slow instance takes queries it serves beyond
#: QoS, so fewer instances can serve much more. Measured on rm2 and dien at 2,000 queries, of the
#: space's (configuration, one more instance) pairs, 152-156 serve more with fewer instances
#: under Ribbon (up to 1.9x), 86-133 under DRS at its default threshold (49-89 with it
#: hill-climbed, 1,000 queries); dien's Ribbon optimum, the 4-GPU pool, is never reached with the
#: pruning. Kairos and CLKWRK keep the paper's Kairos+ pruning: they are not strictly monotone
#: either (4-92 pairs, up to 14%, nearly all adding a t3.xlarge) but the pruning did not skip
#: their optimum, which ranks near the top of the bound order. ORCL is offline.
MONOTONE_DISTRIBUTORS: dict[str, bool] = {
    "kairos": True,
    "clockwork": True,
    "oracle": True,
    "ribbon": False,
    "drs": False,
}


def monotone_pruning_for(distributor: str) -> bool:
    """Whether a search over ``distributor``'s throughput (a registered spec such as
    "drs(threshold=300)") may prune sub-configurations: :data:`MONOTONE_DISTRIBUTORS` by the
    spec's name; False for any other (no pruning is always correct, only slower)."""
    name = str(distributor).split("(", 1)[0].strip()
    return MONOTONE_DISTRIBUTORS.get(name, False)


#: Accepted method names -> the registered search method.
METHODS: dict[str, str] = {
    "kairos+": "kairos_plus",
    "kairos_plus": "kairos_plus",
    "random": "random",
    "genetic": "genetic",
    "bo": "bayesian",
    "bayesian": "bayesian",
    "annealing": "annealing",
    "hill_climbing": "hill_climbing",
    "exhaustive": "exhaustive",
}

Objective = Callable[[dict[str, int]], float] | Mapping[Any, float]


def _objective(objective: Objective, types: Sequence[str]) -> Callable[[tuple[int, ...]], float]:
    """C++ calls with a counts tuple; users get {type: count}, or a lookup by tuple or dict."""
    if isinstance(objective, Mapping):

        def lookup(counts: tuple[int, ...]) -> float:
            if counts in objective:
                return float(objective[counts])
            named = tuple(sorted(zip(types, counts, strict=True)))
            for key, value in objective.items():
                if isinstance(key, Mapping) and tuple(sorted(key.items())) == named:
                    return float(value)
            raise KeyError(
                f"objective has no value for configuration {counts} ({', '.join(types)})"
            )

        return lookup
    if not callable(objective):
        raise ValueError(f"objective={objective!r} is neither a callable nor a mapping of values")

    def call(counts: tuple[int, ...]) -> float:
        return objective(dict(zip(types, counts, strict=True)))

    return call


def search(
    source: Source,
    model: str | None = None,
    *,
    objective: Objective,
    method: str = "kairos+",
    seed: int = 0,
    max_evaluations: int = 0,
    stop_at: float | None = None,
    bound_pruning: bool = False,
    monotone_pruning: bool = True,
    params: Mapping[str, Any] | None = None,
    **bound_args: Any,
) -> SearchResult:
    """Searches the configurations under the budget for the highest ``objective``.

    source: an upper_bounds frame (its ``bound`` column guides Kairos+; replace it to try another
    bound), or the arguments of upper_bounds (``model``, ``space``, ``budget``, ``qos_ms``, ...).
    objective: called with ``{type: count}`` (base type first), or a mapping from counts tuples.
    method: ``kairos+``, ``random``, ``genetic``, ``bo``, ``annealing``, ``hill_climbing`` or
    ``exhaustive``; ``params``: the method's own parameters (e.g. ``{"xi": 0.1}`` for ``bo``).
    max_evaluations: 0 for no limit; stop_at: stop once a value this high is found.
    bound_pruning: give the competitors Kairos+'s bound pruning too (Kairos+ always has it).
    monotone_pruning: prune the sub-configurations of every evaluated configuration (default);
    False for an objective that removing an instance can raise (:func:`monotone_pruning_for`).
    Same seed, same result. An empty space raises ValueError ("no feasible configuration").
    """
    if method not in METHODS:
        raise KeyError(f"method {method!r} is not one of {', '.join(METHODS)}")
    frame = (
        source if isinstance(source, pd.DataFrame) else upper_bounds(source, model, **bound_args)
    )
    table = table_of(frame)
    types = list(table.space.types)
    return _k.search(
        table,
        _objective(objective, types),
        METHODS[method],
        seed=seed,
        max_evaluations=max_evaluations,
        stop_at=stop_at,
        bound_pruning=bound_pruning,
        monotone_pruning=monotone_pruning,
        **dict(params or {}),
    )


def non_monotone_pairs(
    values: Mapping[tuple[int, ...], float], *, rel_tol: float = 0.0
) -> list[tuple[tuple[int, ...], tuple[int, ...], float, float]]:
    """Where removing one instance raised the objective: every (smaller, larger, value of smaller,
    value of larger) with ``larger`` = ``smaller`` plus one instance of one type, both measured in
    ``values`` (counts tuple -> value), and value(smaller) > value(larger) x (1 + rel_tol).
    Empty for an objective that sub-configuration pruning may assume monotone; ``rel_tol`` leaves
    out differences within the measurement's noise (e.g. the rate search's tolerance)."""
    if not rel_tol >= 0:
        raise ValueError(f"rel_tol={rel_tol!r} must be >= 0")
    out = []
    for small, v_small in values.items():
        for d in range(len(small)):
            large = small[:d] + (small[d] + 1,) + small[d + 1 :]
            v_large = values.get(large)
            if v_large is not None and v_small > v_large * (1 + rel_tol):
                out.append((small, large, float(v_small), float(v_large)))
    return out


def search_trace(result: SearchResult, frame: pd.DataFrame) -> pd.DataFrame:
    """A search's evaluations on ``frame`` (the upper_bounds frame it searched), in order: indexed
    by ``evaluation`` (1-based), a count column per type, ``value``, ``best_so_far``, ``cost``
    ($/h), and each configuration's ``bound`` and ``rank`` in the frame (1 = highest bound; ranks
    follow the frame's ``bound`` column, replaced or not)."""
    table = table_of(frame)
    types = list(table.space.types)
    configs = np.asarray(result.trace_configs, dtype=np.int64).reshape(-1, len(types))
    position = {tuple(row): k for k, row in enumerate(table.counts.tolist())}
    rows = [position[tuple(row)] for row in configs.tolist()]
    values = np.asarray(result.trace_values, dtype=np.float64)
    trace = pd.DataFrame(configs, columns=types)
    trace.insert(0, "evaluation", np.arange(1, len(trace) + 1, dtype=np.int64))
    trace["value"] = values
    trace["best_so_far"] = np.fmax.accumulate(values) if len(values) else values
    trace["cost"] = np.asarray(result.trace_costs, dtype=np.float64)
    trace["bound"] = np.asarray(table.bound, dtype=np.float64)[rows]
    trace["rank"] = np.asarray(table.rank, dtype=np.int64)[rows]
    return trace.set_index("evaluation")


def compare_searches(
    source: Source,
    model: str | None = None,
    *,
    objective: Objective,
    methods: Sequence[str] = ("kairos+", "random", "genetic", "bo", "annealing", "hill_climbing"),
    seeds: Sequence[int] = (0,),
    optimum: float | None = None,
    bound_pruning: bool = False,
    monotone_pruning: bool = True,
    **bound_args: Any,
) -> pd.DataFrame:
    """Methods side by side: evaluations to reach the optimum, per method and seed.

    optimum: the best value of the space (default: found by exhaustive search). Objective values
    are cached across methods, so each configuration is evaluated once. ``monotone_pruning`` as
    in :func:`search`.
    """
    frame = (
        source if isinstance(source, pd.DataFrame) else upper_bounds(source, model, **bound_args)
    )
    types = list(frame.attrs["types"])
    cache: dict[tuple[int, ...], float] = {}
    user = _objective(objective, types)

    def cached(config: dict[str, int]) -> float:
        key = tuple(config[t] for t in types)
        if key not in cache:
            cache[key] = user(key)
        return cache[key]

    if optimum is None:
        optimum = search(frame, objective=cached, method="exhaustive").best_value
    rows = []
    for method in methods:
        for seed in seeds if method not in ("kairos+", "kairos_plus", "exhaustive") else seeds[:1]:
            r = search(
                frame, objective=cached, method=method, seed=seed, bound_pruning=bound_pruning,
                monotone_pruning=monotone_pruning,
            )  # fmt: skip
            to_opt = r.evaluations_to_reach(optimum, tolerance=1e-9 * max(1.0, abs(optimum)))
            rows.append(
                {
                    "method": method,
                    "seed": seed,
                    "evaluations": r.evaluations,
                    "evaluations_to_optimum": to_opt if to_opt else None,
                    "share_to_optimum": to_opt / r.space_points if to_opt else None,
                    "best_value": r.best_value,
                    "reached_optimum": bool(to_opt),
                    "space_points": r.space_points,
                }
            )
    out = pd.DataFrame(rows)
    out.attrs["optimum"] = optimum
    return out
