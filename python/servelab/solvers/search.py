"""Search over integer configuration spaces (instance counts per type) with pruning.

Two problem forms, one set of methods (``list_search_methods()``):

* :func:`maximize` (Kairos): the largest value (e.g. allowable throughput) among the configs
  under a budget. The value is assumed non-decreasing in every count, so each evaluation prunes
  its sub-configurations; with ``upper_bound`` (Kairos's per-config QPS bound), configs whose bound
  does not exceed the best value found are pruned too. ``method="kairos_plus"`` is Kairos+
  (Algorithm 1): descending-bound order.
* :func:`minimize_cost` (Ribbon): the cheapest config whose objective (e.g. % of queries meeting
  QoS) reaches ``target``. A config meeting it prunes every more expensive config; one missing it
  prunes every config it dominates.

The search loop runs in C++ with the GIL released; ``objective`` is called (with the GIL) once per
distinct config as ``objective((n1, n2, ...))``, never on a pruned config. An exception it raises
(KeyboardInterrupt included) ends the search and propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core import solvers as _solvers

SearchResult = _solvers.SearchResult
list_search_methods = _solvers.list_search_methods

Config = tuple[int, ...]

__all__ = [
    "SearchResult",
    "SearchSpace",
    "list_search_methods",
    "maximize",
    "minimize_cost",
    "trace_frame",
]


class SearchSpace(_solvers._SearchSpace):
    """A box of integer counts ``lower[d] <= n_d <= upper[d]`` with a price per unit.

    ``unit_cost`` ($/h per unit, default 0), optional ``budget`` (total $/h), ``at_least``
    (``{name or index: count}``, e.g. ``{"g4dn.xlarge": 1}`` for at least one GPU) and
    ``min_total`` (``1`` excludes the empty config). Bad bounds, costs or a budget below the
    cheapest config raise ValueError naming the field and value.
    """

    def __init__(
        self,
        upper: Sequence[int],
        *,
        lower: Sequence[int] | None = None,
        unit_cost: Sequence[float] | None = None,
        names: Sequence[str] | None = None,
        budget: float | None = None,
        at_least: Mapping[str | int, int] | None = None,
        min_total: int = 0,
    ) -> None:
        upper = [int(u) for u in upper]
        n = len(upper)
        names = [f"x{d}" for d in range(n)] if names is None else [str(x) for x in names]
        lower = [0] * n if lower is None else [int(v) for v in lower]
        unit_cost = [0.0] * n if unit_cost is None else [float(c) for c in unit_cost]
        minimums = []
        for key, count in (at_least or {}).items():
            if isinstance(key, str):
                if key not in names:
                    raise KeyError(
                        f"at_least names {key!r}, which is not a dimension; dimensions: {names}"
                    )
                index = names.index(key)
            else:
                index = int(key)
                if not 0 <= index < n:
                    raise ValueError(f"at_least key {key!r} is not a dimension index in [0, {n})")
            minimums.append((index, int(count)))
        super().__init__(names, lower, upper, unit_cost, budget, minimums, int(min_total))

    def __repr__(self) -> str:
        dims = ", ".join(
            f"{n}=[{lo}, {hi}] @ {c:g}"
            for n, lo, hi, c in zip(self.names, self.lower, self.upper, self.unit_cost, strict=True)
        )
        return (
            f"SearchSpace({dims}, budget={self.budget}, at_least={self.at_least}, "
            f"min_total={self.min_total})"
        )


def _as_callable(
    bound: Callable[[Config], float] | Mapping[Config, float],
) -> Callable[[Config], float]:
    if callable(bound):
        return bound
    if isinstance(bound, Mapping):
        table = {tuple(int(v) for v in key): float(value) for key, value in bound.items()}

        def lookup(config: Config) -> float:
            try:
                return table[config]
            except KeyError:
                raise KeyError(f"upper_bound has no entry for config {config}") from None

        return lookup
    raise ValueError(f"upper_bound={bound!r} is neither callable nor a mapping config -> bound")


def _dimension_indices(space: SearchSpace, dims: Sequence[str | int], field: str) -> list[int]:
    names = list(space.names)
    out = []
    for dim in dims:
        if isinstance(dim, str):
            if dim not in names:
                raise KeyError(
                    f"{field} names {dim!r}, which is not a dimension; dimensions: {names}"
                )
            out.append(names.index(dim))
        else:
            index = int(dim)
            if not 0 <= index < len(names):
                raise ValueError(
                    f"{field} entry {dim!r} is not a dimension index in [0, {len(names)})"
                )
            out.append(index)
    return out


def _run(
    space: SearchSpace,
    objective: Callable[[Config], float],
    goal: str,
    method: str,
    seed: int,
    max_evaluations: int | None,
    stop_at: float | None,
    upper_bound: Any,
    target: float,
    monotone: bool,
    bound_pruning: bool,
    strict_dimensions: Sequence[str | int],
    params: dict[str, Any],
) -> SearchResult:
    if not isinstance(space, _solvers._SearchSpace):
        raise ValueError(f"space={space!r} is not a SearchSpace")
    if max_evaluations is not None and int(max_evaluations) < 1:
        raise ValueError(f"max_evaluations={max_evaluations} must be at least 1 (None: no limit)")
    return _solvers.run_search(
        space,
        objective,
        goal,
        method,
        seed,
        0 if max_evaluations is None else int(max_evaluations),
        stop_at,
        None if upper_bound is None else _as_callable(upper_bound),
        float(target),
        bool(monotone),
        bool(bound_pruning),
        _dimension_indices(space, strict_dimensions, "strict_dimensions"),
        params,
    )


def maximize(
    space: SearchSpace,
    objective: Callable[[Config], float],
    *,
    method: str = "kairos_plus",
    upper_bound: Callable[[Config], float] | Mapping[Config, float] | None = None,
    seed: int = 0,
    max_evaluations: int | None = None,
    stop_at: float | None = None,
    monotone: bool = True,
    bound_pruning: bool = True,
    strict_dimensions: Sequence[str | int] = (),
    **params: Any,
) -> SearchResult:
    """The config with the largest ``objective`` (Kairos: throughput under a budget).

    ``method`` is a registered name or spec (``"bayesian(xi=0.05)"``); ``params`` are the method's
    parameters. ``upper_bound`` (callable or ``{config: bound}``) is required by ``kairos_plus``;
    with ``bound_pruning`` every method prunes configs whose bound <= the best value found.
    ``monotone=False`` turns off sub-configuration pruning; ``strict_dimensions`` (names or
    indices) restricts it to sub-configurations with strictly fewer units in those dimensions.
    Stops after ``max_evaluations``, once a value >= ``stop_at`` is found, or when every config is
    evaluated or pruned.
    """
    if method.split("(")[0].strip() == "kairos_plus" and upper_bound is None:
        raise ValueError(
            "method='kairos_plus' needs upper_bound (a callable or a {config: bound} mapping)"
        )
    return _run(
        space,
        objective,
        "maximize",
        method,
        seed,
        max_evaluations,
        stop_at,
        upper_bound,
        0.0,
        monotone,
        bound_pruning,
        strict_dimensions,
        params,
    )


def minimize_cost(
    space: SearchSpace,
    objective: Callable[[Config], float],
    target: float,
    *,
    method: str = "bayesian",
    seed: int = 0,
    max_evaluations: int | None = None,
    stop_at: float | None = None,
    pruning: bool = True,
    strict_dimensions: Sequence[str | int] = (),
    **params: Any,
) -> SearchResult:
    """The cheapest config with ``objective(config) >= target`` (Ribbon: QoS satisfaction >= 99%).

    ``stop_at`` is a cost: the search stops once a feasible config at most that expensive is found
    (e.g. the known optimum). ``pruning=False`` turns off cost and dominance pruning.
    ``strict_dimensions``: a config missing the target prunes only the configs it dominates that
    have strictly fewer units in these dimensions. Ribbon passes its base type: with a
    distributor preferring the base type, adding auxiliary instances alone can lower QoS.
    """
    return _run(
        space,
        objective,
        "minimize_cost",
        method,
        seed,
        max_evaluations,
        stop_at,
        None,
        target,
        pruning,
        False,
        strict_dimensions,
        params,
    )


def trace_frame(result: SearchResult, names: Sequence[str] | None = None) -> Any:
    """The evaluation trace as a pandas DataFrame: index (1-based), one column per count, value,
    cost, feasible."""
    import pandas as pd

    configs = result.trace_configs
    names = list(names) if names is not None else [f"x{d}" for d in range(configs.shape[1])]
    frame = pd.DataFrame(configs, columns=names)
    frame.insert(0, "index", range(1, len(frame) + 1))
    frame["value"] = result.trace_values
    frame["cost"] = result.trace_costs
    frame["feasible"] = result.trace_feasible
    return frame
