"""RAMSIS's schedulers: the registered policies ``ramsis``, ``jellyfish`` and ``model_switching``.

Each comes two ways: a spec string for scenarios, ``servelab.simulate`` / ``servelab.serve`` and
the command line (``ramsis_spec``, ``jellyfish_spec``, ``model_switching_spec``), and a scheduler
object (``scheduler``, ``jellyfish``, ``model_switching``). A spec is what a run's
``meta["scenario"]`` records, so a run made from one can be replayed; ``ramsis_spec`` therefore
writes an in-memory policy set to a file named by its content (``cache.stored_file``).

- ramsis: round-robin per-worker EDF queues; at each decision the policy of the load estimated
  over the last ``window_ms`` (or the known ``load_qps``) maps (queue length, earliest slack) to
  (model, batch).
- jellyfish (Jellyfish+) and model_switching (ModelSwitching): one (model, largest batch) per load,
  served from an in-order central queue from which idle workers take the oldest queries. The load
  is known (``load_qps``) or estimated over the last 0.5 s and rounded up to the smallest of
  ``loads``. Their offline steps are in ``baselines.py``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ... import _core
from .cache import stored_file
from .policy import PolicySet, WorkerPolicy, read_policy_text

#: name -> what it is (the registry's doc has the details)
SCHEDULERS = {
    "ramsis": "per-worker MDP policies: (queue length, earliest slack) -> (model, batch)",
    "jellyfish": "Jellyfish+: one (model, largest batch) per load from an in-order central queue",
    "model_switching": "ModelSwitching: per load the most accurate model of a simulated table",
}


def _quoted(name: str, text: str) -> str:
    """A string parameter in the spec grammar's quotes (which have no escapes)."""
    for quote in ("'", '"'):
        if quote not in text:
            return f"{quote}{text}{quote}"
    raise ValueError(f"{name}={text!r} holds both quote characters; a spec cannot name it")


def _number(value: Any) -> str:
    return repr(float(value))  # repr round-trips the double exactly


def _numbers(values: Sequence[float]) -> str:
    return "[" + ", ".join(_number(x) for x in values) + "]"


def policy_file(
    policies: PolicySet | WorkerPolicy | str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The JSON file of a policy (set): a given path, checked (exists, UTF-8, sane nesting: errors
    name it), or the content-addressed file an in-memory one is written to (``cache.py``)."""
    if isinstance(policies, str | os.PathLike):
        read_policy_text(policies)
        return Path(policies).absolute()
    if isinstance(policies, PolicySet | WorkerPolicy):
        return stored_file(policies.to_json(), kind="ramsis-policies", cache_dir=cache_dir)
    raise ValueError(
        f"policies={policies!r} is neither a PolicySet, a WorkerPolicy nor a policy JSON path"
    )


def ramsis_spec(
    policies: PolicySet | WorkerPolicy | str | os.PathLike[str],
    *,
    load_qps: float = 0.0,
    window_ms: float = 500.0,
    cache_dir: str | os.PathLike[str] | None = None,
) -> str:
    """``ramsis(policies='<file>', load_qps=..., window_ms=...)`` for a policy set, a worker policy
    or a policy JSON path (see :func:`policy_file`)."""
    path = _quoted("policies", str(policy_file(policies, cache_dir=cache_dir)))
    return f"ramsis(policies={path}, load_qps={_number(load_qps)}, window_ms={_number(window_ms)})"


def jellyfish_spec(
    *,
    loads: Sequence[float] = (),
    load_qps: float = 0.0,
    slo_ms: float = 0.0,
    window_ms: float = 500.0,
) -> str:
    """``jellyfish(...)``: loads is the grid the estimate is rounded up to (empty: the estimate
    itself); load_qps > 0: a known load; slo_ms = 0: the queries' SLO."""
    return (
        f"jellyfish(loads={_numbers(loads)}, load_qps={_number(load_qps)}, "
        f"slo_ms={_number(slo_ms)}, window_ms={_number(window_ms)})"
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


def model_switching_spec(
    table: Any,
    *,
    load_qps: float = 0.0,
    slo_ms: float = 0.0,
    window_ms: float = 500.0,
) -> str:
    """``model_switching(models='a,b', loads=[...], ...)`` for a table: {load_qps: model name} or
    the result of ``baselines.model_switching_table``."""
    loads, models = _table_pairs(table)
    if len(loads) != len(models):
        raise ValueError(f"table: {len(loads)} loads but {len(models)} models: one model per load")
    if any("," in m for m in models):
        raise ValueError(f"table: model names {models!r} hold a comma; a spec cannot list them")
    return (
        f"model_switching(models={_quoted('models', ','.join(models))}, loads={_numbers(loads)}, "
        f"load_qps={_number(load_qps)}, slo_ms={_number(slo_ms)}, window_ms={_number(window_ms)})"
    )


def scheduler(policies: Any, *, load_qps: float = 0.0, window_ms: float = 500.0) -> _core.Scheduler:
    """The RAMSIS online scheduler object for ``policies`` (a PolicySet, a WorkerPolicy or a policy
    set JSON path). A run with it records ``policies='<PolicySet>'`` unless given a path: use
    :func:`ramsis_spec` for a replayable scenario."""
    if isinstance(policies, str | os.PathLike):
        # The file is checked here (exists, UTF-8, sane nesting) so that its errors name the path;
        # the path itself goes on, so the run's metadata still names the file.
        read_policy_text(policies)
    return _core.ramsis.ramsis_scheduler(policies, load_qps=load_qps, window_ms=window_ms)


def jellyfish(
    *,
    loads: Sequence[float] = (),
    load_qps: float = 0.0,
    slo_ms: float = 0.0,
    window_ms: float = 500.0,
) -> _core.Scheduler:
    """The Jellyfish+ scheduler object (parameters as :func:`jellyfish_spec`)."""
    return _core.ramsis.jellyfish_scheduler(
        loads=[float(x) for x in loads], load_qps=load_qps, slo_ms=slo_ms, window_ms=window_ms
    )


def model_switching(
    table: Any,
    *,
    load_qps: float = 0.0,
    slo_ms: float = 0.0,
    window_ms: float = 500.0,
) -> _core.Scheduler:
    """The ModelSwitching scheduler object (parameters as :func:`model_switching_spec`)."""
    loads, models = _table_pairs(table)
    return _core.ramsis.model_switching_scheduler(
        loads, models, load_qps=load_qps, slo_ms=slo_ms, window_ms=window_ms
    )
