"""Plots of Results (matplotlib). Each function draws on ``ax`` (a new figure when None) and
returns the Axes; functions that compare runs take one Result, a list (labelled by each run's
``meta["scheduler"]``) or a ``{label: Result}`` dict::

    from servelab import plotting
    plotting.latency_cdf({"fifo": fifo, "kairos": kairos}, log_x=True)
    plotting.save_all({"fifo": fifo, "kairos": kairos}, "figures/")
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from .results import COMPLETED, NS_PER_MS, NS_PER_S, Result
from .textio import output_folder

Results = Result | Sequence[Result] | Mapping[str, Result]


def _seconds(name: str, value: Any, *, positive: bool) -> float:
    """A finite number of seconds (> 0, or >= 0); ValueError naming ``name`` and the value."""
    if (
        isinstance(value, bool)
        or not isinstance(value, Real)
        or not math.isfinite(value)
        or (value <= 0 if positive else value < 0)
    ):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name}={value!r} must be a finite number of seconds {bound}")
    return float(value)


def labelled(results: Results) -> dict[str, Result]:
    """{label: Result} from one Result, a list or a dict; list labels come from
    ``meta["scheduler"]``, numbered when two runs share one."""
    if isinstance(results, Result):
        results = [results]
    if isinstance(results, Mapping):
        out = dict(results)
    elif isinstance(results, Sequence) and not isinstance(results, str):
        out = {}
        for i, r in enumerate(results):
            label = str(r.meta.get("scheduler", "")) if isinstance(r, Result) else ""
            label = label or f"run {i}"
            out[label if label not in out else f"{label} #{i}"] = r
    else:
        raise ValueError(f"results={results!r} must be a Result, a list or a dict of Results")
    if not out:
        raise ValueError("results is empty: nothing to plot")
    for label, r in out.items():
        if not isinstance(r, Result):
            raise ValueError(f"results[{label!r}] is a {type(r).__name__}, not a Result")
    return out


def _axes(ax: Axes | None) -> Axes:
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    return ax


def latency_cdf(
    results: Results,
    ax: Axes | None = None,
    *,
    log_x: bool = False,
    slo_ms: float | None = None,
    show_slo: bool = True,
    warmup_s: float = 0.0,
    max_points: int = 2000,
) -> Axes:
    """The latency CDF of each run, as the fraction of ALL its queries finished within x ms
    (so a run that drops queries tops out below 1). The SLO line is at ``slo_ms``, or at each
    app SLO of the runs' meta when None (``show_slo=False``: no line). Big runs are drawn from
    ``max_points`` quantiles."""
    warmup_s = _seconds("warmup_s", warmup_s, positive=False)
    ax = _axes(ax)
    runs = labelled(results)
    slos: set[float] = set()
    for label, r in runs.items():
        c = r.columns
        rows = c["arrival_ns"] >= round(warmup_s * NS_PER_S)
        done = rows & (c["status"] == COMPLETED)
        latency = np.sort((c["finish_ns"][done] - c["arrival_ns"][done]) / NS_PER_MS)
        n = int(np.count_nonzero(rows))
        if latency.size > max_points:
            idx = np.unique(np.linspace(0, latency.size - 1, max_points).round().astype(np.int64))
            x, y = latency[idx], (idx + 1) / n
        else:
            x, y = latency, np.arange(1, latency.size + 1) / max(n, 1)
        ax.step(x, y, where="post", label=label)
        slos.update(app.get("slo_ns", 0) / NS_PER_MS for app in r.meta["apps"])
    if show_slo:
        for i, slo in enumerate(sorted({slo_ms} if slo_ms is not None else slos - {0.0})):
            ax.axvline(
                slo, color="gray", linestyle="--", linewidth=1, label="SLO" if i == 0 else None
            )
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("latency (ms, log scale)" if log_x else "latency (ms)")
    ax.set_ylabel("fraction of queries")
    ax.set_ylim(0, 1.02)
    ax.set_title("Latency CDF")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return ax


def throughput_and_violations_over_time(
    results: Results, ax: Axes | None = None, *, window_s: float = 1.0
) -> Axes:
    """Throughput (completions per second, solid) and arrival rate (dotted) on the left axis,
    and the SLO violation rate per window of arrivals (dashed) on a twin right axis, from
    ``Result.timeseries(window_s)``. Returns the left Axes (the right one is ``ax.right_ax``)."""
    ax = _axes(ax)
    right = ax.twinx()
    for i, (label, r) in enumerate(labelled(results).items()):
        ts = r.timeseries(window_s=window_s)
        color = f"C{i}"
        t = ts.index.to_numpy() + window_s / 2
        ax.plot(t, ts["throughput_qps"], color=color, label=f"{label} throughput")
        ax.plot(t, ts["arrival_rate_qps"], color=color, linestyle=":", linewidth=1)
        right.plot(
            t,
            ts["violation_rate"],
            color=color,
            linestyle="--",
            linewidth=1,
            label=f"{label} violations",
        )
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queries per second")
    right.set_ylabel("SLO violation rate")
    right.set_ylim(0, 1.02)
    # The legend goes outside, right of the right axis, where it cannot cover the data: one
    # entry per run (its colour), then what each line style means.
    handles = [Line2D([], [], color=line.get_color(), label=label) for line, label in
               zip(ax.get_lines()[::2], labelled(results), strict=True)]  # fmt: skip
    handles += [
        Line2D([], [], color="gray", label="throughput (left axis)"),
        Line2D([], [], color="gray", linestyle=":", linewidth=1, label="arrival rate (left axis)"),
        Line2D([], [], color="gray", linestyle="--", linewidth=1, label="SLO violations (right)"),
    ]
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.13, 1.0),
        borderaxespad=0.0,
        fontsize="small",
    )
    ax.set_title(f"Throughput and SLO violations ({window_s:g} s windows)")
    ax.grid(alpha=0.3)
    ax.right_ax = right
    return ax


def busy_fraction(
    result: Result, bins: int = 500, *, start_s: float | None = None, end_s: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each worker's busy fraction in ``bins`` equal time bins: ``(edges_s, fraction)`` with
    fraction of shape (workers, bins), rows in ``result.workers`` order. Exact: each batch adds
    its overlap with every bin (batches of one worker never overlap)."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins={bins!r} must be an integer >= 1")
    lo_ns, hi_ns = _time_range(result, start_s, end_s)
    edges = np.linspace(lo_ns, hi_ns, bins + 1)
    b = result.batches()
    worker = b["worker"].to_numpy()
    start = b["start_ns"].to_numpy().astype(np.float64)
    length = (b["finish_ns"].to_numpy() - b["start_ns"].to_numpy()).astype(np.float64)
    fraction = np.zeros((len(result.workers["worker"]), bins))
    for row, wid in enumerate(result.workers["worker"]):
        sel = worker == wid
        s, d = start[sel], length[sel]  # sorted by start
        if not len(s):
            continue
        done_before = np.concatenate(([0.0], np.cumsum(d)))
        # Busy time up to t: all batches started before the last one that started by t, plus
        # the part of that one already run.
        k = np.searchsorted(s, edges, side="right")
        last = np.maximum(k - 1, 0)
        busy = np.where(k > 0, done_before[last] + np.clip(edges - s[last], 0, d[last]), 0.0)
        fraction[row] = np.diff(busy) / np.diff(edges)
    return edges / NS_PER_S, fraction


def _time_range(result: Result, start_s: float | None, end_s: float | None) -> tuple[int, int]:
    lo_ns = 0 if start_s is None else round(start_s * NS_PER_S)
    hi_ns = result.meta["duration_ns"] if end_s is None else round(end_s * NS_PER_S)
    if hi_ns <= lo_ns:
        raise ValueError(f"end_s={end_s!r} must be after start_s={start_s!r}")
    return lo_ns, hi_ns


def utilisation_timeline(
    result: Result,
    ax: Axes | None = None,
    *,
    start_s: float | None = None,
    end_s: float | None = None,
    max_batches: int = 2000,
    bins: int = 500,
) -> Axes:
    """A Gantt chart of when each worker ran batches (from the start and finish of the
    completed queries), one row per worker, coloured by model. With more than ``max_batches``
    batches in view it shows each worker's busy fraction in ``bins`` time bins instead (darker
    = busier, with a colour bar), which stays readable however many batches there are.
    ``start_s``/``end_s`` zoom in."""
    if not isinstance(result, Result):
        raise ValueError(f"result must be a Result, got {type(result).__name__}")
    ax = _axes(ax)
    lo_ns, hi_ns = _time_range(result, start_s, end_s)
    b = result.batches()
    b = b[(b["finish_ns"] >= lo_ns) & (b["start_ns"] <= hi_ns)]
    worker_ids = result.workers["worker"]
    row_of = {int(w): i for i, w in enumerate(worker_ids)}
    if len(b) > max_batches:
        edges, fraction = busy_fraction(result, bins, start_s=start_s, end_s=end_s)
        cmap = plt.get_cmap("Blues")
        spans = list(zip(edges[:-1], np.diff(edges), strict=True))
        for row in range(len(worker_ids)):
            ax.broken_barh(spans, (row - 0.4, 0.8), facecolors=cmap(fraction[row]))
        mappable = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
        ax.figure.colorbar(mappable, ax=ax, label="busy fraction")
        bin_ms = (hi_ns - lo_ns) / bins / NS_PER_MS
        ax.set_title(f"Worker utilisation per {bin_ms:.3g} ms ({len(b)} batches)")
    else:
        worker = b["worker"].to_numpy()
        start, finish = b["start_ns"].to_numpy(), b["finish_ns"].to_numpy()
        model = b["model"].to_numpy()
        names = result.model_names
        for m in np.unique(model):
            for w in np.unique(worker[model == m]):
                rows = (model == m) & (worker == w)
                spans = list(
                    zip(
                        start[rows] / NS_PER_S, (finish[rows] - start[rows]) / NS_PER_S, strict=True
                    )
                )
                label = names[m] if 0 <= m < len(names) else str(m)
                ax.broken_barh(
                    spans, (row_of[int(w)] - 0.4, 0.8), color=f"C{int(m) % 10}", label=label
                )
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles, strict=True))  # one entry per model
        if unique:
            ax.legend(unique.values(), unique.keys(), loc="upper right", fontsize="small")
        ax.set_title("Worker busy intervals")
    hw = result.workers["hardware"]
    ax.set_yticks(range(len(worker_ids)))
    ax.set_yticklabels(
        [f"{w} ({result.hardware_names[h]})" for w, h in zip(worker_ids, hw, strict=True)]
    )
    ax.set_ylim(-0.6, len(worker_ids) - 0.4)
    ax.set_xlim(lo_ns / NS_PER_S, hi_ns / NS_PER_S)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("worker")
    return ax


def cost_vs_goodput(
    results: Results,
    ax: Axes | None = None,
    *,
    cost: str = "per_1k",
    warmup_s: float = 0.0,
) -> Axes:
    """One point per run: goodput (queries per second that met their deadline) against cost,
    ``cost="per_1k"`` ($ per 1000 completed queries) or ``"total"`` ($ for the run). Up and to
    the left is better."""
    if cost not in ("per_1k", "total"):
        raise ValueError(f"cost={cost!r} must be 'per_1k' or 'total'")
    ax = _axes(ax)
    key = "cost_per_1k_queries" if cost == "per_1k" else "cost_dollars"
    for i, (label, r) in enumerate(labelled(results).items()):
        s = r.summary(warmup_s=warmup_s)
        x, y = s[key], s["goodput_qps"]
        if x is None or y is None:
            continue
        ax.scatter([x], [y], color=f"C{i % 10}", label=label, zorder=3)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 5), fontsize="small")
    ax.set_xlabel("$ per 1000 queries" if cost == "per_1k" else "cost ($)")
    ax.set_ylabel("goodput (queries/s within SLO)")
    ax.set_title("Cost vs goodput")
    ax.grid(alpha=0.3)
    return ax


def save_all(
    results: Results,
    folder: str | Path,
    *,
    window_s: float = 1.0,
    warmup_s: float = 0.0,
    dpi: int = 120,
) -> list[Path]:
    """Writes every plot as PNG into ``folder`` (created if needed): latency_cdf.png,
    throughput_and_violations.png, cost_vs_goodput.png and utilisation_<label>.png per run.
    The latency CDF has a log x axis, so that one run's long tail does not squeeze the others
    into the left edge. Closes the figures it makes and returns the paths written."""
    runs = labelled(results)
    # Every argument before the first file: a bad one must not leave half the plots written.
    _seconds("window_s", window_s, positive=True)
    _seconds("warmup_s", warmup_s, positive=False)
    if isinstance(dpi, bool) or not isinstance(dpi, Real) or not (math.isfinite(dpi) and dpi > 0):
        raise ValueError(f"dpi={dpi!r} must be a number of dots per inch > 0")
    folder = output_folder(folder, field="folder")
    plots: list[tuple[str, Any]] = [
        ("latency_cdf", lambda ax: latency_cdf(runs, ax, warmup_s=warmup_s, log_x=True)),
        (
            "throughput_and_violations",
            lambda ax: throughput_and_violations_over_time(runs, ax, window_s=window_s),
        ),
        ("cost_vs_goodput", lambda ax: cost_vs_goodput(runs, ax, warmup_s=warmup_s)),
    ]
    for label, r in runs.items():
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in label)
        plots.append((f"utilisation_{safe}", lambda ax, r=r: utilisation_timeline(r, ax)))
    written = []
    for name, draw in plots:
        # wider where the legend sits outside, right of the data
        wide = name == "throughput_and_violations"
        fig, ax = plt.subplots(figsize=(11, 4.5) if wide else (8, 4.5))
        try:
            draw(ax)
            fig.tight_layout()
            path = folder / f"{name}.png"
            fig.savefig(path, dpi=dpi)
            written.append(path)
        finally:
            plt.close(fig)
    return written
