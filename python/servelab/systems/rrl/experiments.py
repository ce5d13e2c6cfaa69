"""Experiments over many tuning runs: methods side by side on the same arrivals (Fig. 12-15 style)
and the region-size sweep (Fig. 11). Each run goes through :func:`servelab.rrl.tune`; the runs are
independent points of ``servelab.sweep`` (``processes``, ``backend``, ``ray_address`` as there), so
they may run in worker processes or on Ray and give the same runs as in this process."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Real
from typing import Any

import numpy as np

from ... import _progress
from ... import workload as _workload
from ...sweeps import SweepError, sweep
from .sim_tuning import tune_simulated
from .tuning import METHODS, ConfigSpace, LearnerConfig, TuningRun, _learner, tune

#: where each episode is served: the episode model (``tune``, the figures) or servelab.simulate
#: (``tune_simulated``: the same steps, milliseconds per episode instead of microseconds)
WORLDS = {"episodes": tune, "simulate": tune_simulated}

#: TuningRun fields a sweep worker sends back (the space stays here: it does not pickle)
_RUN_FIELDS = (
    "method", "objective", "slo_ms", "columns", "oracle", "converged_step", "mean_region_size",
    "states", "state_width_qps", "settings",
)  # fmt: skip


def portable_space(space: ConfigSpace) -> tuple[str, list[tuple[str, list[int]]]]:
    """A ConfigSpace as (kind, knobs): what ConfigSpace(kind, knobs) rebuilds in another process."""
    if not isinstance(space, ConfigSpace):
        raise ValueError(f"space={space!r} must be a servelab.rrl.ConfigSpace")
    return space.kind, [(name, list(values)) for name, values in space.knobs]


def portable_arrivals(arrivals: Any) -> Any:
    """An arrival process in a form that pickles: a spec string as is; a Replay (the artifact's
    trace) as its timestamps and period; any other process as the spec it describes itself by."""
    if isinstance(arrivals, str):
        return arrivals
    if isinstance(arrivals, _workload.Replay):
        return ("replay", np.asarray(arrivals.timestamps_s), arrivals.period_s)
    if isinstance(arrivals, _workload.ArrivalProcess):
        spec = arrivals.describe()
        if _workload.make_arrival_process(spec).describe() != spec:
            raise ValueError(f"arrivals={spec!r} does not rebuild from its description")
        return spec
    raise ValueError(f"arrivals={arrivals!r} must be an ArrivalProcess or a spec string")


def _listed(name: str, values: Any, what: str) -> list[Any]:
    """``values`` as a non-empty list; ValueError naming ``name`` for a string, a scalar or an
    empty sequence (an empty sweep would end in a KeyError of an empty DataFrame)."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValueError(f"{name}={values!r} must be a list of {what}")
    out = list(values)
    if not out:
        raise ValueError(f"{name}={values!r} is empty: give at least one of the {what}")
    return out


def _rebuild_arrivals(arrivals: Any) -> Any:
    if isinstance(arrivals, tuple):
        _, times, period = arrivals
        return _workload.Replay(times, period)
    return arrivals


def _tune_point(
    method: str, seed: int, radius: float | None, space: Any, arrivals: Any,
    learner: dict[str, Any], tune_kwargs: dict[str, Any], world: str,
) -> dict[str, Any]:  # fmt: skip
    """One tuning run of a sweep (module level: sweep workers import it)."""
    config = learner if radius is None else {**learner, "radius": radius}
    run = WORLDS[world](ConfigSpace(*space), _rebuild_arrivals(arrivals), method, learner=config,
                        seed=seed, **tune_kwargs)  # fmt: skip
    # One non-dict value: sweep would flatten a dict into a column per key.
    return {"run": tuple(getattr(run, k) for k in _RUN_FIELDS)}


def _sweep_runs(
    space: ConfigSpace, arrivals: Any, points: list[dict[str, Any]], learner: Any,
    tune_kwargs: dict[str, Any], processes: int, backend: str, ray_address: str | None,
    world: str, progress: bool | None = None, desc: str | None = None,
) -> list[TuningRun]:  # fmt: skip
    if world not in WORLDS:
        raise ValueError(f"world={world!r} must be one of {', '.join(WORLDS)}")
    show = _progress.wanted(progress)
    shared = {
        "space": portable_space(space), "arrivals": portable_arrivals(arrivals),
        "learner": _learner(learner).to_dict(), "tune_kwargs": dict(tune_kwargs), "world": world,
    }  # fmt: skip
    try:
        frame = sweep(
            _tune_point, points, processes=processes, backend=backend, ray_address=ray_address,
            shared=shared, retries=0, progress=show, desc=desc,
        )  # fmt: skip
    except SweepError as error:  # a bad setting: raise what the run raised, as a loop would
        raise error.__cause__ from None
    return [
        TuningRun(space=space, **dict(zip(_RUN_FIELDS, raw, strict=True))) for raw in frame["run"]
    ]


def compare_methods(
    space: Any,
    arrivals: Any,
    methods: Sequence[str] = METHODS,
    *,
    seeds: Iterable[int] = (0,),
    learner: LearnerConfig | dict[str, Any] | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    world: str = "episodes",
    progress: bool | None = None,
    **tune_kwargs: Any,
) -> dict[str, list[TuningRun]]:
    """method -> one run per seed, every method on the same arrivals (same seed, same episodes).
    The runs are points of ``servelab.sweep``: ``processes`` (default 1: this process),
    ``backend`` ("local" or "ray") and ``ray_address`` as there; the same runs on every backend.
    ``world="simulate"`` serves every episode in ``servelab.simulate`` (:func:`tune_simulated`:
    every method and objective on the CPU space, noise-free) instead of the episode model.
    ``progress`` (default None: when standard error is a terminal or in a notebook) shows a bar
    of the runs done; ``False`` hides it, ``True`` forces it."""
    seeds = _listed("seeds", seeds, "seeds")
    methods = _listed("methods", methods, f"methods ({', '.join(METHODS)})")
    repeated = sorted({m for m in methods if methods.count(m) > 1})
    if repeated:
        raise ValueError(f"methods={methods!r} repeats {', '.join(map(repr, repeated))}")
    points = [{"method": m, "seed": s, "radius": None} for m in methods for s in seeds]
    runs = _sweep_runs(space, arrivals, points, learner, tune_kwargs, processes, backend,
                       ray_address, world, progress, "tuning runs")  # fmt: skip
    return {m: runs[i * len(seeds) : (i + 1) * len(seeds)] for i, m in enumerate(methods)}


def regret_table(runs: dict[str, list[TuningRun]]) -> Any:
    """One row per (method, seed): the run's summary (pandas DataFrame)."""
    import pandas as pd  # on use: keeps `import servelab.rrl` light

    rows = []
    for method, method_runs in runs.items():
        for run in method_runs:
            rows.append({"method": method, "seed": run.settings["seed"], **run.summary()})
    return pd.DataFrame(rows)


def region_sweep(
    space: Any,
    arrivals: Any,
    radii: Sequence[float] = (0, 1, 1.5, 2, 3),
    *,
    seeds: Iterable[int] = (0, 1, 2),
    learner: LearnerConfig | dict[str, Any] | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    world: str = "episodes",
    progress: bool | None = None,
    **tune_kwargs: Any,
) -> Any:
    """Fig. 11: convergence steps and the distance from the optimum against the region radius.
    Radius 0 is point-based Q-learning (RRL's degenerate case). A run that never converges counts
    as its full length (``censored``). Returns a DataFrame, one row per (radius, seed). The runs
    are points of ``servelab.sweep`` (``processes``, ``backend``, ``ray_address``, ``world``,
    ``progress``: see :func:`compare_methods`)."""
    import pandas as pd  # on use: keeps `import servelab.rrl` light

    seeds = _listed("seeds", seeds, "seeds")
    points = []
    for radius in _listed("radii", radii, "region radii (0: Q-learning)"):
        if isinstance(radius, bool) or not (
            isinstance(radius, Real) and np.isfinite(radius) and radius >= 0
        ):
            raise ValueError(f"radii: {radius!r} is not a finite radius >= 0")
        method = "qlearning" if radius == 0 else "rrl"
        r = None if radius == 0 else float(radius)
        points += [{"method": method, "seed": seed, "radius": r} for seed in seeds]
    runs = _sweep_runs(space, arrivals, points, learner, tune_kwargs, processes, backend,
                       ray_address, world, progress, "tuning runs")  # fmt: skip
    rows = []
    for point, run in zip(points, runs, strict=True):
        s = run.summary()
        rows.append(
            {
                "radius": point["radius"] or 0.0,
                "seed": point["seed"],
                "region_size": run.mean_region_size,
                "converged_step": run.converged_step,
                "censored": run.converged_step < 0,
                "steps_to_converge": run.converged_step if run.converged_step >= 0 else run.steps,
                "final_ratio": s["final_ratio"],
                "mean_regret_ms": s["mean_regret_ms"],
            }
        )
    return pd.DataFrame(rows)
