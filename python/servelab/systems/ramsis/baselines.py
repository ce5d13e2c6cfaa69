"""RAMSIS's baselines (paper sec. 7): Jellyfish+ and ModelSwitching, as servelab schedulers.

Both are load-granular: one (model, largest batch) per load, served from an in-order central
queue from which idle workers (lowest id first) take the oldest queries, as many as the batch
allows (adaptive batching). The load is known (``load_qps``) or estimated over the last 0.5 s and
rounded up to the smallest of ``loads``.

- :func:`jellyfish`: the most accurate model whose throughput at some batch exceeds the per-worker
  load by 5% with a latency within half the SLO, with the largest such batch.
- :func:`model_switching`: the model of a choice table built by :func:`model_switching_table`,
  which simulates every model at every load (constant Poisson load, fixed p95 service times) and
  keeps the most accurate one whose violation rate stays below 1% (its p99 response latency within
  the SLO). :func:`read_policy_gen` reads the artifact's tables (its ``policy_gen/`` folder).

Both are also registered by name: ``"jellyfish(loads=[200, 400], slo_ms=150)"``,
``"model_switching(loads=[200, 400], models='efficientnet_b0,mobilenet_v3_large')"``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ... import _core, textio
from ...profiles import Profile

HARDWARE = "cloud_cpu"
_POLICY_FILE = re.compile(r"^test_rate-([0-9.eE+-]+)_pi\.json$")


def jellyfish(
    *,
    loads: Sequence[float] = (),
    load_qps: float = 0.0,
    slo_ms: float = 0.0,
    window_ms: float = 500.0,
) -> _core.Scheduler:
    """Jellyfish+ for servelab.simulate / serve. loads: the grid the estimate is rounded up to
    (empty: the estimate itself); load_qps > 0: a known load; slo_ms = 0: the queries' SLO."""
    return _core.ramsis.jellyfish_scheduler(
        loads=[float(x) for x in loads], load_qps=load_qps, slo_ms=slo_ms, window_ms=window_ms
    )


def _table_pairs(table: Any) -> tuple[list[float], list[str]]:
    if isinstance(table, Mapping) and "loads" in table and "models" in table:
        loads, models = list(table["loads"]), list(table["models"])
    elif isinstance(table, Mapping):
        items = sorted((float(k), str(v)) for k, v in table.items())
        loads, models = [k for k, _ in items], [v for _, v in items]
    else:
        raise ValueError(
            f"table={table!r} must be {{load_qps: model}} or model_switching_table()'s result"
        )
    return [float(x) for x in loads], [str(m) for m in models]


def model_switching(
    table: Any,
    *,
    load_qps: float = 0.0,
    slo_ms: float = 0.0,
    window_ms: float = 500.0,
) -> _core.Scheduler:
    """ModelSwitching for servelab.simulate / serve. table: {load_qps: model name} or the result of
    :func:`model_switching_table`; the load (known, or estimated and rounded up to a table load)
    selects the model."""
    loads, models = _table_pairs(table)
    return _core.ramsis.model_switching_scheduler(
        loads, models, load_qps=load_qps, slo_ms=slo_ms, window_ms=window_ms
    )


def model_switching_table(
    profile: Profile,
    models: Sequence[str] = (),
    *,
    workers: int,
    slo_ms: float,
    loads: Sequence[float],
    duration_s: float = 300.0,
    target_violation: float = 0.01,
    seed: int = 0,
    replications: int = 1,
    hardware: str = HARDWARE,
    statistic: str = "p95",
    threads: int = 1,
) -> dict[str, Any]:
    """ModelSwitching's offline step: for each load, the most accurate of ``models`` (default:
    every model of ``hardware``) whose simulated violation rate over ``duration_s`` of constant
    Poisson load on ``workers`` workers is below ``target_violation``; the fastest model when
    none is. Models that cannot sustain a load at all are not simulated (their queue grows without
    bound). Returns ``{"loads", "models", "candidates", "violation", "simulated"}``:
    ``violation[i, j]`` is candidate j's rate at load i (NaN where a more accurate model already
    qualified). ``replications`` > 1 pools that many runs (seeds ``seed``, ``seed + 1``, ...) per
    cell, which steadies choices near a model's capacity. The same seed gives the same table,
    whatever ``threads``."""
    return _core.ramsis.model_switching_table(
        profile, hardware, workers=workers, slo_ms=slo_ms, loads=[float(x) for x in loads],
        models=list(models), duration_s=duration_s, target_violation=target_violation,
        seed=seed, replications=replications, statistic=statistic, threads=threads,
    )  # fmt: skip


def jellyfish_rule(
    profile: Profile,
    models: Sequence[str],
    *,
    slo_ms: float,
    load_qps: float,
    workers: int,
    headroom: float = 1.05,
    hardware: str = HARDWARE,
    statistic: str = "p95",
) -> tuple[str, int]:
    """(model, largest batch) Jellyfish+ serves with at ``load_qps`` over ``workers`` workers."""
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers={workers!r} must be an integer >= 1")
    return _core.ramsis.adaptive_batch_rule(
        profile, hardware, list(models), slo_ms=slo_ms, rate_per_worker_qps=load_qps / workers,
        headroom=headroom, statistic=statistic,
    )  # fmt: skip


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
