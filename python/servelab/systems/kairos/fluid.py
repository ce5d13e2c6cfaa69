"""A provable fluid upper bound on a configuration's allowable throughput, from a linear program.

Beyond the paper. Every query size class may run on every instance type; the program asks only
what any dispatcher has to respect in the long run: each instance is busy at most all the time,
and at most ``violation`` of the queries (1% for a p99 target) may miss QoS, counting the ones
never served and, for each (size, type), the chance that the service alone exceeds QoS::

    from servelab import kairos, profiles

    profile = profiles.import_kairos("../shared/data/kairos", models=["rm2"])
    b = kairos.fluid_upper_bound(profile, "rm2", {"g4dn.xlarge": 2, "r5n.large": 9}, qos_ms=350)
    b.throughput, b.per_type, b.per_class

The program and the argument for why no dispatcher that learns a query's service time only by
running it can beat the bound are in ``cpp/include/servelab/systems/kairos/fluid_bound.hpp``.
``fluid_bounds`` computes it for every configuration of an ``upper_bounds`` frame, next to
Kairos's own bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ... import workload as _workload
from ..._core import Profile
from ...backends import require

__all__ = ["FluidBound", "fluid_bounds", "fluid_size_classes", "fluid_upper_bound"]


@dataclass(frozen=True)
class FluidBound:
    """The bound (queries/s) and the optimal fluid schedule behind it.

    ``per_type``: one row per instance type with its count, the rate it serves and its busy
    fraction. ``per_class``: one row per query size with its probability, the rate each type
    serves of it (one column per type) and the rate dropped. ``miss_rate``: queries/s expected to
    miss QoS at the optimum (<= violation * throughput).
    """

    throughput: float
    per_type: pd.DataFrame = field(repr=False)
    per_class: pd.DataFrame = field(repr=False)
    tail: float
    miss_rate: float
    solver: str
    success: pd.DataFrame = field(repr=False)  # P(service <= QoS) by size (rows) and type (columns)


def _pairs(config: Any) -> list[tuple[str, int]]:
    items = config.items() if hasattr(config, "items") else config
    pairs = []
    try:
        for name, count in items:
            if isinstance(count, float) and not count.is_integer():
                raise ValueError(f"count of {name!r}={count!r} must be an integer")
            pairs.append((str(name), int(count)))
    except (TypeError, ValueError) as e:
        if isinstance(e, ValueError) and "count of" in str(e):
            raise
        raise ValueError(
            f"config must map instance types to counts ({{'g4dn.xlarge': 2, ...}}), got {config!r}"
        ) from None
    return pairs


def fluid_size_classes(
    sizes: Any, max_size: int, max_classes: int = 5000
) -> tuple[np.ndarray, np.ndarray, float]:
    """(sizes, probabilities, tail): a size mix as classes, the mass above ``max_size`` as tail.

    ``sizes``: a size distribution or its registry spec (``"kairos_mix"``), discretised exactly
    (one class per possible size); a ``{size: probability}`` mapping; or a ``(sizes, probs)`` pair.
    Explicit classes keep the tail their probabilities leave (1 - sum).
    """
    if isinstance(sizes, str):
        sizes = _workload.make_size_distribution(sizes)
    if isinstance(sizes, _workload.SizeDistribution):
        s, p, tail = require("lp").kairos.fluid_size_classes(sizes, int(max_size), int(max_classes))
        return s, p, float(tail)
    if isinstance(sizes, Mapping):
        s, p = list(sizes.keys()), list(sizes.values())
    else:
        try:
            s, p = sizes
        except (TypeError, ValueError):
            raise ValueError(
                "sizes must be a size distribution, its spec, {size: probability} or "
                f"(sizes, probabilities), got {sizes!r}"
            ) from None
    s = np.asarray(s, dtype=np.int64).reshape(-1)
    p = np.asarray(p, dtype=float).reshape(-1)
    if s.size != p.size:
        raise ValueError(f"sizes has {s.size} entries but probabilities {p.size}")
    return s, p, max(0.0, 1.0 - float(p.sum()))


def _max_size(profile: Profile, model: str, types: Sequence[str]) -> int:
    best = 1
    for t in types:
        best = max(best, int(profile.max_batch(t, model)))
    return best


def _check_qos(qos_ms: Any) -> float:
    if not (isinstance(qos_ms, (int, float)) and math.isfinite(qos_ms) and qos_ms > 0):
        raise ValueError(f"qos_ms={qos_ms!r} must be a positive number of milliseconds")
    return float(qos_ms)


def fluid_upper_bound(
    profile: Profile,
    model: str,
    config: Mapping[str, int] | Sequence[tuple[str, int]],
    qos_ms: float,
    *,
    sizes: Any = "kairos_mix",
    violation: float = 0.01,
    statistic: str = "mean",
    eligibility: str = "distribution",
    max_classes: int = 5000,
    time_limit: float | None = None,
    _classes: tuple[np.ndarray, np.ndarray, float] | None = None,
) -> FluidBound:
    """The fluid upper bound (queries/s) of ``config`` ({instance type: count}) for ``model``.

    qos_ms: the latency target; violation: the share of queries allowed to miss it (0.01 for
    p99). sizes: the query-size mix (see ``fluid_size_classes``; a distribution is cut at the
    largest profiled batch of the configuration's types, the rest always misses). statistic: the
    latency statistic used as expected service time ("mean" makes the busy-time rows exact).
    eligibility: "distribution" (P(service <= QoS) from the profile's samples, as the simulator
    draws them) or a statistic name for the deterministic test "statistic <= QoS".

    KeyError for an unknown type or model; ValueError for bad values; RuntimeError when
    servelab was built without an LP solver.
    """
    qos = _check_qos(qos_ms)
    pairs = _pairs(config)
    if _classes is None:
        used = [t for t, n in pairs if n > 0]
        for t in used:
            profile.hardware_index(t)  # KeyError before anything else
        _classes = fluid_size_classes(
            sizes, _max_size(profile, model, used) if used else 1, max_classes
        )
    class_sizes, probs, tail = _classes
    raw = require("lp").kairos.fluid_upper_bound(
        profile,
        model,
        pairs,
        qos / 1e3,
        [int(x) for x in class_sizes],
        [float(x) for x in probs],
        float(tail),
        float(violation),
        statistic,
        None if eligibility == "distribution" else eligibility,
        math.inf if time_limit is None else float(time_limit),
    )
    types = list(raw["types"])
    per_type = pd.DataFrame(
        {
            "count": raw["counts"],
            "rate": raw["type_rate"],
            "utilisation": raw["utilisation"],
        },
        index=pd.Index(types, name="type"),
    )
    per_class = pd.DataFrame(raw["rate"], columns=types, index=pd.Index(raw["sizes"], name="size"))
    per_class.insert(0, "probability", raw["probabilities"])
    per_class["dropped"] = raw["dropped"]
    success = pd.DataFrame(raw["success"], columns=types, index=pd.Index(raw["sizes"], name="size"))
    return FluidBound(
        throughput=float(raw["throughput"]),
        per_type=per_type,
        per_class=per_class,
        tail=float(raw["tail"]),
        miss_rate=float(raw["miss_rate"]),
        solver=str(raw["solver"]),
        success=success,
    )


def fluid_bounds(
    profile: Profile,
    model: str,
    frame: pd.DataFrame,
    qos_ms: float,
    **kwargs: Any,
) -> pd.DataFrame:
    """The fluid bound of every configuration of an ``upper_bounds`` frame, as a ``fluid``
    column next to its ``bound`` (plus ``fluid_rank``, 1 = highest). kwargs as for
    ``fluid_upper_bound``. The size mix is discretised once, up to the largest profiled batch
    among all the frame's types.
    """
    types = [c for c in frame.attrs.get("types", []) if c in frame.columns]
    if not types:
        raise ValueError(
            "frame has no instance-type columns: pass a frame from kairos.upper_bounds"
        )
    sizes = kwargs.pop("sizes", "kairos_mix")
    max_classes = kwargs.pop("max_classes", 5000)
    classes = fluid_size_classes(sizes, _max_size(profile, model, types), max_classes)
    counts = frame[types].to_numpy()
    values = [
        fluid_upper_bound(
            profile,
            model,
            list(zip(types, row.tolist(), strict=True)),
            qos_ms,
            _classes=classes,
            **kwargs,
        ).throughput
        for row in counts
    ]
    out = frame.copy()
    out["fluid"] = values
    out["fluid_rank"] = out["fluid"].rank(ascending=False, method="first").astype(int)
    return out
