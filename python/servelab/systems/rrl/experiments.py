"""Experiments over many tuning runs: methods side by side on the same arrivals (Fig. 12-15 style)
and the region-size sweep (Fig. 11). Each run goes through :func:`servelab.rrl.tune`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .tuning import METHODS, LearnerConfig, TuningRun, tune


def compare_methods(
    space: Any,
    arrivals: Any,
    methods: Sequence[str] = METHODS,
    *,
    seeds: Iterable[int] = (0,),
    learner: LearnerConfig | dict[str, Any] | None = None,
    **tune_kwargs: Any,
) -> dict[str, list[TuningRun]]:
    """method -> one run per seed, every method on the same arrivals (same seed, same episodes)."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed")
    return {
        m: [tune(space, arrivals, m, learner=learner, seed=s, **tune_kwargs) for s in seeds]
        for m in methods
    }


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
    **tune_kwargs: Any,
) -> Any:
    """Fig. 11: convergence steps and the distance from the optimum against the region radius.
    Radius 0 is point-based Q-learning (RRL's degenerate case). A run that never converges counts
    as its full length (``censored``). Returns a DataFrame, one row per (radius, seed)."""
    import pandas as pd  # on use: keeps `import servelab.rrl` light

    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed")
    base = learner if isinstance(learner, LearnerConfig) else LearnerConfig(**(learner or {}))
    rows = []
    for radius in radii:
        if not (isinstance(radius, int | float) and np.isfinite(radius) and radius >= 0):
            raise ValueError(f"radii: {radius!r} is not a finite radius >= 0")
        method = "qlearning" if radius == 0 else "rrl"
        config = (
            base if radius == 0 else LearnerConfig(**{**base.to_dict(), "radius": float(radius)})
        )
        for seed in seeds:
            run = tune(space, arrivals, method, learner=config, seed=seed, **tune_kwargs)
            s = run.summary()
            rows.append(
                {
                    "radius": float(radius),
                    "seed": seed,
                    "region_size": run.mean_region_size,
                    "converged_step": run.converged_step,
                    "censored": run.converged_step < 0,
                    "steps_to_converge": run.converged_step
                    if run.converged_step >= 0
                    else run.steps,
                    "final_ratio": s["final_ratio"],
                    "mean_regret_ms": s["mean_regret_ms"],
                }
            )
    return pd.DataFrame(rows)
