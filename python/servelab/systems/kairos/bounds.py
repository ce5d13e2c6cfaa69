"""Kairos's throughput upper bound for every configuration under a budget, and its one-shot choice.

The bound (Sec. 5.2, Eq. 9-15) needs, per instance type, the inputs of the artifact's
``allocator_profile.json``; they come from that file or are computed from a latency profile, a
query-size distribution and a QoS target. The search space is a budget, prices and maximum counts
(the artifact's ``instance.json``)::

    from servelab import kairos

    frame = kairos.upper_bounds("../shared/data/kairos", "rm2")        # the artifact's inputs
    frame = kairos.upper_bounds(profile, "rm2", qos_ms=350, budget=2.5)  # from latencies
    choice = kairos.select_config(frame)

``formula``: ``"paper"`` (default) takes the auxiliary type with the largest QoS-respecting size as
standing for all and counts only the sizes that meet QoS as small; ``"artifact"`` reproduces
``kairos_resource_allocator.py`` (the maxima of vio_batch, small_ratio and time_ratio taken
separately; the violating batch counted as small), number for number.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import profiles as _profiles
from ..._core import Profile
from ..._core import kairos as _k
from . import data as _data
from .paper import QOS_MS

BoundProfile = _k.BoundProfile
AuxiliaryProfile = _k.AuxiliaryProfile
InstanceSpace = _k.InstanceSpace

FORMULAS = ("paper", "artifact")

Source = (
    Any  # an artifact folder, a native profile file, a Profile, a BoundProfile or a bounds frame
)


def _check_formula(formula: str) -> str:
    if formula not in FORMULAS:
        raise ValueError(f"formula={formula!r} is not one of {', '.join(map(repr, FORMULAS))}")
    return formula


def instance_space(
    types: Sequence[str],
    prices: Sequence[float],
    budget: float,
    *,
    max_count: Sequence[int] | None = None,
    min_base: int = 1,
) -> InstanceSpace:
    """A search space: types (base first), $/h prices, a budget ($/h) and maximum counts.

    max_count defaults to the most instances of each type the budget affords on its own.
    """
    types, prices = list(types), [float(p) for p in prices]
    if len(prices) != len(types):
        raise ValueError(f"prices has {len(prices)} entries but types has {len(types)}")
    if not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget >= 0):
        raise ValueError(f"budget={budget!r} must be a finite number >= 0 ($/h)")
    if max_count is None:
        max_count = []
        for t, p in zip(types, prices, strict=True):
            if not (math.isfinite(p) and p > 0):
                raise ValueError(
                    f"price of {t!r}={p!r} must be > 0 to derive its max_count from the budget "
                    "(or pass max_count)"
                )
            max_count.append(math.floor(budget / p + 1e-9))
    return InstanceSpace(types, prices, [int(c) for c in max_count], float(budget), min_base)


def _resolve_model(profile: Profile, model: str | None) -> str:
    if model is not None:
        return model
    if len(profile.models) == 1:
        return profile.models[0]
    raise ValueError(
        f"model=None: the profile holds several models ({', '.join(profile.models)}); name one"
    )


@dataclass(frozen=True)
class BoundSetup:
    """What a bound computation runs on: the inputs, the space and the formula."""

    inputs: BoundProfile
    space: InstanceSpace
    formula: str
    model: str | None


def bound_setup(
    source: Source,
    model: str | None = None,
    *,
    space: InstanceSpace | None = None,
    budget: float | None = None,
    types: Sequence[str] | None = None,
    max_count: Sequence[int] | None = None,
    qos_ms: float | None = None,
    sizes: Any = "kairos_mix",
    statistic: str = "mean_without_max",
    qos_statistic: str = "p50",
    formula: str = "paper",
) -> BoundSetup:
    """Resolves a source into bound inputs and a search space (see upper_bounds for the forms)."""
    _check_formula(formula)
    if isinstance(source, BoundProfile):
        if space is None:
            raise ValueError("a BoundProfile needs space= (an InstanceSpace): it carries no prices")
        return BoundSetup(source, space, formula, model)

    folder = Path(source) if isinstance(source, (str, os.PathLike)) else None
    if folder is not None and _data.is_artifact_folder(folder):
        if space is None:
            if types is not None or max_count is not None:
                # The artifact's instance.json fixes the types and counts; never ignore a request.
                raise ValueError(
                    f"types={types!r} / max_count={max_count!r}: an artifact folder takes its "
                    "types and counts from instance.json; give space= to choose others"
                )
            space = _data.read_instance_json(folder / _data.INSTANCE_JSON, budget=budget)
        if qos_ms is None:
            if model is None:
                raise ValueError(
                    f"model=None: name one of {', '.join(_data.artifact_models(folder))}"
                )
            inputs = _data.read_allocator_profile(
                folder / _data.ALLOCATOR_PROFILE, model, base=space.types[0]
            )
            return BoundSetup(inputs, space, formula, model)
        # A QoS of one's own: derive the inputs from the artifact's latencies.
        source = _profiles.import_kairos(folder)

    profile = _data.read_profile(source)
    if profile is None:
        raise ValueError(
            f"source={source!r} is not an artifact folder, a profile file, a Profile or a "
            "BoundProfile"
        )
    model = _resolve_model(profile, model)
    if qos_ms is None:
        if model in QOS_MS:
            qos_ms = QOS_MS[model]
        else:
            raise ValueError(f"qos_ms=None: give the QoS target (ms) of model {model!r}")
    if space is None:
        if budget is None:
            raise ValueError("budget=None: give the budget ($/h) or a space")
        if types is None:
            types = [h for h in profile.hardware if profile.has_latency(h, model)]
        missing = [t for t in types if not profile.has_price(t)]
        if missing:
            raise ValueError(f"the profile has no price for {', '.join(missing)}: give space=")
        space = instance_space(
            types, [profile.price(t) for t in types], budget, max_count=max_count
        )
    inputs = _k.derive_bound_profile(
        profile,
        list(space.types),
        model,
        qos_ms,
        sizes,
        statistic=statistic,
        qos_statistic=qos_statistic,
        region=formula,
    )
    return BoundSetup(inputs, space, formula, model)


def bound_table(source: Source, model: str | None = None, **kwargs: Any) -> _k.BoundTable:
    """The C++ table of bounds behind upper_bounds (same arguments)."""
    setup = bound_setup(source, model, **kwargs)
    return _k.upper_bounds(setup.inputs, setup.space, setup.formula)


def _frame(
    table: _k.BoundTable, model: str | None, base_violation_share: float | None
) -> pd.DataFrame:
    space = table.space
    counts = table.counts
    frame = pd.DataFrame({t: counts[:, k] for k, t in enumerate(space.types)})
    frame["cost"] = table.cost
    frame["bound"] = table.bound
    frame["rank"] = table.rank
    regime = table.regime
    frame["regime"] = regime if regime else None
    frame.index.name = "config"
    frame = frame.iloc[table.order]
    frame.attrs.update(
        {
            "model": model,
            "formula": table.formula,
            "types": list(space.types),
            "prices": list(space.prices),
            "max_count": list(space.max_count),
            "budget": space.budget,
            "min_base": space.min_base,
            "base_violation_share": base_violation_share,
        }
    )
    return frame


def upper_bounds(source: Source, model: str | None = None, **kwargs: Any) -> pd.DataFrame:
    """Kairos's upper bound of every configuration under the budget, highest first.

    source: a Kairos artifact folder (its allocator_profile.json and instance.json; with qos_ms
    the inputs are derived from its latency data instead), a native profile file or a
    :class:`Profile` (inputs derived for ``model`` at ``qos_ms``, default the paper's Table 3 for
    the artifact's models, with the query sizes ``sizes``; rates from the latency ``statistic``,
    default the mean without the largest sample, and the QoS test on ``qos_statistic``, default
    the median, the artifact's choices), or a :class:`BoundProfile` with ``space``.
    space: an :class:`InstanceSpace`; else the artifact's instance.json (with ``budget`` replacing
    its budget), or ``budget`` with the profile's prices (``types``: base first, default every
    type with latencies of the model; ``max_count``: default what the budget affords).
    formula: "paper" or "artifact" (module docstring).

    Returns one row per configuration, indexed by its enumeration order ("config"): a count
    column per type, ``cost`` ($/h), ``bound`` (QPS), ``rank`` (1 = highest bound; ties keep
    the enumeration order, as the artifact's stable sort) and ``regime`` (which case of Eq. 15).
    ValueError for a budget below the cheapest configuration ("no feasible configuration"),
    sizes beyond the profiled batches or a QoS below every latency; KeyError for unknown types
    or models.
    """
    setup = bound_setup(source, model, **kwargs)
    table = _k.upper_bounds(setup.inputs, setup.space, setup.formula)
    return _frame(table, setup.model, setup.inputs.base_violation_share)


def space_of(frame: pd.DataFrame) -> InstanceSpace:
    """The search space an upper_bounds frame was computed on."""
    a = frame.attrs
    try:
        return InstanceSpace(a["types"], a["prices"], a["max_count"], a["budget"], a["min_base"])
    except KeyError as e:
        raise ValueError(
            f"the frame has no {e.args[0]!r} attribute: pass a frame returned by upper_bounds"
        ) from None


def named_config(frame: Any, counts: Sequence[int] | None) -> dict[str, int] | None:
    """``counts`` (one per type, in the space's order, as a SearchResult's ``best_config``) as
    ``{type: count}``; ``frame``: an upper_bounds frame or the sequence of types. None stays None
    (a search that found nothing)."""
    if counts is None:
        return None
    types = list(frame.attrs["types"]) if isinstance(frame, pd.DataFrame) else list(frame)
    return {t: int(n) for t, n in zip(types, counts, strict=True)}


def configs_of(frame: pd.DataFrame) -> list[dict[str, int]]:
    """The configurations of an upper_bounds frame, as {type: count} dicts (zeros included)."""
    types = frame.attrs["types"]
    return [
        {t: int(n) for t, n in zip(types, row, strict=True)}
        for row in frame[types].to_numpy().tolist()
    ]


def table_of(frame: pd.DataFrame) -> _k.BoundTable:
    """A bounds frame (its ``bound`` column maybe replaced, e.g. by another bound) as a table."""
    space = space_of(frame)
    missing = [c for c in [*space.types, "bound"] if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame has no column {', '.join(map(repr, missing))}")
    counts = frame[list(space.types)].to_numpy(dtype=np.int64)
    bound = frame["bound"].to_numpy(dtype=np.float64)
    return _k.table_from_bounds(space, counts, bound, frame.attrs.get("formula", "paper"))


@dataclass(frozen=True)
class Selection:
    """Kairos's one-shot choice among the highest bounds."""

    config: dict[str, int]
    bound: float
    cost: float
    rank: int
    rule: (
        str  # "same_base": the top configurations agree on the base count; else "min_distance_sum"
    )
    candidates: pd.DataFrame  # the top_k rows, with their distance_sum under "min_distance_sum"

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(self.config.values())


def select_config(
    source: Source,
    model: str | None = None,
    *,
    same_base_top: int = 3,
    top_k: int = 10,
    **kwargs: Any,
) -> Selection:
    """Kairos's configuration without online evaluation (Sec. 5.2).

    If the ``same_base_top`` (3) highest bounds share their base count, the highest; otherwise,
    among the ``top_k`` (10) highest, the one with the least sum of squared Euclidean distances to
    the others. source: an upper_bounds frame, or the arguments of upper_bounds.
    """
    frame = source if isinstance(source, pd.DataFrame) else upper_bounds(source, model, **kwargs)
    table = table_of(frame)
    chosen = _k.select_config(table, same_base_top, top_k)
    types = list(table.space.types)
    # Table indices are enumeration indices; find the frame's rows by their counts.
    counts = table.counts
    label = {
        tuple(row): lab
        for lab, row in zip(frame.index, frame[types].to_numpy().tolist(), strict=True)
    }
    labels = [label[tuple(counts[i].tolist())] for i in chosen["candidates"]]
    row = frame.loc[label[tuple(counts[chosen["index"]].tolist())]]
    candidates = frame.loc[labels].copy()
    if chosen["distance_sums"]:
        candidates["distance_sum"] = chosen["distance_sums"]
    return Selection(
        config={t: int(row[t]) for t in types},
        bound=float(row["bound"]),
        cost=float(row["cost"]),
        rank=int(row["rank"]),
        rule=chosen["rule"],
        candidates=candidates,
    )
