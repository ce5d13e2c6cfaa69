"""The loop closed: profile an executor, simulate a scenario on that profile, serve the same
scenario for real on the executor, and put the two side by side::

    c = servelab.sim_vs_real("recsys(model='rm2', backend='onednn')", workers=2, utilisation=0.5)
    c.table()        # p50 / p95 / p99 / mean latency and throughput: simulated, measured, error
    c.plot_cdf()     # both latency CDFs on one axis

The scenario is one group of ``workers`` identical workers serving one model, Poisson arrivals at
``utilisation`` x the workers' capacity at the profiled mean latency of one query, and one
scheduler (default ``fcfs``). Both worlds get the same scenario and seed: the same arrivals and,
with the default ``fcfs``, the same dispatch rule. By default the simulator runs on what
:func:`servelab.calibrate` fits from a pilot serving run at the same load (its service times and
the loop's own delays); only the draws differ (from the calibration in the simulator, measured on
the wall clock in the serving loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .calibration import calibrate
from .executors import make_executor
from .profiling import profile as measure_profile
from .profiling import profile_from_run
from .results import Result
from .run import serve, simulate

__all__ = ["WorldComparison", "sim_vs_real"]

#: The rows of WorldComparison.table(): (label, summary path).
COMPARED = (
    ("latency p50 (ms)", ("latency_ms", "p50")),
    ("latency p95 (ms)", ("latency_ms", "p95")),
    ("latency p99 (ms)", ("latency_ms", "p99")),
    ("latency mean (ms)", ("latency_ms", "mean")),
    ("service mean (ms)", ("service_ms", "mean")),
    ("throughput (q/s)", ("throughput_qps",)),
)


def _summary_value(summary: dict[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = summary
    for key in path:
        value = value[key]
    return None if value is None else float(value)


@dataclass
class WorldComparison:
    """One scenario simulated on a measured profile and served for real on the executor."""

    executor: str
    utilisation: float
    rate_qps: float
    profile: Any
    scenario: dict[str, Any]
    simulated: Result
    measured: Result
    warmup_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    def table(self):  # -> pandas.DataFrame
        """One row per metric: ``simulated``, ``measured`` and ``error`` (simulated / measured
        - 1; NaN where the measured value is 0 or missing)."""
        import pandas as pd

        sim = self.simulated.summary(warmup_s=self.warmup_s)
        real = self.measured.summary(warmup_s=self.warmup_s)
        rows = []
        for label, path in COMPARED:
            a, b = _summary_value(sim, path), _summary_value(real, path)
            error = a / b - 1 if a is not None and b else float("nan")
            rows.append({"metric": label, "simulated": a, "measured": b, "error": error})
        return pd.DataFrame(rows).set_index("metric")

    def errors(self) -> dict[str, float]:
        """The relative errors of the latency percentiles and throughput, by metric label."""
        return self.table()["error"].to_dict()

    def plot_cdf(self, ax: Any = None) -> Any:
        """Both worlds' latency CDFs (ms, log x) on ``ax`` (a new figure when None)."""
        import matplotlib.pyplot as plt
        import numpy as np

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        for label, result, style in (
            ("simulated", self.simulated, "-"),
            ("measured", self.measured, "--"),
        ):
            lat = np.sort(result.to_pandas()["latency_ms"].dropna().to_numpy())
            ax.plot(lat, np.arange(1, len(lat) + 1) / max(len(lat), 1), style, label=label)
        ax.set_xscale("log")
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("CDF")
        ax.set_title(f"{self.executor}: {self.utilisation:.0%} utilisation")
        ax.legend()
        return ax


def _fraction(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"{name}={value!r} must be a number strictly between 0 and 1")
    return float(value)


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}={value!r} must be an integer >= 1")
    return value


def sim_vs_real(
    executor: Any,
    *,
    workers: int = 2,
    utilisation: float = 0.5,
    queries: int = 2000,
    size: int = 1,
    scheduler: str = "fcfs",
    slo_ms: float = 1000.0,
    model: str = "model",
    profile: Any = None,
    batches: Sequence[int] | None = None,
    repeats: int = 30,
    warmup: int = 5,
    warmup_s: float = 0.0,
    seed: int = 0,
    progress: bool = False,
    profile_from: str = "calibrate",
    pilot_queries: int | None = None,
    calibration: Any = None,
) -> WorldComparison:
    """Profiles ``executor`` (unless ``profile`` is given), then simulates and serves the same
    scenario and returns both (:class:`WorldComparison`).

    - ``executor``: an executor spec, dict or :func:`servelab.make_executor` result.
    - ``workers`` identical workers (hardware ``"cpu"``) serving ``model``; queries of ``size``
      items; Poisson arrivals at ``utilisation`` x workers / (the profiled mean latency of one
      query), ``queries`` of them; ``scheduler`` any registered spec.
    - ``profile``: a profile to simulate on instead of measuring one (it must cover hardware
      "cpu" and ``model``); else ``servelab.profile(executor, batches=...)`` with ``repeats``
      and ``warmup`` (default batches: ``size`` and the powers of two up to 4 x ``size``, so a
      batching scheduler finds its batches profiled).
    - ``warmup_s``: seconds of both runs left out of the table (the summaries' warmup).
    - ``profile_from``: ``"calibrate"`` (default, below); ``"batches"`` simulates on that profile
      (batches run back to back);
      ``"serve"`` first serves a pilot run of the same scenario (``pilot_queries``, default
      ``queries``, seed + 1) and simulates on the service times it measured
      (:func:`servelab.profile_from_run`, the back-to-back profile filling the batch sizes the
      pilot did not see): the service times at the target load. The offered rate stays the one
      computed from the back-to-back profile. ``"calibrate"`` serves the same pilot and simulates
      on what :func:`servelab.calibrate` fits from it: those service times and the loop's own
      delays (a batch's wake-up, the controller noticing its end, taking up an arrival).
    - ``calibration``: a :class:`servelab.Calibration` taken earlier (another load, another
      run) to simulate on instead of a pilot: the held-out prediction. ``profile`` (or a fresh
      back-to-back profile) still sets the offered rate.
    """
    workers = _positive_int("workers", workers)
    queries = _positive_int("queries", queries)
    size = _positive_int("size", size)
    utilisation = _fraction("utilisation", utilisation)
    if profile_from not in ("batches", "serve", "calibrate"):
        raise ValueError(f"profile_from={profile_from!r} must be 'batches', 'serve' or 'calibrate'")
    pilot_count = _positive_int(
        "pilot_queries", queries if pilot_queries is None else pilot_queries
    )
    built = make_executor(executor) if not hasattr(executor, "describe") else executor
    if profile is None:
        sizes = (
            batches
            if batches is not None
            else sorted({size, *(2**k for k in range(12) if 2**k <= 4 * size)})
        )
        profile = measure_profile(
            built,
            batches=list(sizes),
            repeats=repeats,
            warmup=warmup,
            hardware="cpu",
            model=model,
            price_per_hour=0.0,
            seed=seed,
            progress=progress,
        )
    mean_s = float(profile.latency("cpu", model, [size], "mean")[0])
    if not mean_s > 0:
        raise ValueError(f"the profile's mean latency of {model!r} at size {size} is {mean_s!r} s")
    rate = utilisation * workers / mean_s
    scenario = {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": workers, "models": [model]}],
        "workload": {
            "arrivals": f"poisson(rate={rate!r})",
            "count": queries,
            "apps": [{"name": model, "slo_ms": float(slo_ms), "sizes": f"constant(value={size})"}],
        },
        "scheduler": scheduler,
        "seed": seed,
    }
    meta: dict[str, Any] = {"profile_from": profile_from}
    loop_model = None
    if calibration is not None:
        if not (hasattr(calibration, "profile") and hasattr(calibration, "loop_model")):
            raise ValueError(
                f"calibration={calibration!r} is not a servelab.Calibration (servelab.calibrate)"
            )
        meta["base_profile"] = profile
        profile, loop_model = calibration.profile, calibration.loop_model
        scenario["profile"] = profile
        meta["calibration"] = calibration
        meta["profile_from"] = "calibration"
    elif profile_from in ("serve", "calibrate"):
        pilot_scenario = {**scenario, "seed": seed + 1}
        pilot_scenario["workload"] = {**scenario["workload"], "count": pilot_count}
        pilot = serve(pilot_scenario, executor=built)
        meta["base_profile"] = profile  # back to back: another utilisation's runs start from it
        if profile_from == "serve":
            profile = profile_from_run(pilot, base=profile)
        else:
            calibration = calibrate(pilot, base=profile)
            profile, loop_model = calibration.profile, calibration.loop_model
            meta["calibration"] = calibration
        scenario["profile"] = profile
        meta["pilot_batches"] = int(pilot.workers["batches"].sum())
    if calibration is not None and getattr(calibration, "interference", None):
        simulated = calibration.simulate(scenario)  # its workers on one host, slowing each other
    else:
        simulated = simulate(scenario, loop_model=loop_model)
    measured = serve(scenario, executor=built)
    return WorldComparison(
        executor=built.describe(),
        utilisation=utilisation,
        rate_qps=rate,
        profile=profile,
        scenario=scenario,
        simulated=simulated,
        measured=measured,
        warmup_s=warmup_s,
        meta={"mean_latency_ms": mean_s * 1e3, "size": size, "workers": workers, **meta},
    )
