"""The profiler: measures an executor over batch sizes (and thread counts) and writes a native
servelab profile, the file the simulator reads::

    p = servelab.profile("torchscript(path='m.pt')", batches=[1, 8, 64], repeats=20, path="m.json")
    servelab.simulate(profile=p, workers=[{"hardware": "cpu", "count": 2}], ...)

Every (thread count, batch size) cell runs ``warmup`` untimed batches, then ``repeats`` timed ones,
each with fresh query ids (fresh inputs), in C++ with the GIL released; Ctrl-C stops it between
batches with a KeyboardInterrupt. The samples of each cell become one latency entry
(``samples_ms``) of the profile.

Co-located measurements (:func:`profile_colocated`) run sets of executors side by side, each on
its own thread (optionally pinned), and :func:`fit_interference` turns them into the simulator's
``measured`` interference model::

    m = servelab.profile_colocated({"a": "recsys(model='ncf')", "b": "recsys(model='din')"},
                                   sets=[["a"], ["b"], ["a", "b"], ["a", "a"]], cores=[[0], [1]])
    fit = servelab.fit_interference(m)    # fit.spec: "measured(table='a:b=1.31; ...', ...)"
    servelab.simulate(scenario, interference=fit.spec)
"""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import profiles
from .executors import make_executor
from .textio import output_file

__all__ = [
    "ColocatedRuns",
    "InterferenceFit",
    "fit_interference",
    "profile",
    "profile_colocated",
    "profile_from_run",
]

# What a sample is: run()'s wall time, as the serving loop sees a batch (inputs made and the
# model run), or the executor's own measure (the model alone, when it reports one).
MEASURES = ("wall", "exec")
# The knob a thread sweep sets (ClusterView config / set_config).
THREADS_KNOB = "intra_op_threads"
# What this process holds per query of a timed batch besides the executor's own memory: the
# Python list of sizes and its C++ copy.
_SIZES_BYTES_PER_QUERY = 8 + 4


def _positive_ints(name: str, values: Any) -> list[int]:
    if isinstance(values, int) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name}={values!r} must be a non-empty list of positive integers")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}[{i}]={v!r} must be a positive integer")
    if len(set(values)) != len(values):
        raise ValueError(f"{name}={list(values)!r} repeats a value")
    return list(values)


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} must be an integer >= {minimum}")
    return value


def profile(
    executor: Any,
    batches: Sequence[int] = (1, 2, 4, 8, 16, 32),
    *,
    threads: Sequence[int] | None = None,
    repeats: int = 10,
    warmup: int = 2,
    hardware: str = "cpu",
    model: str | None = None,
    price_per_hour: float = 0.0,
    measure: str = "wall",
    seed: int = 0,
    path: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> profiles.Profile:
    """Measures ``executor`` (a spec, dict or :func:`servelab.make_executor` result) and returns
    a :class:`servelab.profiles.Profile` with one latency entry per batch size.

    - ``batches``: batch sizes (queries of one item each).
    - ``threads``: intra-op thread counts to sweep (the executor's ``intra_op_threads`` knob); each
      count becomes a hardware type ``"<hardware>-t<n>"`` when there are several.
    - ``repeats`` timed and ``warmup`` untimed batches per cell; ``measure``: ``"wall"`` (run()'s
      wall time, what a serving run's service time is) or ``"exec"`` (the executor's own measure).
    - ``hardware`` and ``model`` (default: the executor's name) name the profile's entries;
      ``price_per_hour`` ($/h, 0 by default) is the hardware's price, which runs need;
      ``path`` also saves the profile (native JSON); ``progress`` shows a tqdm bar.
    """
    batches = _positive_ints("batches", batches)
    thread_counts: list[int | None] = (
        [None] if threads is None else list(_positive_ints("threads", threads))
    )
    repeats = _count("repeats", repeats, 1)
    warmup = _count("warmup", warmup, 0)
    if measure not in MEASURES:
        raise ValueError(f"measure={measure!r} must be one of {', '.join(MEASURES)}")
    if not isinstance(hardware, str) or not hardware:
        raise ValueError(f"hardware={hardware!r} must be a non-empty name")
    if model is not None and (not isinstance(model, str) or not model):
        raise ValueError(f"model={model!r} must be a non-empty name (None: the executor's name)")
    # Before measuring: a path that cannot be written would lose the measurement.
    out = None if path is None else output_file(path, field="path")
    if (
        isinstance(price_per_hour, bool)
        or not isinstance(price_per_hour, int | float)
        or not (math.isfinite(price_per_hour) and price_per_hour >= 0)
    ):
        raise ValueError(f"price_per_hour={price_per_hour!r} must be a finite number >= 0")
    builder = make_executor(executor)
    name = builder.describe().split("(", 1)[0]
    model = model or name
    session = builder.open(seed=seed)
    for i, b in enumerate(batches):  # before the first batch is made
        session.check_batch_memory(
            b, caller_bytes=_SIZES_BYTES_PER_QUERY, given=f"batches[{i}]={b}", field="batches"
        )
    if threads is not None and THREADS_KNOB not in session.knobs():
        raise ValueError(
            f"threads={list(threads)!r}: executor {builder.describe()} has no "
            f"{THREADS_KNOB!r} knob "
            f"(its knobs: {', '.join(session.knobs()) or 'none'})"
        )

    from tqdm.auto import tqdm  # here, not at import: keeps `import servelab` and the CLI fast

    entries = []
    hardware_names = []
    with tqdm(
        total=len(batches) * len(thread_counts), desc=f"profile {name}", disable=not progress
    ) as bar:
        for t in thread_counts:
            hw = hardware if t is None or len(thread_counts) == 1 else f"{hardware}-t{t}"
            hardware_names.append(hw)
            config = {} if t is None else {THREADS_KNOB: t}
            for b in batches:
                timed = session.time_batches([1] * b, repeats=repeats, warmup=warmup, config=config)
                samples = timed[f"{measure}_ns"]
                # A sample of 0 ns (an executor faster than the clock) is not a valid latency.
                entries.append(
                    {
                        "hardware": hw,
                        "model": model,
                        "batch": b,
                        "samples_ms": [max(int(ns), 1) / 1e6 for ns in samples],
                    }
                )
                bar.update(1)
    hw_info = {"price_per_hour": float(price_per_hour)}
    machine = platform.node() or "this machine"
    result = profiles.Profile.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "source": f"servelab.profile({builder.describe()}) on {machine}",
            "description": f"{measure} time per batch, {repeats} repeats after {warmup} warm-ups",
            "hardware": {hw: dict(hw_info) for hw in hardware_names},
            "models": {model: {}},
            "latency": entries,
        }
    )
    if out is not None:
        profiles.save(result, out)
    return result


def profile_from_run(
    result: Any,
    base: profiles.Profile | None = None,
    *,
    min_samples: int = 5,
    service_ns: Any = None,
) -> profiles.Profile:
    """A profile whose latencies are the service times a serving run measured (``finish - start``
    of each completed batch, one sample per batch), keyed by the worker's hardware, the model and
    the batch's items: profiling *at the load* the run had, where a back-to-back profile misses
    how caches, clocks and the operating system treat a worker that idles between batches.

    ``base`` (optional) supplies everything else: prices, accuracies, memory, and the latency of
    every (hardware, model, batch) the run saw fewer than ``min_samples`` times; without it,
    hardware prices are 0 and only the run's batches are profiled. ``service_ns`` (optional):
    the batches' times to use instead, one per row of ``result.batches()`` (``servelab.calibrate``
    passes them with the co-runners' slowdown taken out).
    """
    import numpy as np

    min_samples = _count("min_samples", min_samples, 1)
    if getattr(result, "meta", {}).get("world") != "serve":
        raise ValueError(
            f"result={result!r} is not a serving run (meta['world'] is "
            f"{getattr(result, 'meta', {}).get('world')!r}): its service times were not measured"
        )
    batches = result.batches()
    times = (batches["finish_ns"] - batches["start_ns"]).to_numpy()
    if service_ns is not None:
        times = np.asarray(service_ns)
        if times.shape != (len(batches),):
            raise ValueError(
                f"service_ns has shape {times.shape}: it needs one time per batch ({len(batches)})"
            )
    hw_of_worker = result.workers["hardware"]
    keys = zip(
        hw_of_worker[batches["worker"].to_numpy()].tolist(),
        batches["model"].tolist(),
        batches["items"].tolist(),
        times.tolist(),
        strict=True,
    )
    samples: dict[tuple[str, str, int], list[float]] = {}
    for hw, model, items, ns in keys:
        key = (result.meta["hardware"][hw], result.meta["models"][model], int(items))
        samples.setdefault(key, []).append(max(int(round(ns)), 1) / 1e6)
    measured = {k: v for k, v in samples.items() if len(v) >= min_samples}
    if not measured:
        raise ValueError(
            f"the run has no (hardware, model, batch) with min_samples={min_samples} completed "
            f"batches ({sum(len(v) for v in samples.values())} batches in all)"
        )
    data = (
        profiles.to_dict(base)
        if base is not None
        else {"format": profiles.FORMAT, "version": 1, "hardware": {}, "models": {}, "latency": []}
    )
    data["latency"] = [
        e for e in data["latency"] if (e["hardware"], e["model"], int(e["batch"])) not in measured
    ]
    for (hw, model, items), ms in sorted(measured.items()):
        data["hardware"].setdefault(hw, {"price_per_hour": 0.0})
        data["models"].setdefault(model, {})
        data["latency"].append({"hardware": hw, "model": model, "batch": items, "samples_ms": ms})
    data["description"] = f"service times measured in a serving run ({len(batches)} batches)"
    return profiles.Profile.from_dict(data)


# ---- co-located measurements ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ColocatedRuns:
    """What :func:`profile_colocated` measured: one row per member of each set.

    ``rows``: dicts with ``set`` (the set's index), ``models`` (the set, as given), ``member``
    (its index in the set), ``model``, ``co_runners`` (the other members' models, sorted),
    ``samples_ms`` (each batch's wall time, for the batches that ended while every other member
    still ran), ``median_ms`` and ``pace_ms``: the wall time of the call that ran them, per
    batch. The pace is what a busy instance's throughput sees: where threads share a core, the
    kernel time-slices them, and a batch shorter than a slice mostly runs whole while the waits
    land in a few batches, which a median leaves out (see docs/colocation.md).
    ``meta``: the parameters, the executors' specs and the host's load average (1, 5, 15 min)
    when the measurement started and ended.
    """

    rows: tuple[dict[str, Any], ...]
    meta: dict[str, Any]

    def alone_ms(self, statistic: str = "pace") -> dict[str, float]:
        """Each model's time per batch measured alone (sets of one member): its ``pace_ms``
        (``statistic="pace"``) or ``median_ms`` (``"median"``); the mean where it was measured
        alone more than once."""
        key = _statistic_key(statistic)
        runs: dict[str, list[float]] = {}
        for r in self.rows:
            if not r["co_runners"]:
                runs.setdefault(r["model"], []).append(r[key])
        return {m: sum(v) / len(v) for m, v in runs.items()}

    def slowdowns(self, statistic: str = "pace") -> dict[tuple[str, tuple[str, ...]], float]:
        """(model, sorted co-runner models) -> time per batch beside them / time alone, one
        entry per distinct pair (the mean over the members with that model and co-runners, e.g.
        the three instances of a set of three alike). ValueError naming the model when it was
        never measured alone. ``statistic``: ``"pace"`` (time per batch over the run, waits
        between batches included: what throughput sees) or ``"median"`` (the median batch's
        wall time)."""
        key = _statistic_key(statistic)
        alone = self.alone_ms(statistic)
        medians: dict[tuple[str, tuple[str, ...]], list[float]] = {}
        for r in self.rows:
            if r["co_runners"]:
                medians.setdefault((r["model"], tuple(r["co_runners"])), []).append(r[key])
        out = {}
        for (model, co), values in medians.items():
            if model not in alone:
                raise ValueError(
                    f"model {model!r} ran beside {list(co)} but was never measured alone: add "
                    f"[{model!r}] to sets"
                )
            # The members' medians averaged: a member that runs faster (it has a core to
            # itself, say) takes more samples, and pooling them would lean towards it.
            out[(model, co)] = sum(values) / len(values) / alone[model]
        return out


@dataclasses.dataclass(frozen=True)
class InterferenceFit:
    """The ``measured`` interference model fitted from co-located runs: ``table`` maps
    (model, co-runner models) to a slowdown, ``otherwise`` is the slowdown per co-runner (minus
    1) for a pair the table lacks, ``spec`` the model's spec string."""

    table: dict[tuple[str, tuple[str, ...]], float]
    otherwise: float
    spec: str

    def model(self) -> Any:
        """The interference model (``servelab.make_interference_model(self.spec)``)."""
        from . import _core

        return _core.make_interference_model(self.spec)


def _statistic_key(statistic: str) -> str:
    if statistic not in ("pace", "median"):
        raise ValueError(f"statistic={statistic!r} must be 'pace' or 'median'")
    return f"{statistic}_ms"


def fit_interference(
    runs: ColocatedRuns,
    *,
    otherwise: float | None = None,
    statistic: str = "pace",
    digits: int = 3,
) -> InterferenceFit:
    """The ``measured`` interference model from :func:`profile_colocated`'s runs: one table
    entry per (model, co-runner set) measured, its time per batch beside them over its time
    alone (``statistic``: ``"pace"``, the default, or ``"median"``, see
    :meth:`ColocatedRuns.slowdowns`; rounded to ``digits``). A slowdown measured below 1 (noise,
    or a co-runner that warms a shared cache) is kept as measured.

    ``otherwise`` (the slowdown per co-runner, minus 1, for a pair the table lacks): default the
    mean of the measured pairs' ``slowdown - 1`` (single co-runners), at least 0.
    """
    if not isinstance(runs, ColocatedRuns):
        raise TypeError(f"runs={runs!r} must be what servelab.profile_colocated returned")
    digits = _count("digits", digits, 1)
    table = {key: round(value, digits) for key, value in sorted(runs.slowdowns(statistic).items())}
    if not table:
        raise ValueError(
            "the runs have no set of two or more members: measure models beside each other "
            "(sets such as ['a', 'b'])"
        )
    if otherwise is None:
        pairs = [v - 1.0 for (_, co), v in table.items() if len(co) == 1]
        otherwise = max(0.0, sum(pairs) / len(pairs)) if pairs else 0.0
    if (
        isinstance(otherwise, bool)
        or not isinstance(otherwise, int | float)
        or not (math.isfinite(otherwise) and otherwise >= 0)
    ):
        raise ValueError(f"otherwise={otherwise!r} must be a finite number >= 0")
    otherwise = round(float(otherwise), digits)
    entries = "; ".join(f"{m}:{'+'.join(co)}={v:g}" for (m, co), v in table.items())
    spec = f"measured(table='{entries}', otherwise={otherwise:g})"
    return InterferenceFit(table, otherwise, spec)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not every system reports one
        return None


def _model_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not name or any(ch in name for ch in ":+=;'"):
        raise ValueError(
            f"{where}={name!r} must be a non-empty model name without ':', '+', '=', ';' or quotes "
            "(the measured table's syntax)"
        )
    return name


def _default_sets(models: Sequence[str]) -> list[list[str]]:
    """Each model alone, each pair (a model beside itself included) and, with three or more
    models, all of them together."""
    sets = [[m] for m in models]
    sets += [[a, b] for i, a in enumerate(models) for b in models[i:]]
    if len(models) > 2:
        sets.append(list(models))
    return sets


def profile_colocated(
    executors: Mapping[str, Any],
    sets: Sequence[Sequence[str]] | None = None,
    *,
    batch: int = 8,
    repeats: int = 20,
    warmup: int = 3,
    cores: Sequence[Sequence[int]] | None = None,
    config: Mapping[str, Mapping[str, int]] | None = None,
    seed: int = 0,
    progress: bool = False,
) -> ColocatedRuns:
    """Measures co-located executors: for each set (model names from ``executors``, a model
    repeated for several instances of it), one instance per member, each on its own thread, all
    running batches of ``batch`` one-item queries back to back; each member's batches count while
    every other member is still running (``repeats`` at least per member, after ``warmup``
    untimed ones each). Sets of one member measure a model alone, which the slowdowns divide by.

    - ``executors``: model name -> executor (a spec, dict or :func:`servelab.make_executor`
      result); the names become the profile's and the ``measured`` table's model names.
    - ``sets``: default each model alone, every pair (a model beside itself too) and, with three
      or more models, all together.
    - ``cores``: pin member ``i`` of a set to ``cores[i % len(cores)]`` (a list of host cores;
      None: unpinned); ``config``: per model, the executor's knobs (e.g. ``intra_op_threads``).

    Each member gets a fresh executor (its own weights and state, as a served instance has).
    Executors written in Python hold the GIL while they run, so their co-runners measure the
    GIL as well as the machine. The batches run in C++ with the GIL released; Ctrl-C stops the
    measurement between batches.
    """
    from . import pinning
    from .executors import make_executor as _make

    if not isinstance(executors, Mapping) or not executors:
        raise ValueError(f"executors={executors!r} must map model names to executors")
    builders = {_model_name(k, "executors key"): _make(v) for k, v in executors.items()}
    names = list(builders)
    if sets is None:
        sets = _default_sets(names)
    if isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence) or not sets:
        raise ValueError(f"sets={sets!r} must be a non-empty list of lists of model names")
    checked_sets: list[list[str]] = []
    for i, members in enumerate(sets):
        if isinstance(members, (str, bytes)) or not isinstance(members, Sequence) or not members:
            raise ValueError(f"sets[{i}]={members!r} must be a non-empty list of model names")
        for m in members:
            if m not in builders:
                raise ValueError(
                    f"sets[{i}]={list(members)!r}: {m!r} is not in executors ({names})"
                )
        checked_sets.append(list(members))
    batch = _count("batch", batch, 1)
    repeats = _count("repeats", repeats, 1)
    warmup = _count("warmup", warmup, 0)
    pins: list[list[int]] | None = None
    if cores is not None:
        if isinstance(cores, (str, bytes)) or not isinstance(cores, Sequence) or not cores:
            raise ValueError(f"cores={cores!r} must be a list of core lists, one per member slot")
        pins = [pinning.check_cores(f"cores[{i}]", list(c)) for i, c in enumerate(cores)]
    knobs: dict[str, dict[str, int]] = {m: {} for m in names}
    for m, k in (config or {}).items():
        if m not in builders:
            raise ValueError(f"config key {m!r} is not in executors ({names})")
        knobs[m] = {str(key): int(v) for key, v in dict(k).items()}

    from tqdm.auto import tqdm  # here, not at import: keeps `import servelab` and the CLI fast

    load_before = _load_average()
    rows: list[dict[str, Any]] = []
    with tqdm(total=len(checked_sets), desc="co-located sets", disable=not progress) as bar:
        for s_index, members in enumerate(checked_sets):
            sessions = [
                builders[m].open(worker=k, seed=seed + 1000 * s_index + k)
                for k, m in enumerate(members)
            ]
            for session in sessions:
                session.check_batch_memory(
                    batch,
                    caller_bytes=_SIZES_BYTES_PER_QUERY,
                    given=f"batch={batch}",
                    field="batch",
                )
            samples, paces = _run_together(
                sessions,
                [knobs[m] for m in members],
                batch=batch,
                repeats=repeats,
                warmup=warmup,
                pins=None if pins is None else [pins[k % len(pins)] for k in range(len(members))],
            )
            for k, m in enumerate(members):
                co = sorted(members[:k] + members[k + 1 :])
                ms = [max(int(ns), 1) / 1e6 for ns in samples[k]]
                rows.append(
                    {
                        "set": s_index,
                        "models": tuple(members),
                        "member": k,
                        "model": m,
                        "co_runners": tuple(co),
                        "samples_ms": ms,
                        "median_ms": _median(ms),
                        "pace_ms": paces[k] / 1e6,
                    }
                )
            bar.update(1)
    meta = {
        "executors": {m: b.describe() for m, b in builders.items()},
        "batch": batch,
        "repeats": repeats,
        "warmup": warmup,
        "cores": pins,
        "config": knobs,
        "host": platform.node() or "this machine",
        "load_average_before": load_before,
        "load_average_after": _load_average(),
    }
    return ColocatedRuns(tuple(rows), meta)


def concurrent_batch_ms(
    sessions: list[Any], sizes: list[int], config: dict[str, int], repeats: int, warmup: int
) -> np.ndarray:
    """Every executor session (``ExecutorBuilder.open()``) times ``repeats`` batches of ``sizes``
    at once, each in its own thread; all their samples, ms. RRL and Hera fit their CPU models to
    these."""
    barrier = threading.Barrier(len(sessions))
    out: list[Any] = [None] * len(sessions)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            out[i] = sessions[i].time_batches(sizes, repeats=repeats, warmup=warmup, config=config)
        except BaseException as e:  # re-raised in the caller's thread below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sessions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return np.concatenate([np.asarray(o["wall_ns"], dtype=float) for o in out]) / 1e6


def _run_together(
    sessions: list[Any],
    configs: list[dict[str, int]],
    *,
    batch: int,
    repeats: int,
    warmup: int,
    pins: list[list[int]] | None,
) -> tuple[list[list[int]], list[float]]:
    """Runs every session on a thread of its own: each runs ``repeats`` batches back to back in
    one C++ call (the GIL released, no gap between batches), then more such calls until every
    member has finished its first, so each member's first call ran beside all the others.
    Returns each member's batch times (ns) in that call and its pace (the call's wall time per
    batch)."""
    n = len(sessions)
    sizes = [1] * batch
    ready = threading.Barrier(n + 1)
    stop = threading.Event()
    finished = threading.Semaphore(0)
    first: list[tuple[list[int], float] | None] = [None] * n
    errors: list[BaseException | None] = [None] * n

    def member(k: int) -> None:
        try:
            if pins is not None:
                os.sched_setaffinity(0, set(pins[k]))  # this thread only
            if warmup:
                sessions[k].time_batches(sizes, repeats=warmup, config=configs[k])
        except BaseException as e:  # handed to the caller after the barrier
            errors[k] = e
        try:
            ready.wait()
        except threading.BrokenBarrierError:
            return
        try:
            while errors[k] is None and not stop.is_set():
                began = time.perf_counter_ns()
                out = sessions[k].time_batches(sizes, repeats=repeats, config=configs[k])
                if first[k] is None:
                    pace = (time.perf_counter_ns() - began) / repeats
                    first[k] = ([int(ns) for ns in out["wall_ns"]], pace)
                    finished.release()
        except BaseException as e:
            errors[k] = e
        finally:
            if first[k] is None:
                finished.release()  # failed before its first call ended: do not wait for it

    threads = [threading.Thread(target=member, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    try:
        ready.wait()
        for _ in range(n):
            while not finished.acquire(timeout=0.05):  # wakes for Ctrl-C
                pass
    finally:
        stop.set()
        ready.abort()
        for t in threads:
            t.join()
    for e in errors:
        if e is not None:
            raise e
    return [f[0] for f in first], [f[1] for f in first]  # type: ignore[index]
