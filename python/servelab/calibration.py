"""Where a served query's time goes, and the simulated world that reproduces a served run.

The serving loop stamps every query at each stage (``taken_ns``: the controller took up its
arrival; ``dispatch_ns``: the scheduler dispatched its batch; ``start_ns`` / ``finish_ns``: the
worker ran it; ``noticed_ns``: the controller took up the batch's end)::

    served = servelab.serve(scenario, executor="recsys(model='rm2', backend='onednn')")
    servelab.loop_breakdown(served)          # per stage: mean, p50, p99 (ms), share of latency
    cal = servelab.calibrate(served)         # the profile and loop model that reproduce it
    servelab.simulate(scenario, profile=cal.profile, loop_model=cal.loop_model)

``calibrate`` observes (the stages), replays (the service times at the run's load become the
profile, :func:`servelab.profile_from_run`) and fits the loop's three delays as quantile tables
(the ``measured_loop`` loop model, see ``servelab.list_loop_models()``). The served workers share
one host: a batch that ran while others ran took longer. ``calibrate(..., interference=True)``
fits that too (a ``per_corunner`` interference model, see ``servelab.list_interference_models()``)
and profiles the batches' times with it taken out, so the simulated host slows its batches as the
load makes them overlap (``Calibration.simulate`` places the scenario's workers on one machine
with that model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _core
from .profiling import profile_from_run

__all__ = ["Calibration", "calibrate", "loop_breakdown", "loop_stages"]

#: The stages of a served query, in order: (name, what it is). The first five add up to its
#: latency (arrival to its batch's finish); ``notice`` comes after.
STAGES = (
    ("arrival", "arrival -> the controller takes it up (arrival_ns -> taken_ns)"),
    ("queue", "taken up -> its batch is dispatched: queueing, decision (-> dispatch_ns)"),
    ("wake", "dispatched -> the worker thread starts the batch (-> start_ns)"),
    ("staging", "the batch's time outside the executor's own measure: inputs, hand-over"),
    ("exec", "the executor's own measure of the batch (exec_ns)"),
    ("notice", "the batch ends -> the controller takes up its end (finish_ns -> noticed_ns)"),
)


def _served(result: Any, what: str) -> None:
    meta = getattr(result, "meta", None)
    if not isinstance(meta, dict) or meta.get("world") != "serve":
        world = meta.get("world") if isinstance(meta, dict) else None
        raise ValueError(
            f"{what}: result={result!r} is not a serving run (meta['world'] is {world!r}): "
            "only the serving loop stamps the loop's stages"
        )
    missing = [c for c in ("taken_ns", "noticed_ns", "exec_ns") if c not in result.columns]
    if missing:
        raise ValueError(
            f"{what}: the run has no {missing} columns (a result saved before the serving loop "
            "stamped its stages): serve it again"
        )


def loop_stages(result: Any):  # -> pandas.DataFrame
    """One row per completed query of a served run: each stage's time (ms, see ``STAGES``), its
    batch's service time (staging + exec) and its latency; the stages before ``notice`` add up
    to the latency."""
    import numpy as np
    import pandas as pd

    from .results import COMPLETED

    _served(result, "loop_stages")
    c = result.columns
    done = c["status"] == COMPLETED

    def span(a: str, b: str):
        return (c[b][done] - c[a][done]).astype(np.float64) / 1e6

    service = span("start_ns", "finish_ns")
    exec_ms = c["exec_ns"][done].astype(np.float64) / 1e6
    return pd.DataFrame(
        {
            "id": c["id"][done],
            "arrival_ms": span("arrival_ns", "taken_ns"),
            "queue_ms": span("taken_ns", "dispatch_ns"),
            "wake_ms": span("dispatch_ns", "start_ns"),
            "staging_ms": service - exec_ms,
            "exec_ms": exec_ms,
            "notice_ms": span("finish_ns", "noticed_ns"),
            "service_ms": service,
            # The record's latency ends at the batch's finish; noticing comes after it.
            "latency_ms": span("arrival_ns", "finish_ns"),
        }
    )


def loop_breakdown(result: Any):  # -> pandas.DataFrame
    """Per stage of a served run's completed queries: mean, p50, p99 (ms) and the mean's share of
    the mean latency (``notice`` comes after a query's finish: its share is of the worker's
    time, not of the latency)."""
    import pandas as pd

    stages = loop_stages(result)
    latency = float(stages["latency_ms"].mean()) if len(stages) else float("nan")
    rows = []
    for name, doc in STAGES:
        col = stages[f"{name}_ms"]
        rows.append(
            {
                "stage": name,
                "what": doc,
                "mean_ms": float(col.mean()),
                "p50_ms": float(col.quantile(0.5)),
                "p99_ms": float(col.quantile(0.99)),
                "share": float(col.mean()) / latency if latency else float("nan"),
            }
        )
    return pd.DataFrame(rows).set_index("stage")


@dataclass
class Calibration:
    """What :func:`calibrate` fitted: ``profile`` (the run's service times, alone),
    ``loop_model`` (the loop's delays, a ``measured_loop``), ``interference`` (how much a
    co-running batch on the host slowed a batch, a ``per_corunner`` spec; None when not fitted)
    and the ``breakdown`` it saw."""

    profile: Any
    loop_model: Any
    breakdown: Any
    batches: int
    interference: str | None = None

    def simulate(self, scenario: Any = None, **overrides: Any):
        """``servelab.simulate`` of ``scenario`` on this calibration: its profile and loop model,
        and, with an interference model, every worker as an instance on one host machine."""
        from .run import simulate

        if self.interference is not None:
            scenario = on_one_host(scenario, overrides)
            overrides = {"interference": self.interference, **overrides}
        return simulate(scenario, profile=self.profile, loop_model=self.loop_model, **overrides)


def on_one_host(scenario: Any, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``scenario`` (anything ``servelab.simulate`` takes; ``overrides`` applied first) as a dict
    whose worker groups are all instances on one machine, ``host``: the served run's machine."""
    from .scenario import Scenario, load_scenario

    overrides = dict(overrides or {})
    base = scenario if isinstance(scenario, Scenario) else load_scenario(scenario or {})
    data = base.to_dict()
    for key in ("workers", "workload", "profile", "scheduler", "seed"):
        if overrides.get(key) is not None:
            data[key] = overrides.pop(key)
    data["workers"] = [{**w, "machine": "host"} for w in data["workers"]]
    data["machines"] = [{"name": "host", "count": 1}]
    return data


class _HostTimeline:
    """How many batches ran on the served host over time (every worker shares it): the edges
    (starts and ends, in time order) and the count between each edge and the next."""

    def __init__(self, batches: Any):
        import numpy as np

        self.start = batches["start_ns"].to_numpy()
        self.finish = batches["finish_ns"].to_numpy()
        times = np.concatenate([self.start, self.finish])
        steps = np.concatenate([np.ones(len(self.start)), -np.ones(len(self.finish))])
        order = np.lexsort((steps, times))  # at equal times, ends before starts
        self.times = times[order]
        self.running = np.cumsum(steps[order])[:-1]  # between edge k and edge k + 1
        self.gaps = np.diff(self.times).astype(np.float64)
        self.at_start = np.searchsorted(self.times, self.start, side="left")
        self.at_finish = np.searchsorted(self.times, self.finish, side="left")

    def alone(self, slowdown: float) -> Any:
        """Each batch's time alone if every other running batch slowed it by ``slowdown``: the
        integral of 1 / (1 + slowdown x others) over its run (progress rate, as the simulator's
        ``per_corunner`` model)."""
        import numpy as np

        others = np.maximum(self.running - 1.0, 0.0)
        area = np.concatenate([[0.0], np.cumsum(self.gaps / (1.0 + slowdown * others))])
        return area[self.at_finish] - area[self.at_start]


def fit_corunner_slowdown(batches: Any, groups: Any, *, max_slowdown: float = 3.0) -> float:
    """The slowdown s per co-running batch (the ``per_corunner`` model) under which the batches'
    times alone agree best within each group (``groups``: a code 0..k-1 per batch, e.g. one per
    hardware, model and items; a group's batches did the same work): the s in 0..max_slowdown
    minimising their squared deviation from their group's mean, relative to it (a grid of 0.01,
    then of 0.0005 around the best)."""
    import numpy as np

    g = np.asarray(groups)
    if len(g) == 0:
        return 0.0
    line = _HostTimeline(batches)
    if not np.any(line.running > 1):
        return 0.0  # no batch ever ran beside another: nothing to fit
    counts = np.bincount(g)

    def spread(s: float) -> float:
        alone = line.alone(s)
        mean = np.bincount(g, weights=alone) / counts
        return float(np.sum((alone / mean[g] - 1.0) ** 2))

    coarse = np.arange(0.0, max_slowdown + 1e-9, 0.01)
    best = float(coarse[np.argmin([spread(s) for s in coarse])])
    fine = np.arange(max(0.0, best - 0.01), min(max_slowdown, best + 0.01) + 1e-9, 0.0005)
    return float(fine[np.argmin([spread(s) for s in fine])])


def _arrival_delays(arrival_ns: Any, taken_ns: Any, batches: Any, workers: int) -> Any:
    """The delays until the controller took up an arrival that it had to act on at once: one
    that found a worker free (dispatched to one, under FCFS-like policies) and the arrival
    before it already taken up.

    - A late take-up matters only to a query that a free worker waits for; one that comes while
      every worker is busy waits in the queue anyway. Those late take-ups are also the largest:
      a controller that shares its core with a busy worker's thread gets the core back only when
      the batch ends. Drawn for every arrival, they would hold up queries that found a worker
      free, which is not what the loop did.
    - The controller takes arrivals in order: the ones that come while it is late inherit its
      lateness, which the simulator (each arrival no earlier than the one before it) adds
      itself; counting them would draw one stall once per query it held up.

    A worker counts as busy from its batch's dispatch until the end of that batch is noticed
    (``batches``: Result.batches() of the run)."""
    import numpy as np

    taken = taken_ns >= 0
    a, t = arrival_ns[taken], taken_ns[taken]
    order = np.argsort(a, kind="stable")
    a, t = a[order], t[order]
    fresh = np.ones(len(a), dtype=bool)
    fresh[1:] = t[:-1] <= a[1:]
    # Workers busy at each arrival: batches dispatched by then less those noticed by then.
    began = np.sort(batches["dispatch_ns"].to_numpy())
    ended = np.sort(batches["noticed_ns"].to_numpy())
    busy = np.searchsorted(began, a, side="right") - np.searchsorted(ended, a, side="right")
    keep = fresh & (busy < workers)
    return t[keep] - a[keep]


def _quantiles_us(values_ns: Any, count: int) -> list[float]:
    import numpy as np

    if len(values_ns) == 0:
        return [0.0]
    probs = np.linspace(0.0, 1.0, count)
    q = np.quantile(np.maximum(values_ns, 0).astype(np.float64), probs) / 1e3
    return [round(float(v), 3) for v in np.maximum.accumulate(q)]


def calibrate(
    served: Any,
    *,
    base: Any = None,
    quantiles: int = 33,
    min_samples: int = 5,
    interference: bool = False,
) -> Calibration:
    """The profile and loop model that make the simulator reproduce ``served`` (a
    ``servelab.serve`` result): its service times (``profile_from_run`` with ``base`` and
    ``min_samples``) and its loop's delays as ``quantiles`` quantiles each (``measured_loop``):
    wake (dispatch -> start, one per batch), notice (finish -> taken up, one per batch) and
    arrival (arrival -> taken up, one per query that found a worker free and the controller
    caught up: see ``_arrival_delays``).

    ``interference=True``: each other batch running on the host is taken to slow a batch by s,
    fitted so that batches of the same work agree on their time alone
    (:func:`fit_corunner_slowdown`); the profile holds the times alone (progress rate taken out)
    and ``Calibration.interference`` is ``per_corunner(slowdown=s)``, so that a prediction at
    another load sees the overlap that load brings. The fit takes every slowdown that comes with
    overlap as the co-runners' doing: on a machine where other work runs, it is noise. False
    (default): the profile holds the times as served, at the run's own overlap."""
    _served(served, "calibrate")
    if isinstance(quantiles, bool) or not isinstance(quantiles, int) or not 2 <= quantiles <= 1001:
        raise ValueError(f"quantiles={quantiles!r} must be an integer in 2..1001")
    if not isinstance(interference, bool):
        raise ValueError(f"interference={interference!r} must be True or False")
    batches = served.batches()  # one wake and one notice per batch
    model = None
    if interference:
        import numpy as np

        hardware = served.workers["hardware"][batches["worker"].to_numpy()]
        keys = np.stack([hardware, batches["model"].to_numpy(), batches["items"].to_numpy()])
        groups = np.unique(keys, axis=1, return_inverse=True)[1].ravel()
        slowdown = fit_corunner_slowdown(batches, groups)
        alone = _HostTimeline(batches).alone(slowdown)
        profile = profile_from_run(served, base=base, min_samples=min_samples, service_ns=alone)
        model = f"per_corunner(slowdown={slowdown:g})"
    else:
        profile = profile_from_run(served, base=base, min_samples=min_samples)
    wake = (batches["start_ns"] - batches["dispatch_ns"]).to_numpy()
    notice = (batches["noticed_ns"] - batches["finish_ns"]).to_numpy()
    c = served.columns
    arrival = _arrival_delays(
        c["arrival_ns"], c["taken_ns"], batches, len(served.workers["worker"])
    )

    def fmt(values: list[float]) -> str:
        return "[" + ", ".join(repr(v) for v in values) + "]"

    spec = (
        f"measured_loop(wake_us={fmt(_quantiles_us(wake, quantiles))}, "
        f"notice_us={fmt(_quantiles_us(notice, quantiles))}, "
        f"arrival_us={fmt(_quantiles_us(arrival, quantiles))})"
    )
    return Calibration(
        profile=profile,
        loop_model=_core.make_loop_model(spec),
        breakdown=loop_breakdown(served),
        batches=len(batches),
        interference=model,
    )
