"""The experiment harness of the Kairos evaluation: the allowable throughput of a configuration
under a distributor (Kairos's metric), DRS's threshold tuning, and the comparisons of the paper's
Fig. 8, 9 and 10.

"The maximum throughput the allocated instances can serve without causing QoS violation"
(Kairos, HPDC'23, Sec. 3): the largest Poisson arrival rate at which the p99 latency of the
artifact's workload stays within the QoS target, found by :func:`servelab.allowable_throughput`
on :func:`servelab.simulate` runs of the Scenario :func:`evaluation_scenario` builds (so any run
can be replayed with :func:`servelab.serve`)::

    from servelab import kairos

    found = kairos.evaluate_config(folder, {"g4dn.xlarge": 2, "r5n.large": 9}, "kairos")
    found.rate                      # queries per second
    kairos.evaluate_config(profile, config, "drs(threshold=300)", qos_ms=350, model="rm2")
    drs = kairos.tune_drs_threshold(folder, config, model="rm2")
    table = kairos.compare_distributors(folder, "rm2", size="full")      # Fig. 9, one model
    table = kairos.compare_on_configs(folder, size="full")  # Fig. 9 along the budget line
    table = kairos.compare_with_homogeneous(folder, "rm2", size="full")  # Fig. 8, one model
    table = kairos.exploration_overhead(folder, "rm2", size="full")     # Fig. 10, one model

The workload is the artifact's: inter-arrival gaps of whole milliseconds drawn from a Poisson
distribution (``poisson_integer_ms``), query sizes from its mix rounded up to multiples of 10
(``kairos_mix``), a deadline of ``qos_ms`` after arrival. An artifact folder is imported with its
largest sample dropped (:func:`~servelab.kairos.data.load_profile`), so that the decision
statistic "mean" is the artifact's estimate (the mean without the largest sample) and service
times are drawn uniformly from the remaining samples, as its emulated servers do.

``size="small"`` runs the comparisons on reduced workloads (2,000 queries, one seed) for tests;
``size="full"`` the artifact's 20,000 queries on three seeds; a mapping
(``{"queries": 1000, "seeds": (0,), "rel_tol": 0.05}``) sets a study's own size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...experiments import AllowableThroughput, QoS, allowable_throughput
from ...results import Result
from ...run import simulate
from ...sweeps import SweepError, sweep
from ...workload import make_size_distribution
from .bounds import select_config
from .data import INSTANCE_JSON, artifact_folder, load_profile, read_instance_json
from .oracle import best_oracle_config, oracle_throughput
from .paper import MODELS, fidelity_table, qos_target
from .schedulers import check_config, default_drs_threshold, distributor_factory

#: Run sizes: queries per run, seeds per rate, search tolerance, queries of the ORCL sequence.
SIZES: dict[str, dict[str, Any]] = {
    "small": {"queries": 2000, "seeds": (0,), "rel_tol": 0.02, "oracle_queries": 2000},
    "full": {"queries": 20000, "seeds": (0, 1, 2), "rel_tol": 0.01, "oracle_queries": 20000},
}


#: What a comparison's ``size`` may be: a name of SIZES, or a mapping with these keys.
Size = str | Mapping[str, Any]


def _size(size: Size) -> dict[str, Any]:
    """A run size: a name of SIZES, or a mapping of queries, seeds and rel_tol (oracle_queries
    defaults to queries), so that a study can compare its own measurements at its own size."""
    if isinstance(size, Mapping):
        required = {"queries", "seeds", "rel_tol"}
        unknown = set(size) - required - {"oracle_queries"}
        if unknown or not required <= set(size):
            raise ValueError(
                f"size={dict(size)!r} must map exactly queries, seeds, rel_tol "
                "(and optionally oracle_queries)"
            )
        seeds = size["seeds"]
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
            raise ValueError(f"size['seeds']={seeds!r} must be a non-empty sequence of seeds")
        return {
            "queries": size["queries"],
            "seeds": tuple(seeds),
            "rel_tol": size["rel_tol"],
            "oracle_queries": size.get("oracle_queries", size["queries"]),
        }
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(
            f"size={size!r} is not one of {', '.join(map(repr, SIZES))} or a mapping of "
            "queries, seeds and rel_tol"
        )
    return SIZES[size]


# ---- one configuration ----------------------------------------------------------------------


def evaluation_scenario(
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
    qos = qos_target(model, qos_ms)
    workers = [
        {"hardware": hw, "count": n, "models": [model]}
        for hw, n in check_config(prof, config, model).items()
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
    config = check_config(prof, config, model)
    drawn = make_size_distribution(sizes).generate(seed=seed, count=2000)
    total = 0.0
    for hw, n in config.items():
        fit = drawn[drawn <= prof.max_batch(hw, model)]
        if fit.size:
            total += n / float(np.mean(prof.latency(hw, model, fit.tolist(), "mean")))
    return total


def evaluate_config(
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
    qos = qos_target(model, qos_ms)
    config = check_config(prof, config, model)
    make = distributor_factory(distributor)

    def run(rate: float, run_seed: int) -> Result:
        return simulate(
            evaluation_scenario(
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
    is one :func:`evaluate_config` (``evaluate_kwargs``: queries, seed, seeds, rel_tol, ...)."""
    prof = load_profile(profile, model)
    config = check_config(prof, config, model)
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
            found = evaluate_config(
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


def _comparison(
    source: Any, model: str, size: Size, qos_ms: float | None
) -> tuple[Path, dict[str, Any], float]:
    """A comparison's artifact folder, run size and QoS target (ms), checked in that order."""
    return artifact_folder(source), _size(size), qos_target(model, qos_ms)


def _evaluate_kw(model: str, qos: float, run: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords every evaluate_config() of a comparison shares: model, QoS and the run size."""
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
    size: Size = "small",
    config: Mapping[str, int] | None = None,
    qos_ms: float | None = None,
    kairos: str = "kairos",
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Fig. 9 for one model: the allowable throughput of Kairos, Ribbon, DRS (threshold tuned by
    hill climbing) and CLKWRK, each given ORCL's best configuration (or ``config``), with ORCL's
    own throughput of it. One row per scheme: ``rate`` (QPS) and ``kairos_over`` (Kairos's rate
    divided by the scheme's). attrs: model, config, size, oracle table. The four schemes are
    independent points of ``servelab.sweep`` (``processes``, ``backend``, ``ray_address`` as
    there; DRS's hill climbing stays one point, its steps depend on each other)."""
    folder, run, qos = _comparison(source, model, size, qos_ms)
    if config is None:
        best = best_oracle_config(folder, model, qos_ms=qos, queries=run["oracle_queries"])
        config, oracle_rate = best.config, best.throughput
    else:
        oracle_rate = oracle_throughput(
            folder, config, model=model, qos_ms=qos, queries=run["oracle_queries"]
        )
    points = [
        {"scheme": name, "spec": spec}
        for name, spec in (
            ("kairos", kairos), ("ribbon", "ribbon"), ("clockwork", "clockwork"), ("drs", None),
        )
    ]  # fmt: skip
    shared = {"folder": folder, "config": dict(config), "search": _evaluate_kw(model, qos, run)}
    measured = _sweep_rates(_scheme_rate, points, shared, processes, backend, ray_address)
    drs_tried = dict(measured[-1]["drs_tried"])
    rows = [{k: m[k] for k in ("scheme", "distributor", "rate")} for m in measured]
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
            "drs_tried": drs_tried,
        }
    )
    return frame


def budget_line(
    source: Any,
    *,
    base: str = "g4dn.xlarge",
    auxiliary: str = "r5n.large",
    budget: float | None = None,
) -> list[dict[str, int]]:
    """Configurations from GPU-heavy to CPU-heavy along the budget, on which Fig. 9's ratio is
    set beside the paper's (issue 36): the largest pool of ``base`` the budget buys alone, then
    for n = that count down to 1, n ``base`` and as many ``auxiliary`` instances as the rest of the
    budget buys (within instance.json's maxima). On the artifact's space ($2.5/h): 4 g4dn;
    4 g4dn + 2 r5n; 3 + 6; 2 + 9; 1 + 13."""
    space = read_instance_json(artifact_folder(source) / INSTANCE_JSON, budget=budget)
    types = list(space.types)
    for name in (base, auxiliary):
        if name not in types:
            raise ValueError(f"{name!r} is not an instance type of the space ({', '.join(types)})")
    price = dict(zip(types, space.prices, strict=True))
    most = dict(zip(types, space.max_count, strict=True))
    top = min(int(most[base]), math.floor(space.budget / price[base] + 1e-9))
    if top < 1:
        raise ValueError(f"the budget ${space.budget:g}/h buys no {base}")
    line = [{base: top}]
    for n in range(top, 0, -1):
        rest = space.budget - n * price[base]
        m = min(int(most[auxiliary]), math.floor(rest / price[auxiliary] + 1e-9))
        if m > 0:
            line.append({base: n, auxiliary: m})
    return line


def config_label(config: Mapping[str, int]) -> str:
    """``{"g4dn.xlarge": 2, "r5n.large": 9}`` -> "2 g4dn + 9 r5n" (types without instances left
    out)."""
    return " + ".join(f"{n} {t.split('.')[0]}" for t, n in config.items() if n)


def compare_on_configs(
    source: Any,
    configs: Sequence[Mapping[str, int]] | None = None,
    *,
    models: Sequence[str] = MODELS,
    schemes: Sequence[str] = ("kairos", "ribbon"),
    size: Size = "small",
    qos_ms: float | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Fig. 9's comparison on fixed configurations instead of ORCL's best: the allowable
    throughput of each scheme (registered distributor specs; the first is the reference) for
    every model x configuration (default :func:`budget_line`). One row per (model, config):
    ``label`` (e.g. "2 g4dn + 9 r5n"), ``cpu_share`` (the share of the configuration's price
    spent on instances other than the first type), a ``rate`` column per scheme (QPS, named by
    the scheme) and ``<first>_over_<scheme>`` per other scheme. The runs are the points of one
    ``servelab.sweep`` (``processes``, ``backend``, ``ray_address`` as there)."""
    folder = artifact_folder(source)
    run = _size(size)
    line = [dict(c) for c in (configs if configs is not None else budget_line(folder))]
    if not line or not schemes:
        raise ValueError("give at least one configuration and one scheme")
    space = read_instance_json(folder / INSTANCE_JSON)
    price = dict(zip(space.types, space.prices, strict=True))
    points = [
        {"model": m, "config": tuple(sorted(c.items())), "spec": s}
        for m in models
        for c in line
        for s in schemes
    ]
    shared = {"folder": folder, "run": run, "qos_ms": qos_ms}
    found = _sweep_rates(_model_config_rate, points, shared, processes, backend, ray_address)
    rates = {
        (p["model"], p["config"], p["spec"]): f["rate"] for p, f in zip(points, found, strict=True)
    }
    first = schemes[0]
    rows = []
    for m in models:
        for c in line:
            key = tuple(sorted(c.items()))
            cost = sum(price[t] * n for t, n in c.items())
            aux = sum(price[t] * n for t, n in c.items() if t != space.types[0])
            out: dict[str, Any] = {
                "model": m, "label": config_label(c), "config": dict(c),
                "cpu_share": aux / cost if cost > 0 else 0.0,
            }  # fmt: skip
            for s in schemes:
                out[s] = rates[(m, key, s)]
            for s in schemes[1:]:
                out[f"{first}_over_{s}"] = out[first] / out[s] if out[s] > 0 else math.inf
            rows.append(out)
    frame = pd.DataFrame(rows)
    frame.attrs.update({"size": size, "schemes": tuple(schemes)})
    return frame


def _model_config_rate(
    model: str, config: tuple[tuple[str, int], ...], spec: str, folder: Path,
    run: Mapping[str, Any], qos_ms: float | None,
) -> dict[str, float]:  # fmt: skip
    """One (model, configuration, scheme) of compare_on_configs (module level, as above)."""
    qos = qos_target(model, qos_ms)
    found = evaluate_config(folder, dict(config), spec, **_evaluate_kw(model, qos, run))
    return {"rate": found.rate}


def _sweep_rates(
    fn: Any,
    points: list[dict[str, Any]],
    shared: Mapping[str, Any],
    processes: int,
    backend: str,
    ray_address: str | None,
) -> list[dict[str, Any]]:
    """``fn`` over ``points`` through ``servelab.sweep``: one dict per point, in order. A point
    that raises raises what it raised (a bad distributor or setting), as a serial loop would."""
    try:
        frame = sweep(
            fn, points, processes=processes, backend=backend, ray_address=ray_address,
            shared=shared, retries=0, progress=False,
        )  # fmt: skip
    except SweepError as error:
        raise error.__cause__ from None
    return frame.to_dict("records")


def _scheme_rate(
    scheme: str, spec: str | None, folder: Path, config: dict[str, int], search: Mapping[str, Any]
) -> dict[str, Any]:
    """One scheme of compare_distributors (module level: sweep workers import it); ``spec`` None
    is DRS with its threshold tuned by hill climbing."""
    if spec is not None:
        rate = evaluate_config(folder, config, spec, **search).rate
        return {"distributor": spec, "rate": rate, "drs_tried": None}
    drs = tune_drs_threshold(folder, config, **search)
    # As (threshold, rate) pairs: sweep would flatten a dict into one column per threshold.
    return {"distributor": drs.distributor, "rate": drs.rate, "drs_tried": list(drs.tried.items())}


def _config_rate(
    scheme: str, counts: tuple[int, ...], spec: str | None, types: list[str], folder: Path,
    search: Mapping[str, Any],
) -> dict[str, float]:  # fmt: skip
    """One configuration under one scheme for exploration_overhead (module level, as above);
    ``spec`` None is DRS with its threshold hill-climbed for this configuration (one evaluation
    when it has a single type: the threshold then changes nothing)."""
    present = {t: n for t, n in zip(types, counts, strict=True) if n}
    if spec is None:
        if len(present) == 1:
            return {"rate": evaluate_config(folder, present, "drs", **search).rate}
        return {"rate": tune_drs_threshold(folder, present, **search).rate}
    return {"rate": evaluate_config(folder, present, spec, **search).rate}


#: exploration_overhead's distributor column for DRS tuned per configuration.
TUNED_DRS = "drs (threshold hill-climbed per configuration)"


def exploration_overhead(
    source: Any,
    model: str = "rm2",
    *,
    size: Size = "small",
    qos_ms: float | None = None,
    distributors: Mapping[str, str] | None = None,
    known: Mapping[str, Mapping[tuple[int, ...], float]] | None = None,
    formula: str = "artifact",
    tune_drs: bool = False,
    monotone_pruning: bool | Mapping[str, bool] | None = None,
    budget: float | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Fig. 10 for one model: the online evaluations each distributor needs to reach its *own*
    optimum configuration when it explores with Kairos+ (Algorithm 1: bound order, bound and
    sub-configuration pruning), the same search for every scheme, as in the paper.

    Every configuration is measured under every scheme (its optimum is the exhaustive one), then
    Kairos+ runs over those values. distributors: scheme -> scheduler spec (default Kairos,
    Ribbon, DRS and CLKWRK). tune_drs: measure the scheme "drs" with its threshold hill-climbed
    for each configuration (:func:`tune_drs_threshold`), as the paper's DRS is; False (default,
    cheaper): its default threshold per configuration. known: scheme -> {counts tuple (the
    frame's type order): allowable throughput} already measured, used instead of simulating.
    budget: the space's budget ($/h; default instance.json's).

    monotone_pruning: whether Kairos+ prunes the sub-configurations of what it evaluated, per
    scheme (a mapping) or for all (a bool); None (default): as the distributor allows
    (:func:`~servelab.kairos.monotone_pruning_for`: not for Ribbon and DRS, whose first come,
    first served throughput can rise when an instance is removed, so that the pruning can skip
    their optimum).

    One row per scheme: the optimum ``config`` and its ``rate``; ``evaluations`` until Kairos+
    stops; ``evaluations_to_optimum`` and ``share_to_optimum`` (of the space), NaN when Kairos+
    stops without it (only possible when a pruning's assumption fails: a sub-configuration
    serving more, or a measured rate above its bound); ``kairos_plus_rate``, the best Kairos+
    found; ``monotone_pruning`` (what the search used); ``pruned_to_optimum``, the same count
    with sub-configuration pruning (NaN: the pruning skipped the optimum); ``non_monotone``, how
    many (configuration, one more instance) pairs serve more with fewer instances by more than
    the rate search's tolerance; ``above_bound``, how many configurations measure above their
    upper bound (by more than that tolerance).

    The measurements (every configuration x scheme not in ``known``) are the points of one
    ``servelab.sweep``: ``processes``, ``backend`` and ``ray_address`` as there.
    """
    from .bounds import upper_bounds
    from .kairos_plus import monotone_pruning_for, non_monotone_pairs, search

    folder, run, qos = _comparison(source, model, size, qos_ms)
    schemes = dict(
        distributors
        if distributors is not None
        else {"kairos": "kairos", "ribbon": "ribbon", "drs": "drs", "clockwork": "clockwork"}
    )
    if isinstance(monotone_pruning, Mapping):
        unknown = set(monotone_pruning) - set(schemes)
        if unknown:
            raise ValueError(f"monotone_pruning names schemes not compared: {sorted(unknown)}")
    frame = upper_bounds(folder, model, formula=formula, budget=budget)
    types = list(frame.attrs["types"])
    space = [tuple(int(n) for n in row) for row in frame[types].to_numpy()]
    bound = dict(zip(space, frame["bound"].astype(float), strict=True))
    values = {scheme: dict((known or {}).get(scheme, {})) for scheme in schemes}
    specs = {
        scheme: None if tune_drs and spec == "drs" else spec for scheme, spec in schemes.items()
    }
    points = [
        {"scheme": scheme, "counts": key, "spec": specs[scheme]}
        for scheme in schemes
        for key in space
        if key not in values[scheme]
    ]
    shared = {"types": types, "folder": folder, "search": _evaluate_kw(model, qos, run)}
    for point, found in zip(
        points,
        _sweep_rates(_config_rate, points, shared, processes, backend, ray_address),
        strict=True,
    ):
        values[point["scheme"]][point["counts"]] = found["rate"]
    rows = []
    noise = float(run["rel_tol"])
    for scheme, spec in schemes.items():
        measured = values[scheme]
        optimum = max(space, key=lambda key: (measured[key], [-n for n in key]))
        best = measured[optimum]
        tol = 1e-9 * max(1.0, abs(best))
        if isinstance(monotone_pruning, Mapping):
            prune = bool(monotone_pruning.get(scheme, monotone_pruning_for(spec)))
        elif monotone_pruning is None:
            prune = monotone_pruning_for(spec)
        else:
            prune = bool(monotone_pruning)
        found = search(frame, objective=measured, method="kairos+", monotone_pruning=prune)
        to_opt = found.evaluations_to_reach(best, tolerance=tol)
        pruned = (
            found
            if prune
            else search(frame, objective=measured, method="kairos+", monotone_pruning=True)
        )
        pruned_to = pruned.evaluations_to_reach(best, tolerance=tol)
        rows.append(
            {
                "scheme": scheme,
                "distributor": TUNED_DRS if specs[scheme] is None else spec,
                "config": {t: n for t, n in zip(types, optimum, strict=True) if n},
                "rate": best,
                "evaluations": found.evaluations,
                "evaluations_to_optimum": to_opt if to_opt else math.nan,
                "share_to_optimum": to_opt / len(space) if to_opt else math.nan,
                "kairos_plus_rate": found.best_value,
                "monotone_pruning": prune,
                "pruned_to_optimum": pruned_to if pruned_to else math.nan,
                "non_monotone": len(non_monotone_pairs(measured, rel_tol=noise)),
                "above_bound": sum(measured[k] > bound[k] * (1 + noise) for k in space),
            }
        )
    out = pd.DataFrame(rows).set_index("scheme")
    out.attrs.update({"model": model, "size": size, "qos_ms": qos, "space_points": len(space)})
    return out


def best_homogeneous(
    source: Any,
    model: str = "rm2",
    *,
    size: Size = "small",
    qos_ms: float | None = None,
    distributor: str = "ribbon",
    budget: float | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """The homogeneous pools of Fig. 8: for each instance type, as many instances as the budget
    affords (within instance.json's maximum), their allowable throughput, and that throughput
    scaled up to the whole budget (the paper compensates the budget a pool leaves unused).
    One row per type, best (``scaled_rate``) first. The pools' searches go through
    ``servelab.sweep``: ``processes`` (default 1: in this process), ``backend`` ("local" or
    "ray") and ``ray_address`` as there."""
    folder, run, qos = _comparison(source, model, size, qos_ms)
    space = read_instance_json(folder / INSTANCE_JSON, budget=budget)
    prof = load_profile(folder, model)
    pools = []
    for hw, price, most in zip(space.types, space.prices, space.max_count, strict=True):
        n = min(int(most), math.floor(space.budget / price + 1e-9)) if price > 0 else int(most)
        if n < 1 or not prof.has_latency(hw, model):
            continue
        pools.append((hw, n, price))
    shared = {"folder": folder, "distributor": distributor, "search": _evaluate_kw(model, qos, run)}
    try:
        rates = sweep(
            _pool_rate, [{"hw": hw, "count": n} for hw, n, _ in pools], processes=processes,
            backend=backend, ray_address=ray_address, shared=shared, retries=0, progress=False,
        )  # fmt: skip
    except SweepError as error:  # raise what the search raised, as before
        raise error.__cause__ from None
    rows = []
    for (hw, n, price), rate in zip(pools, rates["rate"] if pools else [], strict=True):
        cost = n * price
        scale = space.budget / cost if cost > 0 else 1.0
        rows.append(
            {"type": hw, "count": n, "cost": cost, "rate": rate, "scaled_rate": rate * scale}
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


def _pool_rate(
    hw: str, count: int, folder: Path, distributor: str, search: Mapping[str, Any]
) -> dict[str, float]:
    """One homogeneous pool's allowable throughput (at module level: sweep workers import it)."""
    return {"rate": evaluate_config(folder, {hw: count}, distributor, **search).rate}


def compare_with_homogeneous(
    source: Any,
    model: str = "rm2",
    *,
    size: Size = "small",
    qos_ms: float | None = None,
    kairos: str = "kairos",
    formula: str = "artifact",
    budget: float | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> dict[str, Any]:
    """Fig. 8 for one model: Kairos (its one-shot configuration from the upper bounds, ``formula``,
    served by ``kairos``; the budget it leaves unused is not compensated) against the best
    homogeneous pool under the same budget (scaled up to the whole budget). ``processes``,
    ``backend`` and ``ray_address``: where the pools' searches run (see ``best_homogeneous``).
    Fig. 15: ``budget`` ($/h) replaces instance.json's; a ``qos_ms`` given also derives the bounds
    for that target from the latency data (default: the artifact's allocator_profile.json, made
    for Table 3's targets)."""
    folder, run, qos = _comparison(source, model, size, qos_ms)
    bound_args: dict[str, Any] = {} if qos_ms is None else {"qos_ms": qos}
    if budget is not None:
        bound_args["budget"] = budget
    choice = select_config(folder, model, formula=formula, **bound_args)
    config = {t: n for t, n in choice.config.items() if n}
    found = evaluate_config(folder, config, kairos, **_evaluate_kw(model, qos, run))
    pools = best_homogeneous(
        folder, model, size=size, qos_ms=qos, budget=budget, processes=processes,
        backend=backend, ray_address=ray_address,
    )  # fmt: skip
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
    models: Sequence[str] = MODELS,
    *,
    size: Size = "full",
) -> pd.DataFrame:
    """Both comparisons for every model, ours beside the paper's claims: one row per model
    (:func:`~servelab.kairos.paper.fidelity_table`)."""
    fig9, fig8 = {}, {}
    for model in models:
        fig9[model] = compare_distributors(source, model, size=size)
        fig8[model] = compare_with_homogeneous(source, model, size=size)
    return fidelity_table(fig9, fig8)
