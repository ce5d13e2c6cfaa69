"""Running a scenario in either world: ``simulate`` (virtual time) and ``serve`` (wall clock).

Both take the same arguments and return the same :class:`~servelab.results.Result`, so
"simulated vs measured" is ``sim.compare(real)``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Mapping
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from . import _core, _progress
from .executors import ExecutorBuilder, make_executor, query_inputs, spec_string
from .pinning import core_plan, machine_core_plan
from .results import Result
from .scenario import Scenario, load_scenario
from .worker_process import remote_pinning


def _scenario(scenario: Any, overrides: dict[str, Any]) -> Scenario:
    if scenario is None:
        base: dict[str, Any] = {}
    elif isinstance(scenario, Scenario):
        base = dict(vars(scenario))
    elif isinstance(scenario, str | Path | Mapping):
        base = dict(vars(load_scenario(scenario)))
    else:
        raise TypeError(f"scenario={scenario!r} must be a Scenario, dict, path or built-in name")
    base.update({k: v for k, v in overrides.items() if v is not None})
    base = {k: v for k, v in base.items() if not (k in ("name", "description") and not v)}
    return Scenario.from_dict(base)


def _executors(sc: Scenario, default: Any) -> list[ExecutorBuilder | None] | None:
    """One executor per worker group (None: emulated): the group's own ``executor`` key, else
    ``default``. Each distinct spec is built once (a model file is loaded once)."""
    specs = [w.get("executor", default) for w in sc.workers]
    if all(s is None for s in specs):
        return None
    built: dict[str, ExecutorBuilder] = {}
    out: list[ExecutorBuilder | None] = []
    for i, spec in enumerate(specs):
        if spec is None or isinstance(spec, ExecutorBuilder):
            out.append(spec)
            continue
        text = spec_string(spec, f"workers[{i}].executor")
        if text not in built:
            built[text] = make_executor(text)
        out.append(built[text])
    return out


def _batch_timeout_ms(value: Any) -> float:
    """``batch_timeout_ms`` checked: a finite number of milliseconds > 0."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(
            f"batch_timeout_ms={value!r} must be a number of milliseconds (None: no timeout)"
        )
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"batch_timeout_ms={value!r} must be > 0 and finite (None: no timeout)")
    return float(value)


def _llc_options(world: str, llc: Any, llc_root: Any) -> dict[str, str]:
    """``llc`` / ``llc_root`` checked, as serve_run's keyword arguments ({}: off)."""
    if llc is None and llc_root is None:
        return {}
    if world != "serve":
        raise ValueError("llc= is for servelab.serve; the simulator has no cache to partition")
    if llc is None:
        raise ValueError(f"llc_root={llc_root!r} needs llc='resctrl'")
    if llc != "resctrl":
        raise ValueError(f"llc={llc!r} must be 'resctrl' (None: LLC ways are not applied)")
    out = {"llc": llc}
    if llc_root is not None:
        if not isinstance(llc_root, str | os.PathLike) or not os.fspath(llc_root):
            raise ValueError(
                f"llc_root={llc_root!r} must be a folder path (default /sys/fs/resctrl)"
            )
        out["llc_root"] = os.fspath(llc_root)
    return out


def _serving_progress(
    world: str, progress: bool | None, workload: _core.Workload, seed: int
) -> contextlib.AbstractContextManager[None]:
    """A bar of the queries that have arrived, while a serving run goes (it takes as long as
    its workload lasts on the wall clock); nothing for a simulation or where nobody watches."""
    if world != "serve" or not _progress.wanted(progress):
        return contextlib.nullcontext()
    arrival_s = np.asarray(workload.generate(seed=seed)["arrival_s"])
    if len(arrival_s) == 0:
        return contextlib.nullcontext()
    last = float(arrival_s[-1])
    return _progress.ticking(
        len(arrival_s),
        lambda elapsed_s: int(np.searchsorted(arrival_s, elapsed_s, side="right")),
        desc=f"serve ({len(arrival_s)} queries over {last:.0f} s)",
        unit="q",
    )


# serve() refuses a workload expected to last longer than this on the wall clock unless told
# otherwise (max_expected_duration_s): a rate typed a billion times too low waits for ever.
DEFAULT_MAX_EXPECTED_DURATION_S = 86_400.0


def _check_expected_duration(workload: _core.Workload, limit: Any) -> None:
    """ValueError naming the arrivals, their rate and the expected duration when the served
    workload is expected to last longer than ``limit`` seconds (None: no limit)."""
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, Real) or not limit > 0:
        raise ValueError(
            f"max_expected_duration_s={limit!r} must be a number of seconds > 0 (None: no limit)"
        )
    queries, rate = workload.expected_queries, workload.mean_rate
    if not (math.isfinite(queries) and math.isfinite(rate) and rate > 0):
        return  # no estimate (an unknown rate): the run lasts what it lasts
    expected_s = queries / rate
    if expected_s > limit:
        arrivals = workload.arrivals.describe() if workload.arrivals is not None else "arrivals"
        raise ValueError(
            f"{arrivals}: {queries:.0f} queries at {rate:g} queries/s would take about "
            f"{expected_s:.3g} s to arrive on the wall clock, more than "
            f"max_expected_duration_s={limit:g}: raise the rate, lower count or horizon_s, or "
            "pass a larger max_expected_duration_s (None: no limit)"
        )


@dataclasses.dataclass
class _Prepared:
    """A run's scenario and the C++ call's arguments, checked: what simulate(), serve() and
    Session share before the world starts."""

    world: str
    sc: Scenario
    args: tuple[Any, ...]  # profile, workers, workload, scheduler
    kwargs: dict[str, Any]
    executors: list[ExecutorBuilder | None] | None
    batch_timeout_ms: float | None
    config_model: Any
    loop_model: Any
    interference: Any
    progress: bool | None


def _run(world: str, scenario: Any, overrides: dict[str, Any]) -> Result:
    prepared = _prepare(world, scenario, overrides)
    run = _core.simulate_run if world == "sim" else _core.serve_run
    sc = prepared.sc
    with _serving_progress(world, prepared.progress, prepared.args[2], sc.seed):
        raw = run(*prepared.args, **prepared.kwargs)
    return _result(raw, prepared)


def _prepare(world: str, scenario: Any, overrides: dict[str, Any]) -> _Prepared:
    """Checks the arguments of a run in `world` ("sim", "serve" or "session": a serving session,
    fed by submissions instead of the workload's arrivals) and builds the C++ call's."""
    session = world == "session"
    if session:
        world = "serve"
        if "inputs" in overrides:
            raise ValueError(
                "inputs= is for servelab.serve; a session's inputs come with each submit()"
            )
        if "max_expected_duration_s" in overrides:
            raise ValueError(
                "max_expected_duration_s= is for servelab.serve; a session lasts until it is closed"
            )
        if "progress" in overrides:
            raise ValueError("progress= is for servelab.serve; a session has no known end")
    executor = overrides.pop("executor", None)
    spin_us = overrides.pop("spin_us", None)
    batch_timeout_ms = overrides.pop("batch_timeout_ms", None)
    llc = _llc_options(world, overrides.pop("llc", None), overrides.pop("llc_root", None))
    config_model = overrides.pop("config_model", None)
    if config_model is not None and world != "sim":
        raise ValueError(
            f"config_model={config_model!r} is for servelab.simulate; "
            "real executors read their knobs themselves"
        )
    loop_model = overrides.pop("loop_model", None)
    if loop_model is not None and world != "sim":
        raise ValueError(
            f"loop_model={loop_model!r} is for servelab.simulate; the serving loop has its own"
        )
    inputs = overrides.pop("inputs", None)
    if world != "serve" and "max_expected_duration_s" in overrides:
        raise ValueError(
            "max_expected_duration_s= is for servelab.serve; a simulation takes no wall-clock time"
        )
    max_expected_s = overrides.pop("max_expected_duration_s", DEFAULT_MAX_EXPECTED_DURATION_S)
    progress = overrides.pop("progress", None)
    if progress is not None and world != "serve":
        raise ValueError("progress= is for servelab.serve; a simulation takes no wall-clock time")
    if executor is not None and world != "serve":
        raise ValueError("executor= is for servelab.serve; the simulator waits profiled latencies")
    if spin_us is not None and world != "serve":
        raise ValueError("spin_us= is for servelab.serve; the simulator has no wall clock")
    if batch_timeout_ms is not None:
        if world != "serve":
            raise ValueError(
                "batch_timeout_ms= is for servelab.serve; simulated batches always return"
            )
        batch_timeout_ms = _batch_timeout_ms(batch_timeout_ms)
    if inputs is not None and world != "serve":
        raise ValueError("inputs= is for servelab.serve; the simulator runs no model")
    sc = _scenario(scenario, overrides)
    if world == "serve" and not session:  # before any executor loads a model
        _check_expected_duration(sc.build_workload(), max_expected_s)
    kwargs: dict[str, Any] = {}
    if sc.records != "all":
        if world != "sim":
            raise ValueError(
                f"records={sc.records!r}: the serving loop keeps every record; "
                "streamed summaries are for servelab.simulate"
            )
        kwargs["records"] = sc.records
    executors = _executors(sc, executor) if world == "serve" else None
    if executors is not None:
        kwargs["executors"] = executors
    if spin_us is not None:
        kwargs["spin_us"] = float(spin_us)
    if batch_timeout_ms is not None:
        kwargs["batch_timeout_ms"] = batch_timeout_ms
    kwargs.update(llc)
    cores = core_plan(sc.workers) if world == "serve" else None  # the simulator ignores pinning
    if cores is not None:
        kwargs["cores"] = cores
    if config_model is not None:  # a spec string or make_config_model's result
        kwargs["config_model"] = (
            _core.make_config_model(config_model) if isinstance(config_model, str) else config_model
        )
    if loop_model is not None:  # a spec string, make_loop_model's result or a Calibration
        loop_model = getattr(loop_model, "loop_model", loop_model)
        kwargs["loop_model"] = (
            _core.make_loop_model(loop_model) if isinstance(loop_model, str) else loop_model
        )
    if inputs is not None:
        kwargs["inputs"] = query_inputs(inputs, executors, sc.workers, sc.workload.get("count"))
    if sc.machines:
        kwargs["machines"] = sc.build_machines()
        machine_cores = machine_core_plan(sc.machines, sc.workers) if world == "serve" else None
        if machine_cores is not None:  # the simulator ignores the host's cores
            kwargs["machine_cores"] = machine_cores
    interference = sc.build_interference() if world == "sim" else None  # served: the real one
    if interference is not None:
        kwargs["interference"] = interference
    kwargs.update(
        seed=sc.seed,
        decision_statistic=sc.decision_statistic,
        service=sc.service,
        drain_s=float(sc.drain_s),
    )
    args = (sc.build_profile(), sc.build_workers(), sc.build_workload(), sc.build_scheduler())
    return _Prepared(
        world,
        sc,
        args,
        kwargs,
        executors,
        batch_timeout_ms,
        config_model,
        loop_model,
        interference,
        progress,
    )


def _result(raw: dict[str, Any], prepared: _Prepared) -> Result:
    """The C++ run's dict as a Result, with the scenario and the run's choices in its meta."""
    sc, kwargs, executors = prepared.sc, prepared.kwargs, prepared.executors
    batch_timeout_ms, config_model = prepared.batch_timeout_ms, prepared.config_model
    loop_model, interference = prepared.loop_model, prepared.interference
    raw["meta"]["scenario"] = sc.to_dict()
    if batch_timeout_ms is not None:
        raw["meta"]["batch_timeout_ms"] = batch_timeout_ms
    if config_model is not None:
        raw["meta"]["config_model"] = kwargs["config_model"].describe()
    if loop_model is not None:
        raw["meta"]["loop_model"] = kwargs["loop_model"].describe()
    if interference is not None:
        raw["meta"]["interference"] = interference.describe()
    if executors is not None:  # the executors as specs, so the scenario replays the run
        for group, built in zip(raw["meta"]["scenario"]["workers"], executors, strict=True):
            if built is not None:
                group["executor"] = built.describe()
        raw["meta"]["executors"] = [b.describe() if b else "emulated" for b in executors]
        # a remote group's worker process pinned by LocalWorkers: what it applied
        counts = [int(w.get("count", 1)) for w in sc.workers]
        remote = remote_pinning(raw["meta"]["executors"], counts)
        if remote:
            raw["meta"]["pinning"] = [*raw["meta"].get("pinning", []), *remote]
    return Result(raw["columns"], raw["workers"], raw["meta"], streamed=raw.get("streamed"))


def simulate(scenario: Any = None, **overrides: Any) -> Result:
    """Runs the discrete-event simulator.

    ``scenario`` is a dict, a YAML/JSON path, a built-in name (``builtin_scenarios()``) or a
    Scenario; keyword arguments (profile, workers, workload, scheduler, seed, decision_statistic,
    service, drain_s, records) override its keys, or make the whole scenario::

        r = servelab.simulate("default", scheduler="jsq", seed=3)
        r.summary()["latency_ms"]["p99"]

    ``config_model`` (a spec such as ``"rrl_cpu(cores=2)"``, see ``servelab.list_config_models()``)
    scales each service time by the worker's ``set_config`` knobs at the batch's start; without it
    service times are the profile's (``meta["config_model"]`` records the one used).

    ``loop_model`` (a spec such as ``"fixed_loop(wake_us=40, notice_us=20)"``, see
    ``servelab.list_loop_models()``, or what ``servelab.calibrate`` fitted from a served run) adds
    the serving loop's own delays: each batch starts a drawn wake-up after its dispatch, its
    worker is free to the scheduler a drawn notice delay after it ends, each arrival reaches the
    scheduler a drawn delay after its time (``meta["loop_model"]`` records the one used).

    ``machines`` and ``interference`` (scenario keys, or keywords here): worker groups with
    ``machine: <name>`` put ``count`` co-located instances on each machine of that group, and
    the interference model (a spec such as ``"per_corunner(slowdown=0.2)"``, see
    ``servelab.list_interference_models()``) says how instances running at once on one machine
    slow each other down: each batch is re-timed whenever its machine's running set or partition
    changes (``meta["interference"]`` records the one used). ``servelab.serve`` places the
    instances alike and the real machine does the interfering.

    ``records="all"`` (default) keeps every query's record. ``records="none"`` keeps none: the
    summary, per-app metrics and a time series of 1 s windows are computed online, in memory
    that does not grow with the number of queries (percentiles within 0.5% relative error;
    ``r.streamed`` says which metrics are approximate). ``records="sample(p)"`` does the same and
    also keeps the full records of a seeded Bernoulli sample of the queries (``r.columns``).

    ``profile`` and ``scheduler`` may also be live objects (a Profile, a Scheduler instance or
    subclass). A scheduler keeps per-run state: give each run a fresh one.
    """
    return _run("sim", scenario, overrides)


def serve(
    scenario: Any = None,
    *,
    executor: Any = None,
    spin_us: float | None = None,
    inputs: Any = None,
    batch_timeout_ms: float | None = None,
    llc: str | None = None,
    llc_root: str | os.PathLike[str] | None = None,
    max_expected_duration_s: float | None = DEFAULT_MAX_EXPECTED_DURATION_S,
    progress: bool | None = None,
    **overrides: Any,
) -> Result:
    """Runs the same scenario in the real-time serving loop, on the wall clock. Same arguments and
    Result as :func:`simulate`; it takes as long as the workload lasts.

    Each worker group runs its batches on its ``executor`` (a key of the group in the scenario);
    ``executor=`` here is the one for groups without their own. Without either, batches run on
    ``emulated`` executors that wait the profiled latency. An executor is a spec string
    (``"torchscript(path='m.pt', intra_op=1)"``), a dict, or :func:`servelab.make_executor`'s
    result; see ``servelab.list_executors()``::

        r = servelab.serve("default", executor="torchscript(path='model.pt')", scheduler="jsq")
        r.columns["exec_ns"]   # each query's batch as the executor measured it (-1: not completed)

    A batch whose executor raises ends its queries dropped, with the error as the reason
    (``r.summary()`` counts them); the run goes on with the other batches.

    ``spin_us`` (default 200): how long before each arrival or timer the controller spins instead
    of sleeping, for wake-ups within microseconds; under heavy load that costs a core, so with
    real executors on few cores ``spin_us=0`` leaves them the CPU (wake-ups then run some tens of
    microseconds late).

    ``inputs``: the queries' own inputs instead of the ones executors derive from the seed: a
    numpy array with one row per query (query q takes row q; torchscript repeats it for each of
    the query's items) or a callable ``f(query_id)`` returning the query's input (for torchscript
    a float32 array of shape (width,) or (size, width)). Torchscript and executors written in
    Python (``batch.inputs``) read them; a wrong dtype or width is a ValueError before the run.

    ``batch_timeout_ms`` (default None: no limit): a batch that has not returned this long after
    its dispatch ends its queries dropped, with one reason naming the executor, the worker and the
    timeout; that worker leaves the cluster for the rest of the run (as if the scheduler had
    removed it: its queued queries go back to the central queue) and its thread is abandoned:
    it keeps its executor alive and is
    joined once its batch returns (``r.meta["batch_timeout_ms"]`` records the value). The end of
    the run then waits at most min(batch_timeout_ms, 1000) ms for running batches. See
    docs/reliability.md.

    ``llc="resctrl"`` (default None: off) applies each worker's ``llc_ways`` setting (set by
    ``hera_rmu``, ``parties`` or any scheduler's ``set_config``) to the L3 cache through Linux
    resctrl under ``llc_root`` (default ``/sys/fs/resctrl``): before its next batch, the worker's
    thread joins a group whose schemata give it that many contiguous ways. ``r.meta["llc"]`` is
    ``"unsupported: <reason>"`` where resctrl cannot be used (the run goes on), else the groups,
    masks and ways each worker applied; the run removes its groups at its end. See docs/hera.md.

    ``max_expected_duration_s`` (default one day): a workload expected to take longer than this
    to arrive (its expected queries over its mean rate) is refused with a ValueError naming the
    arrivals, the rate and the expected duration, before anything starts; None: no limit.

    ``progress`` (default None: when standard error is a terminal or in a notebook) shows a bar
    of the queries that have arrived so far, since a run lasts as long as its workload does
    (20,000 queries at 45 queries/s: 7.5 minutes); ``False`` hides it, ``True`` forces it.
    """
    if inputs is not None:
        overrides["inputs"] = inputs
    if executor is not None:
        overrides["executor"] = executor
    if spin_us is not None:
        overrides["spin_us"] = spin_us
    if batch_timeout_ms is not None:
        overrides["batch_timeout_ms"] = batch_timeout_ms
    if llc is not None or llc_root is not None:
        overrides["llc"], overrides["llc_root"] = llc, llc_root
    overrides["max_expected_duration_s"] = max_expected_duration_s
    if progress is not None:
        overrides["progress"] = progress
    return _run("serve", scenario, overrides)
