"""ORCL, the offline oracle of the paper's Sec. 7: every query known at t = 0, sorted by size, no
query waiting or running where it would miss QoS. Its throughput is the reference of Fig. 9, and
its best configuration over the space the one every distributor is given there::

    from servelab import kairos

    kairos.oracle_throughput(folder, {"g4dn.xlarge": 2, "r5n.large": 9}, model="rm2")
    best = kairos.best_oracle_config(folder, "rm2")           # ORCL's pick over the whole space
    seq = kairos.OracleSequence(folder, model="rm2")            # one sequence, many configurations
    seq.throughput({"g4dn.xlarge": 2, "r5n.large": 9}).throughput
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...workload import make_size_distribution
from .bounds import configs_of, upper_bounds
from .data import load_profile
from .paper import qos_target
from .schedulers import base_type, check_config


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
        self.qos_ms = qos_target(model, qos_ms)
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
        config = check_config(self.profile, config, self.model)
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
    """The configuration space comes with the bounds (the artifact's instance.json)."""
    return upper_bounds(
        folder, model, formula="artifact", **({} if budget is None else {"budget": budget})
    )


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
