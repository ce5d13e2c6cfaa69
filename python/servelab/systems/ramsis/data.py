"""Where the RAMSIS artifact's data lives, and the readers of its files.

The data folder (``../shared/data/ramsis``) holds ``derived/`` (the latency and accuracy tables
the tasks are built from, ``tasks.py``), ``twitter_trace/`` (the load trace) and ``policy_gen/``
(the artifact's ModelSwitching tables). :func:`data_dir` finds it: the folder given, else
``$SERVELAB_RAMSIS_DATA``, else ``../shared/data/ramsis`` next to a source checkout.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ... import textio
from .paper import PERCENTILE, TASKS
from .tasks import TaskData, image_task, text_task
from .trace import LoadTrace

DATA_ENV = "SERVELAB_RAMSIS_DATA"
#: ../shared/data/ramsis beside the repository of a source checkout.
CHECKOUT_DATA = Path(__file__).resolve().parents[5] / "shared" / "data" / "ramsis"
TWITTER_TRACE = Path("twitter_trace") / "twitter_04_25_norm.txt"
#: The artifact's ModelSwitching tables for the image task at 150 ms, per worker count.
ARTIFACT_MS_FOLDER = "policy_gen/image_cloud_cpu_ModelSwitching_instances-{workers}_150ms_0.01"
_POLICY_FILE = re.compile(r"^test_rate-([0-9.eE+-]+)_pi\.json$")
# The derived tables a task is read from: a change to either reloads the task.
_TASK_FILES = ("mdp_latency_table.csv", "accuracy.csv")


def data_dir(data: str | os.PathLike[str] | None = None) -> Path:
    """The RAMSIS data folder (with ``derived/``, ``twitter_trace/``): ``data``, else
    $SERVELAB_RAMSIS_DATA, else ../shared/data/ramsis next to a source checkout."""
    if data is None:
        data = os.environ.get(DATA_ENV) or None
    if data is None:
        if (CHECKOUT_DATA / "derived").is_dir():
            return CHECKOUT_DATA
        raise ValueError(
            f"data=None: give the RAMSIS data folder (with derived/ and twitter_trace/) or set "
            f"${DATA_ENV}"
        )
    path = Path(data)
    if not (path / "derived").is_dir():
        raise FileNotFoundError(f"data={str(path)!r} has no derived/ folder (the RAMSIS data set)")
    return path.resolve()


def get_task(task: str | TaskData, data: str | os.PathLike[str] | None = None) -> TaskData:
    """The task ("image" or "text") of the data folder as the evaluation uses it (p95 latency),
    read once per folder and version of its files; a TaskData is returned as is."""
    if isinstance(task, TaskData):
        return task
    if task not in TASKS:
        raise KeyError(f"task={task!r} is not one of {', '.join(TASKS)}")
    root = data_dir(data)
    stamp = tuple((root / "derived" / name).stat().st_mtime_ns for name in _TASK_FILES)
    return _read_task(task, root, stamp)


# Keyed by value (name, folder, file times) and bounded: a few tasks of a few data folders.
@functools.lru_cache(maxsize=8)
def _read_task(name: str, root: Path, stamp: tuple[int, ...]) -> TaskData:
    read = image_task if name == "image" else text_task
    return read(root, percentile=PERCENTILE)


def read_load_trace(path: str | os.PathLike[str]) -> LoadTrace:
    """Reads a ``t_seconds load`` file (the artifact's Twitter trace format).

    The times must start at 0 and be equally spaced; loads must be positive. Errors name the file
    and line.
    """
    path = Path(path)
    times, loads = [], []
    text = textio.read_text(path, what="load trace file")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            t, load = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(
                f"{path}:{number}: {line!r} is not 't_seconds load' (two numbers)"
            ) from None
        if not np.isfinite(t):  # float() reads nan, inf and 1e999 as numbers
            raise ValueError(f"{path}:{number}: t_seconds={parts[0]} must be a finite number")
        if not np.isfinite(load) or load <= 0:
            raise ValueError(
                f"{path}:{number}: load={parts[1]} must be a positive number of queries/s"
            )
        times.append(t)
        loads.append(load)
    if not times:
        raise ValueError(f"{path}: no data lines")
    t = np.asarray(times)
    if t[0] != 0:
        raise ValueError(f"{path}:1: the first time is {t[0]}, it must be 0")
    if len(t) > 1:
        gaps = np.diff(t)
        bad = np.flatnonzero(~np.isclose(gaps, gaps[0]) | (gaps <= 0))
        if bad.size:
            raise ValueError(
                f"{path}: times must be equally spaced and increasing; line {bad[0] + 2} breaks it"
            )
    return LoadTrace(t, np.asarray(loads), str(path))


def twitter_trace(data: str | os.PathLike[str] | None = None) -> LoadTrace:
    """The Twitter load trace of the data folder (``twitter_trace/twitter_04_25_norm.txt``)."""
    return read_load_trace(data_dir(data) / TWITTER_TRACE)


def resolve_trace(trace: Any, data: str | os.PathLike[str] | None = None) -> LoadTrace:
    """A LoadTrace from True or "twitter" (the data folder's Twitter trace), a LoadTrace, or the
    path of a trace file."""
    if trace is True or trace == "twitter":
        return twitter_trace(data)
    if isinstance(trace, LoadTrace):
        return trace
    if isinstance(trace, str | os.PathLike):
        return read_load_trace(trace)
    raise ValueError(f"trace={trace!r} must be True/'twitter', a LoadTrace or a trace file path")


def read_policy_gen(folder: str | os.PathLike[str], models: Sequence[str]) -> dict[float, str]:
    """The artifact's ModelSwitching table: ``folder/test_rate-<r>_pi.json`` files holding
    ``{"-1": k}``, k the 1-based index into ``models``; r in queries per microsecond. Returns
    {load in queries/s: model name}. Errors name the file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"policy folder {folder} does not exist")
    out: dict[float, str] = {}
    for path in sorted(folder.iterdir()):
        match = _POLICY_FILE.match(path.name)
        if not match:
            continue
        content = textio.read_json(path, what="policy_gen JSON file")
        k = content.get("-1") if isinstance(content, dict) else None
        if isinstance(k, bool) or not isinstance(k, int | str):
            raise ValueError(f'{path}: expected {{"-1": <model number>}}, got {content!r:.60}')
        try:
            k = int(k)
        except ValueError:
            raise ValueError(f'{path}: "-1"={k!r:.40} is not a model number') from None
        if not 1 <= k <= len(models):
            raise ValueError(f"{path}: model number {k} is not in 1..{len(models)}")
        out[round(float(match.group(1)) * 1e6, 6)] = models[k - 1]
    if not out:
        raise ValueError(f"{folder}: no test_rate-<r>_pi.json files")
    return dict(sorted(out.items()))


def read_artifact_ms_tables(
    workers: Sequence[int], data: str | os.PathLike[str] | None = None
) -> dict[int, dict[float, str]]:
    """The artifact's ModelSwitching tables (image task, 150 ms) for each of ``workers``:
    {workers: {load: model}}."""
    root = data_dir(data)
    models = list(get_task("image", root).models)
    return {
        w: read_policy_gen(root / ARTIFACT_MS_FOLDER.format(workers=w), models) for w in workers
    }
