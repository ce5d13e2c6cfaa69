"""The RAMSIS paper's and artifact's settings, its reported figures, and our comparison with them.

The evaluation's settings (sec. 7 and the artifact's ``run_sim.py``): the latency statistic, the
load grids, the run lengths, the methods and tasks. ``ARTIFACT_GAINS`` is what the artifact's
``plot.py`` prints; :func:`accuracy_gains` computes the same figure from our runs and
:func:`format_evaluation` prints ours beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The statistic RAMSIS, its baselines and the artifact's simulator use for latency.
PERCENTILE = 95
#: The artifact's policy grid for the trace: 200..4000 queries/s in steps of 200.
POLICY_LOADS: tuple[float, ...] = tuple(200.0 * i for i in range(1, 21))
#: The constant loads of the paper's Fig. 6: 400..4000 queries/s in steps of 400.
CONSTANT_LOADS: tuple[float, ...] = tuple(400.0 * i for i in range(1, 11))
#: How long each constant-load run lasts, seconds.
CONSTANT_DURATION_S = 30.0
#: The paper's trace length (the day-long trace scaled down to five minutes, sec. 7), seconds.
TRACE_DURATION_S = 300.0
METHODS = ("ramsis", "jellyfish", "model_switching")
TASKS = ("image", "text")
BASELINES = ("jellyfish", "model_switching")

#: What the artifact's plot.py prints (appendix A.4.2, image task, SLO 150 ms): RAMSIS's accuracy
#: gain in percentage points, (average, highest), on the Twitter trace at 60/70/80 workers and at
#: constant loads 400..4000 queries/s with 60 workers.
ARTIFACT_GAINS: dict[str, dict[str, tuple[float, float]]] = {
    "trace": {"jellyfish": (5.70, 8.07), "model_switching": (3.48, 4.63)},
    "constant": {"jellyfish": (3.70, 15.04), "model_switching": (1.84, 6.71)},
}


@dataclass
class EvaluationPart:
    """One panel of the evaluation: a task, an SLO and a workload over its configurations."""

    task: str
    slo_ms: float
    workload: str  # "trace" or "constant"
    frame: Any  # compare_methods' DataFrame
    gains: dict[str, dict[str, float]]
    gains_satisfiable: dict[str, dict[str, float]]
    artifact: dict[str, tuple[float, float]] | None = None  # ARTIFACT_GAINS where they apply


def artifact_gains(task: str, slo_ms: float, workload: str, workers: Sequence[int]) -> Any:
    """ARTIFACT_GAINS[workload] where the artifact reports that panel (image, 150 ms, 60/70/80
    workers on the trace or 60 at constant load), else None."""
    if task == "image" and slo_ms == 150.0 and tuple(workers) in ((60, 70, 80), (60,)):
        return ARTIFACT_GAINS[workload]
    return None


def accuracy_gains(frame: Any, *, only_satisfiable: bool = False) -> dict[str, dict[str, float]]:
    """RAMSIS's accuracy gain over each baseline in percentage points, as the artifact's plot.py
    computes it: per configuration (workers, load) RAMSIS minus the baseline, then the average and
    the highest. ``frame`` is compare_methods' DataFrame; ``only_satisfiable`` keeps the
    configurations it marked so."""
    df = frame[frame["satisfiable"]] if only_satisfiable else frame
    wide = df.pivot_table(
        index=["workers", "load_qps"], columns="method", values="accuracy_per_satisfied_query",
        dropna=False,
    ) if df["load_qps"].notna().any() else df.pivot_table(
        index="workers", columns="method", values="accuracy_per_satisfied_query"
    )  # fmt: skip
    out = {}
    for baseline in BASELINES:
        if "ramsis" not in wide or baseline not in wide:
            continue
        diff = 100 * (wide["ramsis"] - wide[baseline]).dropna()  # fractions -> percentage points
        out[baseline] = {
            "mean": float(diff.mean()) if len(diff) else float("nan"),
            "max": float(diff.max()) if len(diff) else float("nan"),
            "min": float(diff.min()) if len(diff) else float("nan"),
            "configurations": int(len(diff)),
        }
    return out


def format_evaluation(parts: Sequence[EvaluationPart]) -> str:
    """The evaluation as text: per panel, each configuration's accuracy and violation rate by
    method (in %), then RAMSIS's gains (all configurations and the satisfiable ones) beside the
    artifact's where it reports them."""
    lines = []
    for p in parts:
        lines.append(f"== {p.task}, SLO {p.slo_ms:g} ms, {p.workload}")
        key = "workers" if p.workload == "trace" else "load_qps"
        lines.append(
            f"{key:>9} {'sat':>4} " + " ".join(f"{m + ' acc% / viol%':>32}" for m in METHODS)
        )
        for value, group in p.frame.groupby(key, sort=True):
            cells = []
            for m in METHODS:
                row = group[group["method"] == m]
                if row.empty:
                    cells.append(f"{'-':>32}")
                    continue
                acc = row["accuracy_per_satisfied_query"].iloc[0]
                viol = row["violation_rate"].iloc[0]
                cells.append(f"{100 * acc:>22.2f} / {100 * viol:>7.3f}")
            sat = "yes" if bool(group["satisfiable"].iloc[0]) else "no"
            lines.append(f"{value:>9g} {sat:>4} " + " ".join(cells))
        for baseline in BASELINES:
            g, gs = p.gains.get(baseline), p.gains_satisfiable.get(baseline)
            if g is None:
                continue
            text = (
                f"  RAMSIS vs {baseline}: mean {g['mean']:+.2f} max {g['max']:+.2f} pp "
                f"(satisfiable: mean {gs['mean']:+.2f}, min {gs['min']:+.2f})"
            )
            if p.artifact is not None:
                mean, best = p.artifact[baseline]
                text += f"; artifact: mean {mean:+.2f} max {best:+.2f}"
            lines.append(text)
    return "\n".join(lines)
