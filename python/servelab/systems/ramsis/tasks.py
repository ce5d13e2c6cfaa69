"""The RAMSIS evaluation's two tasks, built from the artifact's data folder.

``image_task(data)`` gives the image-classification task: the 26 torchvision models of the
artifact pruned to the Pareto front of (accuracy, batch-1 p95 latency) - the paper's 9 models -
and ``text_task(data)`` the 5 BERT models. Latencies come from ``derived/mdp_latency_table.csv``
(the exact p95 table, batches 1..32, that the artifact feeds its MDP and its simulator), accuracies
from ``derived/accuracy.csv`` as fractions. ``data`` is the artifact's data folder (the one with
``derived/``).
"""

from __future__ import annotations

import csv
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ... import _core, profiles, textio
from ...profiles import Profile

#: The hardware name of the artifact's (single) worker type.
HARDWARE = "cloud_cpu"

#: The paper's image models (Sec. 4.3.3, NOTES.md), fastest first.
IMAGE_MODELS: tuple[str, ...] = (
    "shufflenet_v2_x0_5",
    "mobilenet_v3_large",
    "efficientnet_b0",
    "efficientnet_b2",
    "efficientnet_b3",
    "efficientnet_b4",
    "efficientnet_v2_s",
    "efficientnet_v2_m",
    "efficientnet_v2_l",
)
TEXT_MODELS: tuple[str, ...] = ("bert_tiny", "bert_mini", "bert_small", "bert_medium", "bert_base")


@dataclass(frozen=True)
class TaskData:
    """One task's models: the latency table the MDP reads and the same numbers as a Profile.

    ``digest`` identifies the content (table, profile, SLOs): what is generated from a task is
    cached under it, so equal tasks share it. Treat the table and profile as read-only.
    """

    name: str  # "image" or "text"
    models: tuple[str, ...]  # ascending accuracy (= ascending latency on the front)
    table: _core.ramsis.LatencyTable
    profile: Profile  # hardware "cloud_cpu", one fixed latency per (model, batch)
    slos_ms: tuple[float, ...]  # the paper's SLOs for the task
    percentile: int
    digest: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        h = hashlib.sha256()
        h.update(repr((self.name, self.models, self.slos_ms, self.percentile)).encode())
        h.update(repr(list(self.table.models)).encode())
        h.update(np.asarray(self.table.accuracy, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(self.table.latency_s, dtype=np.float64).tobytes())
        h.update(profiles.dumps(self.profile, indent=None).encode())
        object.__setattr__(self, "digest", h.hexdigest())  # frozen: set once, here

    @property
    def hardware(self) -> str:
        return HARDWARE


def _derived(data: str | os.PathLike[str]) -> Path:
    root = Path(data)
    if (root / "ramsis" / "derived").is_dir() and not (root / "derived").is_dir():
        root = root / "ramsis"
    derived = root / "derived"
    if not (derived / "mdp_latency_table.csv").is_file():
        raise FileNotFoundError(
            f"data={str(data)!r}: no derived/mdp_latency_table.csv (give the RAMSIS data folder)"
        )
    return derived


def _read_table(derived: Path, folder: str, percentile: int) -> tuple[dict, dict]:
    latency: dict[str, dict[int, float]] = {}
    path = derived / "mdp_latency_table.csv"
    with textio.open_text(path, what="latency table CSV file") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if row["task"] != folder or int(row["percentile"]) != percentile:
                continue
            try:
                batch, us = int(row["batch_size"]), float(row["latency_us"])
            except ValueError:
                raise ValueError(f"{path}:{line}: bad batch_size or latency_us in {row}") from None
            latency.setdefault(row["model"], {})[batch] = us / 1e6
    if not latency:
        raise ValueError(f"{path}: no rows for task {folder!r} at percentile {percentile}")
    accuracy: dict[str, float] = {}
    with textio.open_text(derived / "accuracy.csv", what="accuracy CSV file") as f:
        for row in csv.DictReader(f):
            accuracy[row["model"]] = float(row["top1_accuracy_pct"]) / 100.0
    return latency, accuracy


def _task(
    name: str,
    data: str | os.PathLike[str],
    folder: str,
    slos_ms: tuple[float, ...],
    percentile: int,
    models: tuple[str, ...] | None,
) -> TaskData:
    if percentile not in (90, 95):
        raise ValueError(f"percentile={percentile!r}: the derived table has 90 and 95")
    latency, accuracy = _read_table(_derived(data), folder, percentile)
    names = [m for m in latency if m in accuracy] if models is None else list(models)
    rows_m, rows_b, rows_s = [], [], []
    for m in names:
        if m not in latency:
            raise KeyError(f"model {m!r} has no latency for task {folder!r}")
        if m not in accuracy:
            raise KeyError(f"model {m!r} has no accuracy in derived/accuracy.csv")
        for b, s in sorted(latency[m].items()):
            rows_m.append(m)
            rows_b.append(b)
            rows_s.append(s)
    full = _core.ramsis.LatencyTable.from_rows(
        names, [accuracy[m] for m in names], rows_m, rows_b, rows_s
    )
    table = full.pareto_front() if models is None else full
    profile = _profile(table, f"RAMSIS artifact, {folder}, p{percentile} latency (derived table)")
    return TaskData(name, tuple(table.models), table, profile, slos_ms, percentile)


def _profile(table: _core.ramsis.LatencyTable, description: str) -> Profile:
    """The table as a Profile: one fixed latency per (model, batch) on HARDWARE, and accuracies."""
    profile = Profile(description)
    profile.add_hardware(HARDWARE)
    profile.set_price(HARDWARE, 0.0)
    lat = table.latency_s
    for i, m in enumerate(table.models):
        for b in range(table.max_batch):
            profile.set_latency(HARDWARE, m, b + 1, samples_s=[float(lat[i, b])])
        profile.set_accuracy(m, table.accuracy[i])
    return profile


def task_from_table(task: TaskData, table: _core.ramsis.LatencyTable) -> TaskData:
    """``task`` (its name, SLOs and percentile) over another model table: a subset
    (``task.table.select([...])``, the three models of the paper's Fig. 12) or synthetic models
    (``task.table.interpolated(0.005)``: the 60 image models of Fig. 8, interpolated on the front
    in 0.5% accuracy steps)."""
    profile = _profile(
        table, f"RAMSIS {task.name} task, {len(table.models)} models, p{task.percentile} latency"
    )
    return TaskData(task.name, tuple(table.models), table, profile, task.slos_ms, task.percentile)


def image_task(
    data: str | os.PathLike[str],
    *,
    percentile: int = 95,
    models: tuple[str, ...] | list[str] | None = None,
) -> TaskData:
    """The image task: the Pareto front of the artifact's 26 models (the paper's 9), or `models`."""
    return _task(
        "image",
        data,
        "image_cloud_cpu",
        (150.0, 300.0, 500.0),
        percentile,
        tuple(models) if models else None,
    )


def text_task(
    data: str | os.PathLike[str],
    *,
    percentile: int = 95,
    models: tuple[str, ...] | list[str] | None = None,
) -> TaskData:
    """The text task: the 5 BERT models (all on their front), or `models`."""
    return _task(
        "text",
        data,
        "text_cloud_cpu",
        (100.0, 200.0, 300.0),
        percentile,
        tuple(models) if models else None,
    )
