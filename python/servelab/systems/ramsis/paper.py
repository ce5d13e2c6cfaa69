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


#: The paper's resource savings (abstract, sec. 7.1, on the Twitter trace): how many fewer workers
#: RAMSIS needs for the accuracy of each baseline, in % of the baseline's workers, (average,
#: highest); "both": the average over both baselines (the abstract's 18.77% and 28.28%).
PAPER_SAVINGS: dict[str, dict[str, tuple[float, float]]] = {  # fmt: skip
    "image": {
        "model_switching": (20.01, 50.00),
        "jellyfish": (17.53, 42.86),
        "both": (18.77, 50.00),
    },
    "text": {
        "model_switching": (25.31, 44.44),
        "jellyfish": (31.25, 75.00),
        "both": (28.28, 75.00),
    },
}
#: Fig. 5 keeps only the points whose SLO violation rate is below 5% (sec. 7.1).
FIG5_MAX_VIOLATION = 0.05


def resource_savings(
    frame: Any, *, max_violation: float = FIG5_MAX_VIOLATION, tolerance_pp: float = 0.0
) -> Any:
    """The same accuracy with fewer workers (the paper's abstract and sec. 7.1), from a frame of
    runs over a grid of worker counts (compare_methods' columns: method, workers, slo_ms,
    load_qps, accuracy_per_satisfied_query, violation_rate; several SLOs or loads may be stacked).

    For every baseline run kept in Fig. 5 (violation rate below ``max_violation``) with K workers
    and accuracy A: the fewest workers K' of the grid at which RAMSIS, in the same setting (SLO,
    load or trace), is kept too and reaches A (within ``tolerance_pp`` percentage points); the
    saving is (K - K') / K. One row per baseline run: slo_ms, load_qps (NaN for the trace),
    baseline, workers, accuracy, ramsis_workers and saving (a fraction; NaN when RAMSIS reaches A
    at no worker count of the grid, negative when it needs more). attrs["summary"]: per baseline
    and for both, the mean and highest saving in % over the rows that have one, and their count.
    """
    import numpy as np
    import pandas as pd

    df = frame.copy()
    df["load_qps"] = df["load_qps"].astype(float)
    keys = ["slo_ms", "load_qps"]
    kept = df[df["violation_rate"] < max_violation]
    rows = []
    for setting, group in df.groupby(keys, dropna=False, sort=True):
        ours = kept[
            (kept["slo_ms"] == setting[0])
            & (kept["load_qps"].isna() if pd.isna(setting[1]) else kept["load_qps"] == setting[1])
            & (kept["method"] == "ramsis")
        ].sort_values("workers")
        for baseline in BASELINES:
            base = group[(group["method"] == baseline) & (group["violation_rate"] < max_violation)]
            for r in base.sort_values("workers").itertuples():
                enough = ours[
                    100 * ours["accuracy_per_satisfied_query"]
                    >= 100 * r.accuracy_per_satisfied_query - tolerance_pp
                ]
                k = int(enough["workers"].min()) if len(enough) else None
                rows.append(
                    {
                        "slo_ms": setting[0], "load_qps": setting[1], "baseline": baseline,
                        "workers": int(r.workers),
                        "accuracy": float(r.accuracy_per_satisfied_query),
                        "ramsis_workers": k,
                        "saving": (r.workers - k) / r.workers if k is not None else np.nan,
                    }
                )  # fmt: skip
    out = pd.DataFrame(
        rows,
        columns=["slo_ms", "load_qps", "baseline", "workers", "accuracy", "ramsis_workers",
                 "saving"],
    )  # fmt: skip
    summary = {}
    for name, part in [*((b, out[out["baseline"] == b]) for b in BASELINES), ("both", out)]:
        have = part["saving"].dropna()
        summary[name] = {
            "mean": float(100 * have.mean()) if len(have) else float("nan"),
            "max": float(100 * have.max()) if len(have) else float("nan"),
            "points": int(len(have)),
            "unreached": int(part["saving"].isna().sum()),
        }
    if {"jellyfish", "model_switching"} <= set(summary):
        # The abstract's average is the mean of the two baselines' averages (18.77 = (20.01 +
        # 17.53) / 2), not of the pooled points.
        summary["both"]["mean"] = float(
            np.mean([summary["jellyfish"]["mean"], summary["model_switching"]["mean"]])
        )
    out.attrs["summary"] = summary
    return out


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
