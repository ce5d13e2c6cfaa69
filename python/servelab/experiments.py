"""Experiments: allowable-throughput searches over runs.

``allowable_throughput`` finds the largest arrival rate at which a QoS target holds (Kairos'
metric: "the maximum throughput the allocated instances can serve without causing QoS
violation"), where ``run(rate, seed)`` returns a :class:`~servelab.results.Result`::

    qos = QoS(percentile=99, target_ms=350)
    found = allowable_throughput(lambda rate, seed: simulate(rate, seed), qos, low=10,
                                 seeds=(0, 1, 2))
    found.rate, found.bracket, found.to_frame()

Parameter sweeps (``sweep``, ``SweepError``, ``SweepInterrupted``, ``grid_points``) live in
:mod:`servelab.sweeps`; they are re-exported here for code that imported them from this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .results import COMPLETED, NS_PER_MS, Result

# Re-exported: the sweep machinery lived here before servelab.sweeps.
from .sweeps import SweepError, SweepInterrupted, grid_points, sweep  # noqa: F401

# ---- QoS -------------------------------------------------------------------------------------


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name}={value!r} must be a number")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be finite")
    return value


def tail_latency_ms(result: Result, percentile: float, warmup_s: float = 0.0) -> float:
    """The percentile of query latency in ms, where a dropped query's latency is infinite.

    Uses numpy's linear interpolation over all measured queries (arriving at or after
    ``warmup_s``); the value is ``inf`` as soon as the percentile touches a dropped query, so a
    QoS on it fails when more than (100 - percentile)% of the queries are dropped. NaN when no
    query arrived after the warmup.
    """
    warmup_ns = result._warmup_ns(warmup_s)
    c = result.columns
    rows = c["arrival_ns"] >= warmup_ns
    done = rows & (c["status"] == COMPLETED)
    n = int(np.count_nonzero(rows))
    if n == 0:
        return math.nan
    latency = (c["finish_ns"][done] - c["arrival_ns"][done]) / NS_PER_MS
    pos = percentile / 100.0 * (n - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if hi >= latency.size:  # the percentile reaches into the dropped (infinite) tail
        return math.inf
    a, b = np.partition(latency, (lo, hi))[[lo, hi]]
    return float(a + (b - a) * (pos - lo))


@dataclass(frozen=True)
class QoS:
    """A quality-of-service target on a run.

    ``QoS(percentile=99, target_ms=350)``: the p99 latency is at most 350 ms, counting a dropped
    query as infinitely late (see :func:`tail_latency_ms`). ``QoS(max_violation_rate=0.01)``: at
    most 1% of the queries miss their deadline or are dropped (``summary()["slo_violation_rate"]``).
    Give either or both; with both, both must hold.
    """

    percentile: float | None = None
    target_ms: float | None = None
    max_violation_rate: float | None = None

    def __post_init__(self) -> None:
        if (self.percentile is None) != (self.target_ms is None):
            raise ValueError(
                f"percentile={self.percentile!r} and target_ms={self.target_ms!r} go together: "
                "give both or neither"
            )
        if self.percentile is None and self.max_violation_rate is None:
            raise ValueError(
                "QoS needs a target: percentile= with target_ms=, and/or max_violation_rate="
            )
        if self.percentile is not None:
            p = _finite("percentile", self.percentile)
            if not 0 < p <= 100:
                raise ValueError(f"percentile={self.percentile!r} must be in (0, 100]")
            if _finite("target_ms", self.target_ms) <= 0:
                raise ValueError(f"target_ms={self.target_ms!r} must be > 0")
        if self.max_violation_rate is not None:
            v = _finite("max_violation_rate", self.max_violation_rate)
            if not 0 <= v <= 1:
                raise ValueError(
                    f"max_violation_rate={self.max_violation_rate!r} must be in [0, 1]"
                )

    def measure(self, result: Result, warmup_s: float = 0.0) -> dict[str, float]:
        """The measured values the targets apply to, e.g. ``{"p99_ms": 212.0}``."""
        if not isinstance(result, Result):
            raise TypeError(f"expected a servelab Result, got {type(result).__name__}")
        out = {}
        if self.percentile is not None:
            key = f"p{self.percentile:g}_ms"
            out[key] = tail_latency_ms(result, self.percentile, warmup_s)
        if self.max_violation_rate is not None:
            rate = result.summary(warmup_s=warmup_s)["slo_violation_rate"]
            out["violation_rate"] = math.nan if rate is None else rate
        return out

    def holds_for(self, measured: Mapping[str, float]) -> bool:
        """Whether measured values (from :meth:`measure`) meet every target."""
        if any(math.isnan(v) for v in measured.values()):
            raise ValueError(
                f"the QoS cannot be judged on {measured}: no query arrived after the warmup"
            )
        ok = True
        if self.percentile is not None:
            ok &= measured[f"p{self.percentile:g}_ms"] <= self.target_ms
        if self.max_violation_rate is not None:
            ok &= measured["violation_rate"] <= self.max_violation_rate
        return bool(ok)

    def holds(self, result: Result, warmup_s: float = 0.0) -> bool:
        """Whether the run meets every target (queries arriving before warmup_s excluded)."""
        return self.holds_for(self.measure(result, warmup_s))

    def describe(self) -> str:
        parts = []
        if self.percentile is not None:
            parts.append(f"p{self.percentile:g} latency <= {self.target_ms:g} ms")
        if self.max_violation_rate is not None:
            parts.append(f"SLO violations <= {self.max_violation_rate:.4g}")
        return " and ".join(parts)


# ---- allowable throughput --------------------------------------------------------------------


class Evaluation(NamedTuple):
    """One rate tried by the search: whether it passed, and the measured QoS values per seed
    run (seeds after the first failing one are not run)."""

    rate: float
    passed: bool
    metrics: tuple[dict[str, float], ...]


@dataclass
class AllowableThroughput:
    """The outcome of :func:`allowable_throughput`.

    ``rate``: the largest rate seen to pass (0.0 when even ``low`` fails: ``feasible`` is False).
    ``bracket``: (highest passing, lowest failing) rate; ``inf`` on the right when no failing
    rate was found. ``converged``: the bracket's relative width reached ``rel_tol``.
    ``evaluations``: every rate tried, in order.
    """

    rate: float
    feasible: bool
    converged: bool
    bracket: tuple[float, float]
    evaluations: list[Evaluation] = field(default_factory=list)
    qos: str = ""
    seeds: tuple[int, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per (evaluation, seed run): step, rate, passed, seed and the measured values."""
        rows = []
        for step, ev in enumerate(self.evaluations):
            for seed, metrics in zip(self.seeds, ev.metrics, strict=False):
                rows.append(
                    {"step": step, "rate": ev.rate, "passed": ev.passed, "seed": seed, **metrics}
                )
        return pd.DataFrame(rows)


def allowable_throughput(
    run: Callable[[float, int], Result],
    qos: QoS,
    *,
    low: float,
    high: float | None = None,
    seeds: Sequence[int] = (0,),
    rel_tol: float = 0.01,
    max_iter: int = 40,
    warmup_s: float = 0.0,
) -> AllowableThroughput:
    """The largest arrival rate at which ``qos`` holds, where ``run(rate, seed)`` returns a Result.

    A rate passes only if the QoS holds for EVERY seed (the conservative choice: the answer is a
    rate the system sustains on all the sampled arrival sequences); seeds are run in order and a
    rate's remaining seeds are skipped once one fails. The search assumes passing is monotone in
    the rate. Without ``high`` it doubles from ``low`` until a rate fails; then it bisects until
    (fail - pass) / fail <= ``rel_tol``. ``max_iter`` bounds the number of rates tried.

    If ``low`` already fails the answer has ``rate=0.0`` and ``feasible=False``; if ``high``
    passes (or doubling never fails) the answer is the highest rate tried, with ``converged=False``.
    """
    if not isinstance(qos, QoS):
        raise ValueError(f"qos={qos!r} must be a QoS")
    low = _finite("low", low)
    if low <= 0:
        raise ValueError(f"low={low!r} must be > 0")
    if high is not None:
        high = _finite("high", high)
        if high <= low:
            raise ValueError(f"high={high!r} must be > low={low!r}")
    rel_tol = _finite("rel_tol", rel_tol)
    if not 0 < rel_tol < 1:
        raise ValueError(f"rel_tol={rel_tol!r} must be in (0, 1)")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 2:
        raise ValueError(f"max_iter={max_iter!r} must be an integer >= 2")
    seeds = tuple(seeds)
    if not seeds:
        raise ValueError("seeds=() must name at least one seed")
    _finite("warmup_s", warmup_s)

    evaluations: list[Evaluation] = []

    def passes(rate: float) -> bool:
        metrics = []
        ok = True
        for seed in seeds:
            result = run(rate, seed)
            if not isinstance(result, Result):
                raise TypeError(
                    f"run({rate!r}, {seed!r}) returned {type(result).__name__}, not a Result"
                )
            measured = qos.measure(result, warmup_s)
            metrics.append(measured)
            if not qos.holds_for(measured):
                ok = False
                break
        evaluations.append(Evaluation(rate, ok, tuple(metrics)))
        return ok

    def answer(lo: float, hi: float, *, feasible: bool = True) -> AllowableThroughput:
        converged = feasible and math.isfinite(hi) and (hi - lo) / hi <= rel_tol
        return AllowableThroughput(
            rate=lo if feasible else 0.0,
            feasible=feasible,
            converged=converged,
            bracket=(lo if feasible else 0.0, hi),
            evaluations=evaluations,
            qos=qos.describe(),
            seeds=seeds,
        )

    if not passes(low):
        return answer(0.0, low, feasible=False)
    lo = low
    if high is not None:
        if passes(high):
            return answer(high, math.inf)
        hi = high
    else:
        hi = 2.0 * low
        while passes(hi):
            lo, hi = hi, 2.0 * hi
            if len(evaluations) >= max_iter:
                return answer(lo, math.inf)
    while (hi - lo) / hi > rel_tol and len(evaluations) < max_iter:
        mid = 0.5 * (lo + hi)
        if passes(mid):
            lo = mid
        else:
            hi = mid
    return answer(lo, hi)


# ---- sweeps ----------------------------------------------------------------------------------
