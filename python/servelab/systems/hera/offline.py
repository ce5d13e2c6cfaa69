"""Hera's offline side: every model profiled on the node (QPS for each workers x LLC ways, Fig. 6
and 7), its worker scalability, the co-location affinity table (Algorithm 1, Fig. 10a) and every
pair run the way the node unit starts it (the QPS Algorithm 2 counts per server).

::

    from servelab import hera
    off = hera.build()                      # Table I on Table II's node
    off.workers_curve("dlrm_d")             # Fig. 6, normalised to 16 workers
    off.affinity                            # Fig. 10(a), n x n
    off.pearson()                           # affinity vs the contention model's co-located QPS
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ... import _core
from . import specs as specs


class HeraOffline:
    """The profiled tables of a set of models on one node (built by ``build``)."""

    def __init__(self, core: Any, threshold: float) -> None:
        self._core = core
        self.threshold = threshold
        self.models = list(core.models)
        self.names = [m.name for m in self.models]
        self.node = core.node
        self.tables = list(core.tables)
        pairs = zip(core.scalability, self.names, strict=True)
        self.scalability = [dict(s, name=n) for s, n in pairs]
        self.affinity = core.affinity
        self.llc_split = core.affinity_llc_split
        self._pairs: dict[tuple[int, int], dict[str, Any]] = {}

    # -- lookups ---------------------------------------------------------------------------------
    def index(self, name: str) -> int:
        """The position of a model; KeyError naming the known ones."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(
                f"model {name!r} is not profiled; known: {', '.join(self.names)}"
            ) from None

    @property
    def high(self) -> list[bool]:
        return [bool(s["high"]) for s in self.scalability]

    @property
    def low_models(self) -> list[str]:
        return [n for n, h in zip(self.names, self.high, strict=False) if not h]

    @property
    def high_models(self) -> list[str]:
        return [n for n, h in zip(self.names, self.high, strict=False) if h]

    def isolated_qps(self, name: str) -> float:
        """The model's max load alone on one node (every worker that fits, every way)."""
        return float(self.tables[self.index(name)].isolated_qps)

    # -- Fig. 6 and 7 ----------------------------------------------------------------------------
    def workers_curve(self, name: str, *, normalise: bool = True) -> np.ndarray:
        """QPS with 1..cores workers and every way (0 where the workers do not fit); normalised
        to the QPS with every core, as Fig. 6 plots it (to the max workers' QPS when those run
        out of memory first)."""
        t = self.tables[self.index(name)]
        q = t.qps[1:, t.ways].copy()
        return q / t.isolated_qps if normalise else q

    def ways_curve(self, name: str, *, normalise: bool = True) -> np.ndarray:
        """QPS with 1..ways LLC ways and the most workers that fit, normalised to every way
        (Fig. 7)."""
        t = self.tables[self.index(name)]
        q = t.qps[t.max_workers, 1:].copy()
        return q / t.isolated_qps if normalise else q

    # -- pairs -----------------------------------------------------------------------------------
    def pair(self, a: str, b: str) -> dict[str, Any]:
        """Two different models a and b on one server as Hera's node unit starts it: workers,
        ways, QPS, loads (fractions of each model's isolated max load) and EMU. ValueError when
        a == b: a model by itself is ``alone(a)``."""
        if a == b:
            raise ValueError(
                f"pair(a={a!r}, b={b!r}): a pair is two different models; "
                f"alone({a!r}) is the model by itself"
            )
        return self._pair(a, b)

    def alone(self, name: str) -> dict[str, Any]:
        """The model by itself on one server, in ``pair``'s shape (``b`` is the model too, with
        no workers): every worker that fits, every way, EMU 1."""
        return self._pair(name, name)

    def _pair(self, a: str, b: str) -> dict[str, Any]:
        i, j = self.index(a), self.index(b)
        key = (i, j)
        if key not in self._pairs:  # bounded: at most n * n entries
            self._pairs[key] = dict(self._core.pair(i, j), a=a, b=b)
        return dict(self._pairs[key])

    def colocated(
        self, a: str, workers_a: int, ways_a: int, b: str, workers_b: int, ways_b: int
    ) -> dict[str, Any]:
        """The contention model's latency-bounded QPS of a and b sharing the node with the given
        workers and ways (ValueError when they exceed the cores, ways or memory)."""
        i, j = self.index(a), self.index(b)
        tenants = [(self.models[i], workers_a, ways_a), (self.models[j], workers_b, ways_b)]
        return _core.hera.evaluate(self.node, tenants)

    def emu_matrix(self) -> np.ndarray:
        """EMU of every pair (diagonal: 1, the model alone)."""
        n = len(self.names)
        return np.array(
            [[self._pair(a, b)["emu"] for b in self.names] for a in self.names]
        ).reshape(n, n)

    def measured_colocation(self) -> np.ndarray:
        """Fig. 10(b) from the contention model: for each pair at Hera's allocation, the mean over
        the two models of QPS co-located / QPS alone with the same workers and every way."""
        n = len(self.names)
        out = np.ones((n, n))
        for i, j in itertools.permutations(range(n), 2):
            p = self.pair(self.names[i], self.names[j])
            if not p["feasible"]:
                out[i, j] = 0.0
                continue
            ta, tb = self.tables[i], self.tables[j]
            alone_a = ta.qps[p["workers_a"], ta.ways]
            alone_b = tb.qps[p["workers_b"], tb.ways]
            out[i, j] = (p["qps_a"] / alone_a + p["qps_b"] / alone_b) / 2
        return out

    def pearson(self) -> float:
        """Pearson correlation, over every pair of distinct models, between the affinity table
        and ``measured_colocation()`` (the paper reports 0.95)."""
        n = len(self.names)
        if n < 3:
            raise ValueError(f"a correlation needs at least 3 models (2 pairs); got {n}")
        iu = np.triu_indices(n, k=1)
        return float(np.corrcoef(self.affinity[iu], self.measured_colocation()[iu])[0, 1])

    def cluster_tables(self) -> dict[str, Any]:
        """The inputs of Algorithm 2: isolated QPS, classes, affinity, pair QPS."""
        return self._core.cluster_tables()

    def summary(self) -> list[dict[str, Any]]:
        """One row per model: class, slope, max workers, isolated QPS, single-worker latency."""
        rows = []
        for m, t, s in zip(self.models, self.tables, self.scalability, strict=False):
            rows.append(
                {
                    "model": m.name,
                    "label": specs.label(m.name),
                    "sla_ms": m.sla_ms,
                    "memory_gb": m.memory_gb,
                    "latency_ms": m.alone_latency_ms(
                        self.node.llc_mb, self.node.core_bandwidth_gbs
                    ),
                    "max_workers": t.max_workers,
                    "isolated_qps": t.isolated_qps,
                    "slope": s["slope"],
                    "scalability": "high" if s["high"] else "low",
                    "useful_workers": s["useful_workers"],
                }
            )
        return rows


def build(
    models: Iterable[str | Any | Mapping[str, Any]] | None = None,
    node: str | Any | Mapping[str, Any] = "xeon-gold-6242",
    *,
    threshold: float = 0.5,
) -> HeraOffline:
    """Profiles the models (default: Table I) on the node (default: Table II's), classifies them
    with the slope threshold and builds the affinity table and the pair allocations.

    ValueError names a model that does not fit in memory with one worker or cannot meet its SLA
    alone, and a bad node or model field."""
    spec = specs.node(node)
    profiles = specs.models(models)
    if not (isinstance(threshold, (int, float)) and 0 < threshold <= 2):
        raise ValueError(f"threshold={threshold!r} must be in (0, 2]")
    return HeraOffline(_core.hera.build_offline(spec, profiles, float(threshold)), float(threshold))
