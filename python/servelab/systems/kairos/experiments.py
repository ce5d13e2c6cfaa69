"""The distributors Kairos is compared with, on the Python side: ORCL's offline throughput, DRS's
threshold tuning, and the comparisons of the paper's Fig. 8 and Fig. 9.

The distributors themselves are registered schedulers ("kairos", "ribbon", "drs", "clockwork",
"oracle"; ``servelab.list_schedulers()``) evaluated by :func:`servelab.kairos.evaluate`::

    from servelab import kairos

    kairos.oracle_throughput(folder, {"g4dn.xlarge": 2, "r5n.large": 9}, model="rm2")
    best = kairos.best_oracle_config(folder, "rm2")           # ORCL's pick over the whole space
    drs = kairos.tune_drs_threshold(folder, best.config, model="rm2")
    table = kairos.compare_distributors(folder, "rm2", size="full")   # Fig. 9, one model
    table = kairos.compare_with_homogeneous(folder, "rm2", size="full")  # Fig. 8, one model

``size="small"`` runs reduced workloads (2,000 queries, one seed) for tests; ``size="full"`` the
artifact's 20,000 queries on three seeds.
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...workload import make_size_distribution
from . import artifact as _artifact
from .evaluate import _check_config, _qos, evaluate, load_profile

#: What the paper reports (Sec. 8.1, 8.2) for the comparisons below.
PAPER_CLAIMS = {
    "kairos_over_ribbon": "about 1.5x on every model (Fig. 9)",
    "kairos_over_drs_clockwork": "up to 1.44x (Fig. 9)",
    "kairos_over_homogeneous": "at least 1.25x on every model, up to 2x on RM2 (Fig. 8)",
}

#: Run sizes: queries per run, seeds per rate, search tolerance, queries of the ORCL sequence.
SIZES: dict[str, dict[str, Any]] = {
    "small": {"queries": 2000, "seeds": (0,), "rel_tol": 0.02, "oracle_queries": 2000},
    "full": {"queries": 20000, "seeds": (0, 1, 2), "rel_tol": 0.01, "oracle_queries": 20000},
}


def _size(size: str) -> dict[str, Any]:
    if size not in SIZES:
        raise ValueError(f"size={size!r} is not one of {', '.join(map(repr, SIZES))}")
    return SIZES[size]


# ---- roles -----------------------------------------------------------------------------------


def base_type(
    profile: Any, config: Mapping[str, int], *, model: str = "rm2", statistic: str = "mean"
) -> str:
    """The base type of a configuration: the type with the lowest latency on the largest query
    size every type present covers (as the schedulers' ClusterRoles decide)."""
    prof = load_profile(profile, model)
    present = list(_check_config(prof, config, model))
    largest = min(prof.max_batch(hw, model) for hw in present)
    return min(
        present,
        key=lambda hw: (prof.latency(hw, model, largest, statistic), prof.hardware_index(hw)),
    )


# ---- ORCL ------------------------------------------------------------------------------------


class OracleSequence:
    """ORCL's query sequence for one model and QoS: ``queries`` sizes drawn from ``sizes`` and
    sorted, with each instance type's latency (ms, by ``statistic``) for every one of them.
    Build it once, then :meth:`throughput` of any configuration."""

    def __init__(
        self,
        profile: Any,
        *,
        model: str = "rm2",
        qos_ms: float | None = None,
        queries: int = 20000,
        seed: int = 0,
        sizes: str = "kairos_mix",
        statistic: str = "mean",
    ) -> None:
        if isinstance(queries, bool) or not isinstance(queries, int) or queries < 1:
            raise ValueError(f"queries={queries!r} must be an integer >= 1")
        self.profile = load_profile(profile, model)
        self.model = model
        self.qos_ms = _qos(model, qos_ms)
        self.statistic = statistic
        self.sizes = np.sort(make_size_distribution(sizes).generate(seed=seed, count=queries))
        self._latency: dict[str, np.ndarray] = {}

    def latency_ms(self, hw: str) -> np.ndarray:
        """The type's latency of every query of the sequence (inf beyond its profile)."""
        if hw not in self._latency:
            out = np.full(self.sizes.size, np.inf)
            fit = self.sizes <= self.profile.max_batch(hw, self.model)
            if fit.any():
                out[fit] = 1e3 * self.profile.latency(
                    hw, self.model, self.sizes[fit].tolist(), self.statistic
                )
            self._latency[hw] = out
        return self._latency[hw]

    def throughput(self, config: Mapping[str, int], *, base: str | None = None) -> OracleResult:
        """ORCL (Sec. 7) on this configuration: every query known at t = 0 and sorted by size; an
        available base instance serves the largest remaining query, an auxiliary instance the
        smallest (it stops once even that one would miss QoS on it); no query waits or runs where
        it misses QoS. Throughput = queries served / time until the last one finishes."""
        config = _check_config(self.profile, config, self.model)
        base = (
            base
            if base is not None
            else base_type(self.profile, config, model=self.model, statistic=self.statistic)
        )
        qos = self.qos_ms
        lat = {hw: self.latency_ms(hw) for hw in config}
        heap = [
            (0.0, k, hw) for k, hw in enumerate(hw for hw, n in config.items() for _ in range(n))
        ]
        heapq.heapify(heap)
        lo, hi = 0, self.sizes.size - 1
        served, makespan = 0, 0.0
        while heap and lo <= hi:
            t, k, hw = heapq.heappop(heap)
            row = lat[hw]
            if hw == base:
                while hi >= lo and not row[hi] <= qos:
                    hi -= 1  # misses QoS even on the base type: nobody serves it within QoS
                if hi < lo:
                    break
                finish, hi = t + row[hi], hi - 1
            else:
                if not row[lo] <= qos:
                    continue  # every remaining query is at least this large: this instance is done
                finish, lo = t + row[lo], lo + 1
            served += 1
            makespan = max(makespan, finish)
            heapq.heappush(heap, (finish, k, hw))
        rate = served / (makespan / 1e3) if makespan > 0 else 0.0
        return OracleResult(dict(config), rate, served, self.sizes.size, makespan / 1e3, base)


@dataclass(frozen=True)
class OracleResult:
    """ORCL on one configuration: throughput (QPS) = served / makespan_s."""

    config: dict[str, int]
    throughput: float
    served: int
    queries: int
    makespan_s: float
    base: str


def oracle_throughput(
    profile: Any,
    config: Mapping[str, int],
    *,
    model: str = "rm2",
    qos_ms: float | None = None,
    queries: int = 20000,
    seed: int = 0,
    sizes: str = "kairos_mix",
    base: str | None = None,
) -> float:
    """ORCL's throughput (QPS) of one configuration (see :meth:`OracleSequence.throughput`)."""
    seq = OracleSequence(
        profile, model=model, qos_ms=qos_ms, queries=queries, seed=seed, sizes=sizes
    )
    return seq.throughput(config, base=base).throughput


def _space_configs(folder: Any, model: str, budget: float | None) -> pd.DataFrame:
    from .bounds import upper_bounds  # the configuration space comes with the bounds

    return upper_bounds(
        folder, model, formula="artifact", **({} if budget is None else {"budget": budget})
    )


def configs_of(frame: pd.DataFrame) -> list[dict[str, int]]:
    """The configurations of an upper_bounds frame, as {type: count} dicts (zeros included)."""
    types = frame.attrs["types"]
    return [
        {t: int(n) for t, n in zip(types, row, strict=True)}
        for row in frame[types].to_numpy().tolist()
    ]


@dataclass(frozen=True)
class BestOracle:
    """ORCL over a whole configuration space: the configuration with the largest throughput."""

    config: dict[str, int]
    throughput: float
    table: pd.DataFrame = field(repr=False)  # every configuration with its ORCL throughput


def best_oracle_config(
    folder: Any,
    model: str = "rm2",
    *,
    qos_ms: float | None = None,
    budget: float | None = None,
    queries: int = 20000,
    seed: int = 0,
    sizes: str = "kairos_mix",
) -> BestOracle:
    """ORCL's best configuration of the artifact's search space (instance.json under its budget,
    at least one base instance): "among all possible heterogeneous configurations, the largest
    throughput is used as the Oracle throughput" (Sec. 7)."""
    frame = _space_configs(folder, model, budget).sort_index()
    seq = OracleSequence(
        folder, model=model, qos_ms=qos_ms, queries=queries, seed=seed, sizes=sizes
    )
    rates = [
        seq.throughput({t: n for t, n in c.items() if n}).throughput for c in configs_of(frame)
    ]
    frame = frame.assign(oracle_qps=rates)
    best = int(np.argmax(rates))
    config = {t: n for t, n in configs_of(frame)[best].items() if n}
    return BestOracle(config, float(rates[best]), frame)


# ---- DRS -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DrsTuning:
    """DRS's hill climb: the threshold it settled on, its allowable throughput, every one tried."""

    threshold: int
    rate: float
    tried: dict[int, float]

    @property
    def distributor(self) -> str:
        return f"drs(threshold={self.threshold})"


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
    config = _check_config(prof, config, model)
    qos = _qos(model, qos_ms)
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


def tune_drs_threshold(
    profile: Any,
    config: Mapping[str, int],
    *,
    model: str = "rm2",
    qos_ms: float | None = None,
    start: int | None = None,
    steps: Sequence[int] = (160, 80, 40, 20, 10),
    max_threshold: int | None = None,
    **evaluate_kwargs: Any,
) -> DrsTuning:
    """DeepRecSys's hill climbing for DRS's size threshold: from ``start`` (default
    :func:`default_drs_threshold`), move to the better neighbour (threshold +- step) while the
    allowable throughput improves, for each step size in ``steps`` (coarse to fine). Thresholds
    stay in [0, max_threshold] (default the largest size the profile covers). Each threshold tried
    is one :func:`evaluate` (``evaluate_kwargs``: queries, seed, seeds, rel_tol, ...)."""
    prof = load_profile(profile, model)
    config = _check_config(prof, config, model)
    if not steps or any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in steps):
        raise ValueError(f"steps={steps!r} must be positive integers")
    top = (
        max_threshold
        if max_threshold is not None
        else max(prof.max_batch(hw, model) for hw in config)
    )
    current = (
        start
        if start is not None
        else default_drs_threshold(prof, config, model=model, qos_ms=qos_ms)
    )
    if isinstance(current, bool) or not isinstance(current, int) or not 0 <= current <= top:
        raise ValueError(f"start={current!r} must be an integer threshold in [0, {top}]")
    tried: dict[int, float] = {}

    def rate(threshold: int) -> float:
        if threshold not in tried:
            found = evaluate(
                prof,
                config,
                f"drs(threshold={threshold})",
                model=model,
                qos_ms=qos_ms,
                **evaluate_kwargs,
            )
            tried[threshold] = found.rate
        return tried[threshold]

    best = rate(current)
    for step in steps:
        while True:
            neighbours = [t for t in (current - step, current + step) if 0 <= t <= top]
            scored = [(rate(t), -abs(t - current), t) for t in neighbours]
            if not scored:
                break
            value, _, t = max(scored)
            if value <= best:
                break
            best, current = value, t
    return DrsTuning(current, best, dict(sorted(tried.items())))


# ---- the paper's comparisons -------------------------------------------------------------------


def _folder(source: Any) -> Path:
    path = Path(source) if isinstance(source, (str, os.PathLike)) else None
    if path is None or not _artifact.is_artifact_folder(path):
        raise ValueError(
            f"source={source!r} must be the Kairos artifact folder (data/, instance.json, ...)"
        )
    return path


def _comparison(
    source: Any, model: str, size: str, qos_ms: float | None
) -> tuple[Path, dict[str, Any], float]:
    """A comparison's artifact folder, run size and QoS target (ms), checked in that order."""
    return _folder(source), _size(size), _qos(model, qos_ms)


def _evaluate_kw(model: str, qos: float, run: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords every evaluate() of a comparison shares: model, QoS and the run size."""
    return {
        "model": model,
        "qos_ms": qos,
        "queries": run["queries"],
        "seeds": run["seeds"],
        "rel_tol": run["rel_tol"],
    }


def compare_distributors(
    source: Any,
    model: str = "rm2",
    *,
    size: str = "small",
    config: Mapping[str, int] | None = None,
    qos_ms: float | None = None,
    kairos: str = "kairos",
) -> pd.DataFrame:
    """Fig. 9 for one model: the allowable throughput of Kairos, Ribbon, DRS (threshold tuned by
    hill climbing) and CLKWRK, each given ORCL's best configuration (or ``config``), with ORCL's
    own throughput of it. One row per scheme: ``rate`` (QPS) and ``kairos_over`` (Kairos's rate
    divided by the scheme's). attrs: model, config, size, oracle table."""
    folder, run, qos = _comparison(source, model, size, qos_ms)
    if config is None:
        best = best_oracle_config(folder, model, qos_ms=qos, queries=run["oracle_queries"])
        config, oracle_rate = best.config, best.throughput
    else:
        oracle_rate = oracle_throughput(
            folder, config, model=model, qos_ms=qos, queries=run["oracle_queries"]
        )
    kw = _evaluate_kw(model, qos, run)
    rows = []
    for name, spec in (("kairos", kairos), ("ribbon", "ribbon"), ("clockwork", "clockwork")):
        rows.append(
            {"scheme": name, "distributor": spec, "rate": evaluate(folder, config, spec, **kw).rate}
        )
    drs = tune_drs_threshold(folder, config, **kw)
    rows.append({"scheme": "drs", "distributor": drs.distributor, "rate": drs.rate})
    rows.append({"scheme": "oracle", "distributor": "ORCL (offline)", "rate": oracle_rate})
    frame = pd.DataFrame(rows).set_index("scheme")
    k = frame.loc["kairos", "rate"]
    frame["kairos_over"] = [k / r if r > 0 else math.inf for r in frame["rate"]]
    frame.attrs.update(
        {
            "model": model,
            "config": dict(config),
            "size": size,
            "qos_ms": qos,
            "drs_tried": drs.tried,
        }
    )
    return frame


def best_homogeneous(
    source: Any,
    model: str = "rm2",
    *,
    size: str = "small",
    qos_ms: float | None = None,
    distributor: str = "ribbon",
    budget: float | None = None,
) -> pd.DataFrame:
    """The homogeneous pools of Fig. 8: for each instance type, as many instances as the budget
    affords (within instance.json's maximum), their allowable throughput, and that throughput
    scaled up to the whole budget (the paper compensates the budget a pool leaves unused).
    One row per type, best (``scaled_rate``) first."""
    folder, run, qos = _comparison(source, model, size, qos_ms)
    space = _artifact.read_instance_json(folder / _artifact.INSTANCE_JSON, budget=budget)
    prof = load_profile(folder, model)
    rows = []
    for hw, price, most in zip(space.types, space.prices, space.max_count, strict=True):
        n = min(int(most), math.floor(space.budget / price + 1e-9)) if price > 0 else int(most)
        if n < 1 or not prof.has_latency(hw, model):
            continue
        found = evaluate(folder, {hw: n}, distributor, **_evaluate_kw(model, qos, run))
        cost = n * price
        scale = space.budget / cost if cost > 0 else 1.0
        rows.append(
            {
                "type": hw,
                "count": n,
                "cost": cost,
                "rate": found.rate,
                "scaled_rate": found.rate * scale,
            }
        )
    frame = (
        pd.DataFrame(rows)
        .sort_values("scaled_rate", ascending=False, kind="stable")
        .reset_index(drop=True)
    )
    frame.attrs.update(
        {"model": model, "budget": space.budget, "distributor": distributor, "size": size}
    )
    return frame


def compare_with_homogeneous(
    source: Any,
    model: str = "rm2",
    *,
    size: str = "small",
    qos_ms: float | None = None,
    kairos: str = "kairos",
    formula: str = "artifact",
) -> dict[str, Any]:
    """Fig. 8 for one model: Kairos (its one-shot configuration from the upper bounds, ``formula``,
    served by ``kairos``; the budget it leaves unused is not compensated) against the best
    homogeneous pool under the same budget (scaled up to the whole budget)."""
    from .bounds import select_config

    folder, run, qos = _comparison(source, model, size, qos_ms)
    choice = select_config(folder, model, formula=formula)
    config = {t: n for t, n in choice.config.items() if n}
    found = evaluate(folder, config, kairos, **_evaluate_kw(model, qos, run))
    pools = best_homogeneous(folder, model, size=size, qos_ms=qos)
    best = pools.iloc[0]
    return {
        "model": model,
        "kairos_config": config,
        "kairos_rate": found.rate,
        "homogeneous": f"{int(best['count'])} x {best['type']}",
        "homogeneous_rate": float(best["rate"]),
        "homogeneous_scaled_rate": float(best["scaled_rate"]),
        "improvement": found.rate / best["scaled_rate"] if best["scaled_rate"] > 0 else math.inf,
        "pools": pools,
    }


def fidelity_report(
    source: Any,
    models: Sequence[str] = ("ncf", "rm2", "wnd", "mtwnd", "dien"),
    *,
    size: str = "full",
) -> pd.DataFrame:
    """Both comparisons for every model, ours beside the paper's claims: one row per model."""
    rows = []
    for model in models:
        fig9 = compare_distributors(source, model, size=size)
        fig8 = compare_with_homogeneous(source, model, size=size)
        rows.append(
            {
                "model": model,
                "oracle_config": fig9.attrs["config"],
                **{f"{s}_qps": fig9.loc[s, "rate"] for s in fig9.index},
                "kairos_over_ribbon": fig9.loc["ribbon", "kairos_over"],
                "kairos_over_drs": fig9.loc["drs", "kairos_over"],
                "kairos_over_clockwork": fig9.loc["clockwork", "kairos_over"],
                "kairos_config": fig8["kairos_config"],
                "kairos_on_own_config_qps": fig8["kairos_rate"],
                "homogeneous": fig8["homogeneous"],
                "homogeneous_scaled_qps": fig8["homogeneous_scaled_rate"],
                "kairos_over_homogeneous": fig8["improvement"],
            }
        )
    frame = pd.DataFrame(rows).set_index("model")
    frame.attrs["paper"] = dict(PAPER_CLAIMS)
    return frame
