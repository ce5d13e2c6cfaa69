"""Figures of RRL's experiments: convergence curves (Fig. 12-13 style), the region sweep (Fig. 11),
cumulative regret against the oracle, the tail latency's CCDF under an SLO (Fig. 14 style) and
latency and resource share over time under the SLO objective (Fig. 15 style). matplotlib is
imported when a figure is drawn."""

from __future__ import annotations

from typing import Any

import numpy as np


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt  # on use: keeps `import servelab.rrl` light

    return plt.subplots(figsize=(6, 3.5))[1]


def _smooth(values: np.ndarray, window: int) -> np.ndarray:
    window = max(1, min(window, values.size))
    kernel = np.ones(window) / window
    return np.convolve(values, kernel, mode="valid")


def plot_convergence(runs: dict[str, Any], *, window: int = 50, ax: Any = None) -> Any:
    """Per episode, the latency of each method's choice (moving average) and the oracle's."""
    ax = _axes(ax)
    oracle = None
    for method, run in runs.items():
        run = run[0] if isinstance(run, list) else run
        ax.plot(_smooth(run.columns["chosen_ms"], window), label=method)
        oracle = run.columns["oracle_ms"]
    if oracle is not None:
        ax.plot(_smooth(oracle, window), "k--", label="oracle (static best)")
    ax.set_yscale("log")
    ax.set_xlabel("episode")
    ax.set_ylabel("latency, ms (moving average)")
    ax.legend()
    return ax


def plot_regret(runs: dict[str, Any], *, ax: Any = None) -> Any:
    """Cumulative regret against the oracle per method."""
    ax = _axes(ax)
    for method, run in runs.items():
        run = run[0] if isinstance(run, list) else run
        ax.plot(run.regret() / 1e3, label=method)
    ax.set_xlabel("episode")
    ax.set_ylabel("cumulative regret, s")
    ax.legend()
    return ax


def plot_region_sweep(table: Any, *, ax: Any = None) -> Any:
    """Fig. 11: steps to converge (left) and final latency ratio to the oracle (right) vs radius."""
    ax = _axes(ax)
    grouped = table.groupby("radius").agg(
        steps=("steps_to_converge", "mean"), ratio=("final_ratio", "mean")
    )
    ax.plot(grouped.index, grouped["steps"], "o-", label="steps to converge")
    ax.set_xlabel("region radius (grid steps)")
    ax.set_ylabel("steps to converge")
    right = ax.twinx()
    right.plot(grouped.index, grouped["ratio"], "s--", color="tab:red", label="latency / oracle")
    right.set_ylabel("final latency / oracle")
    return ax


def _first(run: Any) -> Any:
    return run[0] if isinstance(run, list) else run


def plot_latency_ccdf(runs: dict[str, Any], *, slo_ms: float | None = None, ax: Any = None) -> Any:
    """Fig. 14 style: per method, the CCDF of the chosen configurations' episode latency (the
    objective's: the p95 for "p95" and "slo"), log-log, with the SLO as a vertical line."""
    ax = _axes(ax)
    for method, run in runs.items():
        values = np.sort(_first(run).columns["chosen_ms"])
        above = 1.0 - np.arange(values.size) / values.size  # P(latency >= value)
        ax.step(values, above, where="post", label=method)
    if slo_ms is not None:
        ax.axvline(slo_ms, color="k", linestyle="--", label=f"SLO {slo_ms:.0f} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("episode latency, ms")
    ax.set_ylabel("CCDF")
    ax.legend()
    return ax


def plot_slo_resources(
    runs: dict[str, Any], *, slo_ms: float, window: int = 50, axes: Any = None
) -> Any:
    """Fig. 15 style, for runs of the SLO objective: per episode, the chosen configuration's p95
    latency against the SLO (top) and its resource share (bottom), moving averages."""
    if axes is None:
        import matplotlib.pyplot as plt  # on use: keeps `import servelab.rrl` light

        axes = plt.subplots(2, 1, figsize=(6, 5), sharex=True)[1]
    top, bottom = axes
    for method, run in runs.items():
        run = _first(run)
        top.plot(_smooth(run.columns["chosen_ms"], window), label=method)
        bottom.plot(_smooth(run.resource_share(), window), label=method)
    top.axhline(slo_ms, color="k", linestyle="--", label="SLO")
    top.set_yscale("log")
    top.set_ylabel("p95 latency, ms")
    top.legend()
    bottom.set_xlabel("episode")
    bottom.set_ylabel("resource share")
    return axes
